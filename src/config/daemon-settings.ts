/** The settings only `envsync run` takes, and their resolution into DaemonSettings. */
import { hostname } from 'node:os';
import { ordinalFromHostname } from '../core/shard.ts';
import { NOTIFY_FORMATS, splitNotifyUrl } from '../notify/format.ts';
import { ConfigError } from '../runtime/errors.ts';
import {
  bool,
  durationOrZeroMs,
  filePath,
  githubApiUrl,
  listen,
  notifyUrls,
  oneOf,
  publicUrl,
  whole,
} from './parsers.ts';
import {
  named,
  resolveValues,
  type ConfigFile,
  type Flags,
  type SettingsTable,
} from './setting.ts';

const RUN = { commands: ['run'], group: 'daemon' } as const;

export const DAEMON_SETTINGS = {
  observe: {
    ...named('--observe', 'observe', RUN),
    // sync reads it only to refuse it, pointing to plan.
    tolerated: ['sync'],
    help: 'never write to the API: plan every pass, report drift and pending changes (status page, /status, metrics, drift.detected notifications)',
    parse: bool,
    default: false,
  },
  intervalMs: {
    ...named('--interval DURATION', 'interval', RUN),
    help: 'periodic resync (heals drift made by hand), ±10% jitter; 0 turns it off',
    parse: durationOrZeroMs,
    default: '5m',
  },
  debounceMs: {
    ...named('--debounce DURATION', 'debounce', RUN),
    help: 'quiet time after file events before a pass',
    parse: durationOrZeroMs,
    default: '200ms',
  },
  settleMs: {
    ...named('--settle DURATION', 'settle', RUN),
    help: 'a file edited in place is read only after it has not changed for this long (a writer may pause between writes; 0 reads at once); a git-sync swap is read at once',
    parse: durationOrZeroMs,
    default: '1500ms',
  },
  webhookMinIntervalMs: {
    ...named('--webhook-min-interval DURATION', 'webhookMinInterval', RUN),
    help: 'passes started by POST /reconcile are at least this far apart; posts in between join the next one (0 turns the spacing off)',
    parse: durationOrZeroMs,
    default: '10s',
  },
  webhookSecretFile: {
    ...named('--webhook-secret-file PATH', 'webhookSecretFile', RUN),
    help: "a POST /reconcile from a non-loopback address must carry this secret (Authorization: Bearer, or GitHub's X-Hub-Signature-256)",
    parse: filePath,
  },
  notifyUrls: {
    ...named('--notify-url URL', 'notifyUrls', RUN),
    help: 'POST notifications (an org failed, invalid or recovered, drift healed, ...) here; repeatable; a slack: prefix picks the Slack format; github://OWNER/REPO sets commit statuses (docs/notifications.md)',
    parse: notifyUrls,
  },
  notifyFormat: {
    ...named('--notify-format FORMAT', 'notifyFormat', RUN),
    help: `the notifications' format: ${NOTIFY_FORMATS.join(' or ')} (CloudEvents 1.0 JSON, or Slack-compatible text and blocks)`,
    parse: oneOf(NOTIFY_FORMATS),
    default: 'cloudevents',
  },
  notifySecretFile: {
    ...named('--notify-secret-file PATH', 'notifySecretFile', RUN),
    help: 'sign each notification with this secret: X-Envsync-Signature: sha256=<hex HMAC-SHA256 of the body>',
    parse: filePath,
  },
  githubTokenFile: {
    ...named('--github-token-file PATH', 'githubTokenFile', RUN),
    help: 'the GitHub token that sets the commit statuses of github:// notify URLs (else GITHUB_TOKEN), read at start',
    parse: filePath,
  },
  githubApiUrl: {
    ...named('--github-api-url URL', 'githubApiUrl', RUN),
    help: "GitHub's API for github:// notify URLs (GitHub Enterprise Server: https://HOST/api/v3)",
    parse: githubApiUrl,
    default: 'https://api.github.com',
  },
  publicUrl: {
    ...named('--public-url URL', 'publicUrl', RUN),
    help: "where people reach this daemon's endpoints (its status page): notifications link to it",
    parse: publicUrl,
  },
  listen: {
    ...named('--listen HOST:PORT', 'listen', RUN),
    help: 'where the status page (/), /healthz, /readyz, /metrics, /status and POST /reconcile listen (the container image sets 0.0.0.0:9464)',
    parse: listen,
    default: '127.0.0.1:9464',
  },
  shutdownTimeoutMs: {
    ...named('--shutdown-timeout DURATION', 'shutdownTimeout', RUN),
    help: 'the longest a stop (SIGTERM) takes: the pass in flight gets all of it but the last 5s, then its requests are aborted and the state written; then the process exits whatever it waits on (2s at the least)',
    parse: durationOrZeroMs,
    default: '30s',
  },
  shardIndex: {
    ...named('--shard-index I', 'shardIndex', RUN),
    help: "this replica's shard, with --shard-count",
    parse: whole,
  },
  shardCount: {
    ...named('--shard-count N', 'shardCount', RUN),
    help: 'number of replicas sharing the orgs (rendezvous hashing on the org name)',
    parse: whole,
  },
  shardFromHostname: {
    ...named('--shard-from-hostname', 'shardFromHostname', RUN),
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
  emulatorProfile: {
    flag: '--emulator-profile NAME',
    ...RUN,
    help: "the embedded emulator's profile: contract (the API's published contract) or kosli (the service as it is today: tags, policies, rename, archive, nine types)",
    parse: oneOf(['contract', 'kosli']),
    default: 'kosli',
  },
} as const satisfies SettingsTable;

/** `envsync run`'s settings: every row under its id, but the shard's and notifications' rows. */
export type DaemonSettings = Readonly<ReturnType<typeof resolveDaemonSettings>>;

function shardOf(count: number | undefined, index: number | undefined) {
  if (count === undefined && index === undefined) return undefined;
  if (count === undefined || index === undefined) {
    throw new ConfigError(
      'sharding needs both --shard-count N and --shard-index I (or --shard-from-hostname)',
    );
  }
  if (count < 1 || index >= count)
    throw new ConfigError(`--shard-index ${index} must be below --shard-count ${count}`);
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

/** Resolves the daemon's settings; the config file's relative paths start at `fileDir`. */
export function resolveDaemonSettings(
  flags: Flags,
  env: NodeJS.ProcessEnv,
  file: ConfigFile,
  host: () => string = hostname,
  fileDir?: string,
) {
  const {
    shardCount,
    shardIndex,
    shardFromHostname,
    notifyUrls: urls,
    notifyFormat,
    ...rest
  } = resolveValues(DAEMON_SETTINGS, { flags, env, file, fileDir });
  const { notifySecretFile, githubTokenFile, githubApiUrl: api, ...plain } = rest;
  const index = shardFromHostname ? hostnameOrdinal(env['HOSTNAME'] || host()) : shardIndex;
  const targets = (urls ?? []).map((text) => {
    const { url, format } = splitNotifyUrl(text, notifyFormat, api);
    return { url: new URL(url), format };
  });
  const githubToken = env['GITHUB_TOKEN'] || undefined;
  if (targets.some((t) => t.format === 'github') && !githubTokenFile && !githubToken) {
    throw new ConfigError(
      '--notify-url github://OWNER/REPO needs a GitHub token allowed to set commit statuses: --github-token-file PATH, or GITHUB_TOKEN',
    );
  }
  return {
    ...plain,
    shard: shardOf(shardCount, index),
    /** Where notifications go (docs/notifications.md); none when `targets` is empty. */
    notify: { targets, secretFile: notifySecretFile, githubTokenFile, githubToken },
  };
}
