/**
 * The settings only `envsync run` takes: the periodic resync, file events, the endpoints, shutdown,
 * notifications, sharding and the embedded emulator; and how they are resolved into the
 * DaemonSettings the daemon reads. Their config file keys are the config file's, beside the
 * shared ones (settings.ts).
 */
import { hostname } from 'node:os';
import { ordinalFromHostname } from '../core/shard.ts';
import { NOTIFY_FORMATS, splitNotifyUrl } from '../notify/format.ts';
import { ConfigError } from '../runtime/errors.ts';
import {
  bool,
  durationOrZeroMs,
  filePath,
  listen,
  notifyUrls,
  oneOf,
  publicUrl,
  whole,
} from './parsers.ts';
import { resolveValues, type ConfigFile, type Flags, type SettingsTable } from './setting.ts';

const RUN = { commands: ['run'], group: 'daemon' } as const;

export const DAEMON_SETTINGS = {
  observe: {
    flag: '--observe',
    env: 'ENVSYNC_OBSERVE',
    file: 'observe',
    ...RUN,
    // sync reads it only to refuse it, pointing to plan.
    tolerated: ['sync'],
    help: 'never write to the API: plan every pass, report drift and pending changes (status page, /status, metrics, drift.detected notifications)',
    parse: bool,
    default: false,
  },
  intervalMs: {
    flag: '--interval DURATION',
    env: 'ENVSYNC_INTERVAL',
    file: 'interval',
    ...RUN,
    help: 'periodic resync (heals drift made by hand), ±10% jitter; 0 turns it off',
    parse: durationOrZeroMs,
    default: '5m',
  },
  debounceMs: {
    flag: '--debounce DURATION',
    env: 'ENVSYNC_DEBOUNCE',
    file: 'debounce',
    ...RUN,
    help: 'quiet time after file events before a pass',
    parse: durationOrZeroMs,
    default: '200ms',
  },
  settleMs: {
    flag: '--settle DURATION',
    env: 'ENVSYNC_SETTLE',
    file: 'settle',
    ...RUN,
    help: 'a file edited in place is read only after it has not changed for this long (a writer may pause between writes; 0 reads at once); a git-sync swap is read at once',
    parse: durationOrZeroMs,
    default: '1500ms',
  },
  webhookMinIntervalMs: {
    flag: '--webhook-min-interval DURATION',
    env: 'ENVSYNC_WEBHOOK_MIN_INTERVAL',
    file: 'webhookMinInterval',
    ...RUN,
    help: 'passes started by POST /reconcile are at least this far apart; posts in between join the next one (0 turns the spacing off)',
    parse: durationOrZeroMs,
    default: '10s',
  },
  webhookSecretFile: {
    flag: '--webhook-secret-file PATH',
    env: 'ENVSYNC_WEBHOOK_SECRET_FILE',
    file: 'webhookSecretFile',
    ...RUN,
    help: "a POST /reconcile from a non-loopback address must carry this secret (Authorization: Bearer, or GitHub's X-Hub-Signature-256)",
    parse: filePath,
  },
  notifyUrls: {
    flag: '--notify-url URL',
    env: 'ENVSYNC_NOTIFY_URLS',
    file: 'notifyUrls',
    ...RUN,
    help: 'POST notifications (an org failed, invalid or recovered, drift healed, ...) here; repeatable; a slack: prefix picks the Slack format (docs/notifications.md)',
    parse: notifyUrls,
  },
  notifyFormat: {
    flag: '--notify-format FORMAT',
    env: 'ENVSYNC_NOTIFY_FORMAT',
    file: 'notifyFormat',
    ...RUN,
    help: `the notifications' format: ${NOTIFY_FORMATS.join(' or ')} (CloudEvents 1.0 JSON, or Slack-compatible text and blocks)`,
    parse: oneOf(NOTIFY_FORMATS),
    default: 'cloudevents',
  },
  notifySecretFile: {
    flag: '--notify-secret-file PATH',
    env: 'ENVSYNC_NOTIFY_SECRET_FILE',
    file: 'notifySecretFile',
    ...RUN,
    help: 'sign each notification with this secret: X-Envsync-Signature: sha256=<hex HMAC-SHA256 of the body>',
    parse: filePath,
  },
  publicUrl: {
    flag: '--public-url URL',
    env: 'ENVSYNC_PUBLIC_URL',
    file: 'publicUrl',
    ...RUN,
    help: "where people reach this daemon's endpoints (its status page): notifications link to it",
    parse: publicUrl,
  },
  listen: {
    flag: '--listen HOST:PORT',
    env: 'ENVSYNC_LISTEN',
    file: 'listen',
    ...RUN,
    help: 'where the status page (/), /healthz, /readyz, /metrics, /status and POST /reconcile listen (the container image sets 0.0.0.0:9464)',
    parse: listen,
    default: '127.0.0.1:9464',
  },
  shutdownTimeoutMs: {
    flag: '--shutdown-timeout DURATION',
    env: 'ENVSYNC_SHUTDOWN_TIMEOUT',
    file: 'shutdownTimeout',
    ...RUN,
    help: 'the longest a stop (SIGTERM) takes: the pass in flight gets all of it but the last 5s, then its requests are aborted and the state written; then the process exits whatever it waits on (2s at the least)',
    parse: durationOrZeroMs,
    default: '30s',
  },
  shardIndex: {
    flag: '--shard-index I',
    env: 'ENVSYNC_SHARD_INDEX',
    file: 'shardIndex',
    ...RUN,
    help: "this replica's shard, with --shard-count",
    parse: whole,
  },
  shardCount: {
    flag: '--shard-count N',
    env: 'ENVSYNC_SHARD_COUNT',
    file: 'shardCount',
    ...RUN,
    help: 'number of replicas sharing the orgs (rendezvous hashing on the org name)',
    parse: whole,
  },
  shardFromHostname: {
    flag: '--shard-from-hostname',
    env: 'ENVSYNC_SHARD_FROM_HOSTNAME',
    file: 'shardFromHostname',
    ...RUN,
    help: "read the shard index from a StatefulSet pod's hostname (name-<I>)",
    parse: bool,
    default: false,
  },
  emulator: {
    flag: '--emulator',
    ...RUN,
    help: 'start the embedded emulator on a loopback port and reconcile against it (a demo and a try-out: it is not the real service)',
    parse: bool,
    default: false,
  },
} as const satisfies SettingsTable;

/**
 * Settings only `envsync run` reads: every row above under its id, typed by its parser, except
 * the rows that only feed `shard` and `notify`, which stand in for them.
 */
export type DaemonSettings = Readonly<ReturnType<typeof resolveDaemonSettings>>;

/** The replica's shard; none without sharding flags. */
function shardOf(count: number | undefined, index: number | undefined) {
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
  flags: Flags,
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
    notifyUrls: urls,
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
    shard: shardOf(shardCount, index),
    /** Where notifications go (docs/notifications.md); none when `targets` is empty. */
    notify: {
      targets: (urls ?? []).map((text) => {
        const { url, format } = splitNotifyUrl(text, notifyFormat);
        return { url: new URL(url), format };
      }),
      /** Signs every notification when set (read at start). */
      secretFile: notifySecretFile,
    },
  };
}
