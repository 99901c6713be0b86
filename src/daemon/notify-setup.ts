import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { DaemonSettings } from '../config/daemon-settings.ts';
import type { Clock } from '../core/clock.ts';
import { publicNotifyUrl } from '../notify/notify-format.ts';
import { DEFAULT_NOTIFY_POLICY, type NotifyPolicy } from '../notify/notify-policy.ts';
import type { Masker } from '../core/mask.ts';
import { readSecretFile } from '../config/tokens.ts';
import type { DaemonMetrics } from './metrics.ts';
import { undiciSender, type SendNotification } from '../notify/notify-http.ts';
import { Notifier } from '../notify/notify.ts';
import type { DaemonOptions } from './daemon-options.ts';
import { StateStore } from '../state/store.ts';
import { SETTINGS } from '../config/settings.ts';
import { RequestGate } from '../api/gate.ts';
import { connectionPool, type Transport } from '../api/client.ts';

/** What tests may replace in the notifier: the sender and the delivery's limits. */
export interface NotifyDeps {
  readonly send?: SendNotification;
  readonly policy?: Partial<NotifyPolicy>;
}

/** Reads the notify secret (`--notify-secret-file`), once at start. */
function readNotifySecret(file: string, timeoutMs: number | undefined): Promise<string> {
  return readSecretFile('--notify-secret-file', file, 'signing secret', timeoutMs);
}

/**
 * The daemon's notifier, or undefined without `--notify-url`. Every secret it holds (the notify
 * secret, a URL's credentials) is added to `secrets`, so no sink shows one.
 */
export async function createNotifier(options: {
  readonly settings: DaemonSettings;
  /** Where a relative --notify-secret-file starts. */
  readonly cwd: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: DaemonMetrics;
  readonly secrets: Masker;
  readonly deps?: NotifyDeps | undefined;
  /** How long reading the secret file may take (--deadline). */
  readonly readTimeoutMs?: number | undefined;
}): Promise<Notifier | undefined> {
  const { settings, logger, metrics } = options;
  const { targets, secretFile } = settings.notify;
  if (targets.length === 0) return undefined;
  const secret =
    secretFile === undefined
      ? undefined
      : await readNotifySecret(path.resolve(options.cwd, secretFile), options.readTimeoutMs);
  const sender = options.deps?.send === undefined ? undiciSender() : undefined;
  const notifier = new Notifier({
    targets: targets.map(({ url, format }) => ({ url, format, display: publicNotifyUrl(url) })),
    secret,
    clock: options.clock,
    send: options.deps?.send ?? (sender as ReturnType<typeof undiciSender>).send,
    ...(sender === undefined ? {} : { closeSender: sender.close }),
    logger,
    policy: { ...DEFAULT_NOTIFY_POLICY, ...options.deps?.policy },
    source: settings.publicUrl ?? `urn:envsync:${hostname()}`,
    link: settings.publicUrl === undefined ? undefined : `${settings.publicUrl}/`,
    secrets: options.secrets,
    newId: randomUUID,
    count: (result) => metrics.notifications.inc({ result }),
    queued: (count) => metrics.notificationsQueued.set(count),
  });
  for (const { url } of targets) {
    if (url.protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)) {
      logger.warn(
        { notifyUrl: publicNotifyUrl(url) },
        `notifications to ${publicNotifyUrl(url)} go over plain http: anyone on the way can read them (and any credential in the URL)`,
      );
    }
  }
  return notifier;
}

/** What a daemon holds open for its life. */
export interface DaemonResources {
  readonly notifier: Notifier | undefined;
  readonly state: StateStore;
  readonly transport: Transport;
}

/**
 * What a daemon opens at its start, in this order: its notifier (a notify secret that cannot be
 * read stops the start before the state's lock is taken), its state file, and the transport its
 * passes' clients share.
 */
export async function openDaemonResources(
  options: DaemonOptions,
  clock: Clock,
  metrics: DaemonMetrics,
): Promise<DaemonResources> {
  const { settings, cwd, logger } = options;
  const notifier = await createNotifier({
    settings: options.daemon,
    cwd,
    clock,
    logger,
    metrics,
    secrets: options.secrets,
    deps: options.notify,
    readTimeoutMs: settings.deadlineMs,
  });
  const state = await StateStore.load(
    path.resolve(cwd, settings.state),
    logger,
    options.apiUrl.href,
    {
      secrets: options.secrets,
      lockTimeoutMs: settings.stateLockTimeoutMs,
      // The default path in the working directory: say once that it was made there.
      announceCreation: settings.state === SETTINGS.state.default,
      readTimeoutMs: settings.deadlineMs,
    },
  );
  // One pool and one gate for the daemon's life: the open connections and the pace learned from
  // the service's Retry-After carry over from one pass to the next.
  const transport: Transport = {
    pool: connectionPool(options.apiUrl.origin, {
      concurrency: settings.concurrency,
      timeoutMs: settings.timeoutMs,
      ca: options.ca,
    }),
    gate: new RequestGate(settings.concurrency, clock),
  };
  return { notifier, state, transport };
}
