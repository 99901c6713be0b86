import { hostname } from 'node:os';
import { ConfigError } from '../runtime/errors.ts';
import { splitNotifyUrl, type NotifyFormat } from '../core/notify-format.ts';
import { ordinalFromHostname } from '../core/shard.ts';
import { resolveValues } from './resolve.ts';
import { SETTINGS, type ConfigFile } from './settings-table.ts';
import { pickSettings, type FlagsOfTable } from './setting.ts';

export { parseListen } from './parsers.ts';

/** Settings only `envsync run` reads. */
export interface DaemonSettings {
  readonly intervalMs: number;
  readonly debounceMs: number;
  /** Quiet time a file edited in place needs before it is read. */
  readonly settleMs: number;
  /** Least time between passes started by POST /reconcile. */
  readonly webhookMinIntervalMs: number;
  /** Where the webhook's shared secret is (read at start); none when undefined. */
  readonly webhookSecretFile: string | undefined;
  readonly listen: { readonly host: string; readonly port: number };
  readonly shutdownTimeoutMs: number;
  readonly shard: { readonly index: number; readonly count: number } | undefined;
  readonly emulator: boolean;
  /** Where notifications go (docs/notifications.md); none when empty. */
  readonly notify: {
    readonly targets: readonly { readonly url: URL; readonly format: NotifyFormat }[];
    /** Signs every notification when set (read at start). */
    readonly secretFile: string | undefined;
  };
  /** The address people reach the endpoints at, without a trailing slash. */
  readonly publicUrl: string | undefined;
}

/** Read in this order, as the checks below expect: shard count, then index. */
const DAEMON_TABLE = pickSettings(SETTINGS, [
  'shardCount',
  'shardIndex',
  'shardFromHostname',
  'intervalMs',
  'debounceMs',
  'settleMs',
  'webhookMinIntervalMs',
  'webhookSecretFile',
  'listen',
  'shutdownTimeoutMs',
  'emulator',
  'notifyUrls',
  'notifyFormat',
  'notifySecretFile',
  'publicUrl',
]);

/** The daemon's flags, as util.parseArgs returns them. */
export type DaemonFlags = FlagsOfTable<typeof DAEMON_TABLE>;

/** Resolves the daemon's settings: flags > environment > config file > defaults. */
export function resolveDaemonSettings(
  flags: DaemonFlags,
  env: NodeJS.ProcessEnv,
  file: ConfigFile,
  host: () => string = hostname,
  /** The config file's folder: its relative paths start there (the working dir without one). */
  fileDir?: string,
): DaemonSettings {
  const values = resolveValues(DAEMON_TABLE, {
    flags,
    env,
    file,
    ...(fileDir === undefined ? {} : { fileDir }),
  });
  const count = values.shardCount;
  let index = values.shardIndex;
  if (values.shardFromHostname) {
    const name = env['HOSTNAME'] || host();
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
    intervalMs: values.intervalMs,
    debounceMs: values.debounceMs,
    settleMs: values.settleMs,
    webhookMinIntervalMs: values.webhookMinIntervalMs,
    webhookSecretFile: values.webhookSecretFile,
    listen: values.listen,
    shutdownTimeoutMs: values.shutdownTimeoutMs,
    shard,
    emulator: values.emulator,
    notify: {
      targets: (values.notifyUrls ?? []).map((text) => {
        const { url, format } = splitNotifyUrl(text, values.notifyFormat);
        return { url: new URL(url), format };
      }),
      secretFile: values.notifySecretFile,
    },
    publicUrl: values.publicUrl,
  };
}
