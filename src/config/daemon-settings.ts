import { hostname } from 'node:os';
import { ConfigError } from '../runtime/errors.ts';
import { splitNotifyUrl } from '../notify/format.ts';
import { ordinalFromHostname } from '../core/shard.ts';
import { DAEMON_SETTINGS } from './daemon-table.ts';
import { resolveValues } from './resolve.ts';
import type { ConfigFile } from './settings-table.ts';
import type { FlagsOfTable } from './setting.ts';

export { parseListen } from './parsers.ts';

/** The daemon's flags, as util.parseArgs returns them. */
export type DaemonFlags = FlagsOfTable<typeof DAEMON_SETTINGS>;

/**
 * Settings only `envsync run` reads: every row of daemon-table.ts under its id, typed by its
 * parser, except the rows that only feed `shard` and `notify`, which stand in for them.
 */
export type DaemonSettings = Readonly<ReturnType<typeof resolveDaemonSettings>>;

/** The replica's shard; none without sharding flags. */
function shardSetting(
  count: number | undefined,
  index: number | undefined,
): { readonly index: number; readonly count: number } | undefined {
  if (count === undefined && index === undefined) return undefined;
  if (count === undefined || index === undefined) {
    throw new ConfigError(
      'sharding needs both --shard-count N and --shard-index I (or --shard-from-hostname)',
    );
  }
  if (count < 1 || index >= count) {
    throw new ConfigError(`--shard-index ${index} must be below --shard-count ${count}`);
  }
  return { index, count };
}

/** A StatefulSet pod's ordinal, the shard index of --shard-from-hostname. */
function hostnameOrdinal(name: string): number {
  const index = ordinalFromHostname(name);
  if (index === undefined) {
    throw new ConfigError(
      `--shard-from-hostname: hostname "${name}" does not end in -<ordinal> (as a StatefulSet pod's does)`,
    );
  }
  return index;
}

/** Resolves the daemon's settings: flags > environment > config file > defaults. */
export function resolveDaemonSettings(
  flags: DaemonFlags,
  env: NodeJS.ProcessEnv,
  file: ConfigFile,
  host: () => string = hostname,
  /** The config file's folder: its relative paths start there (the working dir without one). */
  fileDir?: string,
) {
  const {
    shardCount,
    shardIndex,
    shardFromHostname,
    notifyUrls,
    notifyFormat,
    notifySecretFile,
    ...plain
  } = resolveValues(DAEMON_SETTINGS, {
    flags,
    env,
    file,
    ...(fileDir === undefined ? {} : { fileDir }),
  });
  const index = shardFromHostname ? hostnameOrdinal(env['HOSTNAME'] || host()) : shardIndex;
  return {
    ...plain,
    shard: shardSetting(shardCount, index),
    /** Where notifications go (docs/notifications.md); none when `targets` is empty. */
    notify: {
      targets: (notifyUrls ?? []).map((text) => {
        const { url, format } = splitNotifyUrl(text, notifyFormat);
        return { url: new URL(url), format };
      }),
      /** Signs every notification when set (read at start). */
      secretFile: notifySecretFile,
    },
  };
}
