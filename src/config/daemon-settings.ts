import { hostname } from 'node:os';
import { ConfigError } from '../errors.ts';
import { ordinalFromHostname } from '../core/shard.ts';
import { parseDuration } from './duration.ts';
import type { ConfigFile } from './settings.ts';

/** Settings only `envsync run` reads (issue 4). */
export interface DaemonSettings {
  readonly intervalMs: number;
  readonly debounceMs: number;
  readonly listen: { readonly host: string; readonly port: number };
  readonly shutdownTimeoutMs: number;
  readonly shard: { readonly index: number; readonly count: number } | undefined;
  readonly emulator: boolean;
}

export interface DaemonFlags {
  interval?: string | undefined;
  debounce?: string | undefined;
  listen?: string | undefined;
  'shutdown-timeout'?: string | undefined;
  'shard-index'?: string | undefined;
  'shard-count'?: string | undefined;
  'shard-from-hostname'?: boolean | undefined;
  emulator?: boolean | undefined;
}

export const DAEMON_FLAG_OPTIONS = {
  interval: { type: 'string' },
  debounce: { type: 'string' },
  listen: { type: 'string' },
  'shutdown-timeout': { type: 'string' },
  'shard-index': { type: 'string' },
  'shard-count': { type: 'string' },
  'shard-from-hostname': { type: 'boolean' },
  emulator: { type: 'boolean' },
} as const;

function duration(name: string, raw: string | number | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = typeof raw === 'number' ? (raw === 0 ? 0 : undefined) : parseDuration(raw);
  if (value === undefined)
    throw new ConfigError(
      `${name}: ${JSON.stringify(raw)} is not a duration (use e.g. 200ms, 30s, 5m)`,
    );
  return value;
}

/** Parses `HOST:PORT` (`[::1]:9464` for IPv6). */
export function parseListen(raw: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(raw.trim());
  const port = Number(match?.[3]);
  if (match === null || port > 65535) {
    throw new ConfigError(
      `--listen: "${raw}" is not HOST:PORT (e.g. 127.0.0.1:9464, 0.0.0.0:9464, [::1]:9464)`,
    );
  }
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

function whole(name: string, raw: string | number | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = typeof raw === 'number' ? raw : /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < 0)
    throw new ConfigError(`${name}: ${JSON.stringify(raw)} must be a whole number`);
  return value;
}

/** Resolves the daemon's settings: flags > environment > config file > defaults. */
export function resolveDaemonSettings(
  flags: DaemonFlags,
  env: NodeJS.ProcessEnv,
  file: ConfigFile,
  host: () => string = hostname,
): DaemonSettings {
  const e = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const count = whole(
    '--shard-count',
    flags['shard-count'] ?? e('ENVSYNC_SHARD_COUNT') ?? file.shardCount,
  );
  let index = whole(
    '--shard-index',
    flags['shard-index'] ?? e('ENVSYNC_SHARD_INDEX') ?? file.shardIndex,
  );
  const fromHostname =
    flags['shard-from-hostname'] ??
    (e('ENVSYNC_SHARD_FROM_HOSTNAME') === 'true' ? true : undefined) ??
    file.shardFromHostname ??
    false;
  if (fromHostname) {
    const name = e('HOSTNAME') ?? host();
    index = ordinalFromHostname(name);
    if (index === undefined) {
      throw new ConfigError(
        `--shard-from-hostname: hostname "${name}" does not end in -<ordinal> (as a StatefulSet pod's does)`,
      );
    }
  }
  let shard: DaemonSettings['shard'];
  if (count !== undefined || index !== undefined) {
    if (count === undefined || index === undefined) {
      throw new ConfigError(
        'sharding needs both --shard-count N and --shard-index I (or --shard-from-hostname)',
      );
    }
    if (count < 1 || index >= count) {
      throw new ConfigError(`--shard-index ${index} must be below --shard-count ${count}`);
    }
    shard = { index, count };
  }
  return {
    intervalMs: duration(
      '--interval',
      flags.interval ?? e('ENVSYNC_INTERVAL') ?? file.interval,
      300_000,
    ),
    debounceMs: duration(
      '--debounce',
      flags.debounce ?? e('ENVSYNC_DEBOUNCE') ?? file.debounce,
      200,
    ),
    listen: parseListen(flags.listen ?? e('ENVSYNC_LISTEN') ?? file.listen ?? '127.0.0.1:9464'),
    shutdownTimeoutMs: duration(
      '--shutdown-timeout',
      flags['shutdown-timeout'] ?? e('ENVSYNC_SHUTDOWN_TIMEOUT') ?? file.shutdownTimeout,
      30_000,
    ),
    shard,
    emulator: flags.emulator ?? false,
  };
}
