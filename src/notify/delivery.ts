/**
 * Delivering notifications without ever holding up a pass (docs/notifications.md, "Delivery"): a
 * bounded queue per receiver, one worker POSTing in order, retries as `judgeAttempt` says.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Agent } from 'undici';
import type { Clock } from '../core/clock.ts';
import type { Masker } from '../core/mask.ts';
import { parseRetryAfter } from '../api/retry-policy.ts';
import { isLoopbackHost } from '../config/api-url.ts';
import { VERSION } from '../runtime/version.ts';
import { escapeJson } from '../core/escape.ts';
import type { CommitStatus, NotifyEvent } from './events.ts';
import {
  formatNotification,
  NOTIFY_CONTENT_TYPES,
  notifyUrlSecrets,
  publicNotifyUrl,
  type TargetFormat,
} from './format.ts';

/** How a notification ended, per receiver: the label of `envsync_notifications_total`. */
export const NOTIFY_RESULTS = ['delivered', 'failed', 'dropped', 'abandoned'] as const;
export type NotifyResult = (typeof NOTIFY_RESULTS)[number];

/** What `/status` shows of the notifications (never a URL's path or query). */
export interface NotifyStatus extends Record<NotifyResult, number> {
  targets: { url: string; format: TargetFormat; queued: number; failing: string | null }[];
}

/** The delivery's limits (docs/notifications.md, "Delivery"): waits double from `baseDelayMs`. */
export const DEFAULT_NOTIFY_POLICY = {
  maxAttempts: 5, // per notification and receiver, the first included
  baseDelayMs: 1_000,
  maxDelayMs: 60_000, // a Retry-After included
  timeoutMs: 10_000, // per POST
  queueLimit: 256, // per receiver: the oldest is dropped for a new one beyond it
  drainMs: 1_000, // how long a stopping daemon waits for the queues to empty
};
export type NotifyPolicy = typeof DEFAULT_NOTIFY_POLICY;

/** How one attempt ended: the answer's status and Retry-After, or why there was none. */
export type Attempt =
  | { readonly status: number; readonly retryAfter?: string }
  | { readonly error: string };

/** Why an attempt failed: no answer or 408, 429, 5xx (tried again), a redirect, a refusal. */
export type AttemptFailure = 'transient' | 'redirect' | 'refused';

/** After attempt `n`: delivered, or why not and, while it may be tried again, the wait. */
export function judgeAttempt(
  attempt: Attempt,
  n: number,
  policy: NotifyPolicy,
  nowMs: number,
): 'delivered' | { reason: string; failure: AttemptFailure; retryInMs?: number } {
  if ('status' in attempt && attempt.status >= 200 && attempt.status < 300) return 'delivered';
  const { status = 0 } = 'status' in attempt ? attempt : {};
  const reason = 'error' in attempt ? attempt.error : `HTTP ${status}`;
  const busy = status === 0 || status === 408 || status === 429 || status >= 500;
  const failure = busy ? 'transient' : status >= 300 && status < 400 ? 'redirect' : 'refused';
  if (failure !== 'transient' || n >= policy.maxAttempts) return { reason, failure };
  const retryAfter = 'retryAfter' in attempt ? attempt.retryAfter : undefined;
  const asked = parseRetryAfter(retryAfter, nowMs, policy.maxDelayMs);
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (n - 1));
  return { reason, failure, retryInMs: asked ?? backoff };
}

export interface NotifierOptions {
  readonly targets: readonly { readonly url: URL; readonly format: TargetFormat }[];
  /** Signs each body (`X-Envsync-Signature: sha256=<hex HMAC>`) when set. */
  readonly secret: string | undefined;
  /** Sets the commit statuses of the `github` targets. */
  readonly githubToken?: string | undefined;
  readonly source: string;
  readonly link: string | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
  /** What every event and body is masked of; the notifier adds its secret and URL credentials. */
  readonly secrets: Masker;
  readonly policy?: Partial<NotifyPolicy> | undefined;
  readonly newId?: () => string;
  /** For the metrics: each notification's end, per receiver, and how many wait in all queues. */
  readonly count?: (result: NotifyResult) => void;
  readonly queued?: (count: number) => void;
}

/** One POST to a receiver; `path`, when set, instead of its URL's. */
type Delivery = {
  readonly id: string;
  readonly type: string;
  readonly body: string;
  path?: string;
};

interface Receiver {
  readonly url: URL;
  readonly format: TargetFormat;
  readonly display: string;
  readonly queue: Delivery[];
  worker: Promise<void> | undefined;
  /** Why deliveries fail while they do, the way as last logged, and what failed since. */
  failing: string | null;
  failure: AttemptFailure | null;
  failedSince: number;
  droppedSince: number;
}

/** Longest text, and longest list, kept of any one value of an event. */
const MAX_TEXT = 1_000;
const MAX_LIST = 50;

/** What happens to a notification that fails each way, as the log line says it. */
const FAILURE_SAYS = {
  redirect:
    'the receiver answered with a redirect, which is never followed: such a notification fails at once, not retried (give --notify-url the final address)',
  refused: 'the receiver refused it: such a notification fails at once, not retried',
};

export class Notifier {
  readonly #options: NotifierOptions;
  readonly #policy: NotifyPolicy;
  readonly #agent = new Agent({ keepAliveTimeout: 4_000, connections: 4 });
  readonly #receivers: Receiver[];
  /** Aborted at the stop (no new notification, no more waits), and when the drain is over. */
  readonly #closing = new AbortController();
  readonly #abort = new AbortController();
  readonly #counts = { delivered: 0, failed: 0, dropped: 0, abandoned: 0 };
  /** Per org, the revision and state of the last commit status queued. */
  readonly #statuses = new Map<string, string>();

  constructor(options: NotifierOptions) {
    this.#options = options;
    this.#policy = { ...DEFAULT_NOTIFY_POLICY, ...options.policy };
    if (options.secret !== undefined) options.secrets.add(options.secret);
    if (options.githubToken !== undefined) options.secrets.add(options.githubToken);
    this.#receivers = options.targets.map(({ url, format }) => {
      const display = publicNotifyUrl(url);
      if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
        options.logger.warn(
          { notifyUrl: display },
          `notifications to ${display} go over plain http: anyone on the way can read them (and any credential in the URL)`,
        );
      }
      // A github target's path names a repository, no credential.
      if (format !== 'github')
        for (const secret of notifyUrlSecrets(url)) options.secrets.add(secret);
      const receiver = { url, format, display, queue: [], worker: undefined, failing: null };
      return { ...receiver, failure: null, failedSince: 0, droppedSince: 0 };
    });
  }

  /** Queues `events` for every receiver; returns at once. */
  notify(events: readonly NotifyEvent[]): void {
    if (this.#closing.signal.aborted) return;
    const { secrets, source, link, newId = randomUUID } = this.#options;
    for (const raw of events) {
      const event = this.#bound(raw) as NotifyEvent;
      const id = newId();
      const bodies = new Map<TargetFormat, string>();
      for (const receiver of this.#receivers) {
        const { format } = receiver;
        if (format === 'github') continue;
        const body =
          bodies.get(format) ??
          secrets.mask(formatNotification(event, format, { id, source, link }));
        bodies.set(format, body);
        this.#queue(receiver, { id, type: event.type, body });
      }
    }
    this.#reportQueued();
  }

  /** Queues each org's commit status on `revision`, unless it repeats the org's last one. */
  statuses(revision: string, statuses: readonly CommitStatus[]): void {
    const { secrets, link, newId = randomUUID } = this.#options;
    if (this.#closing.signal.aborted) return;
    for (const { org, state, description } of statuses) {
      if (this.#statuses.get(org) === `${revision} ${state}`) continue;
      this.#statuses.set(org, `${revision} ${state}`);
      const text = secrets.mask(description); // before the cut, which could leave a piece of one
      const said = text.length > 140 ? `${text.slice(0, 139)}…` : text;
      const status = { state, context: `envsync/${org}`, description: said, target_url: link };
      const body = secrets.mask(escapeJson(JSON.stringify(status)));
      for (const receiver of this.#receivers.filter((r) => r.format === 'github')) {
        const path = `${receiver.url.pathname}/statuses/${revision}`;
        this.#queue(receiver, { id: newId(), type: `commit-status.${state}`, body, path });
      }
    }
    this.#reportQueued();
  }

  #queue(receiver: Receiver, delivery: Delivery): void {
    if (receiver.queue.length >= this.#policy.queueLimit) {
      receiver.queue.shift();
      receiver.droppedSince++;
      this.#count('dropped');
    }
    receiver.queue.push(delivery);
    receiver.worker ??= this.#work(receiver).finally(() => {
      receiver.worker = undefined;
    });
  }

  status(): NotifyStatus {
    const targets = this.#receivers.map(({ display: url, format, queue, failing }) => {
      return { url, format, queued: queue.length, failing };
    });
    return { targets, ...this.#counts };
  }

  /** Stops: what is queued may be delivered within the drain time; the rest is abandoned. */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new Error('shutdown'));
    const workers = this.#receivers.flatMap((r) => r.worker ?? []);
    const drained = new AbortController();
    const drain = this.#options.clock.sleep(this.#policy.drainMs, drained.signal);
    await Promise.race([Promise.all(workers), drain.catch(() => {})]);
    drained.abort();
    this.#abort.abort(new Error('shutdown'));
    await Promise.all(workers);
    for (const _ of this.#receivers.flatMap((r) => r.queue.splice(0))) this.#count('abandoned');
    this.#reportQueued();
    await this.#agent.destroy().catch(() => undefined);
  }

  async #work(receiver: Receiver): Promise<void> {
    for (let next = receiver.queue.shift(); next !== undefined; next = receiver.queue.shift()) {
      if (this.#abort.signal.aborted) return void receiver.queue.unshift(next);
      this.#reportQueued();
      await this.#deliver(receiver, next);
    }
  }

  async #deliver(receiver: Receiver, delivery: Delivery): Promise<void> {
    const { clock } = this.#options;
    for (let n = 1; ; n++) {
      const attempt = await this.#post(receiver, delivery);
      const verdict = judgeAttempt(attempt, n, this.#policy, clock.now());
      if (verdict === 'delivered') return this.#delivered(receiver);
      this.#failing(receiver, verdict.reason, verdict.failure);
      if (verdict.retryInMs === undefined) {
        receiver.failedSince++;
        return this.#count('failed');
      }
      try {
        await clock.sleep(verdict.retryInMs, this.#closing.signal);
      } catch {
        return this.#count('abandoned');
      }
    }
  }

  /** One POST, never rejecting, never following a redirect; a failure is named without its URL. */
  async #post({ url, format }: Receiver, delivery: Delivery): Promise<Attempt> {
    const { clock, secret, githubToken } = this.#options;
    const { timeoutMs } = this.#policy;
    const headers: Record<string, string> = {
      'content-type': NOTIFY_CONTENT_TYPES[format],
      'user-agent': `envsync/${VERSION}`,
      'x-envsync-event': delivery.type,
      'x-envsync-delivery': delivery.id,
      ...(format === 'github'
        ? { authorization: `Bearer ${githubToken}`, accept: 'application/vnd.github+json' }
        : {}),
    };
    if (secret !== undefined) {
      const hmac = createHmac('sha256', secret).update(delivery.body).digest('hex');
      headers['x-envsync-signature'] = `sha256=${hmac}`;
    }
    const attempt = new AbortController();
    clock.sleep(timeoutMs, attempt.signal).then(
      () => attempt.abort(new Error(`no answer within ${timeoutMs} ms`)),
      () => {},
    );
    const signal = AbortSignal.any([attempt.signal, this.#abort.signal]);
    try {
      const answer = await this.#agent.request({
        origin: url.origin,
        path: delivery.path ?? `${url.pathname}${url.search}`,
        method: 'POST',
        body: delivery.body,
        headers,
        signal,
      });
      // Read (and thrown away, up to a limit) before the connection is reused.
      await answer.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const retryAfter = answer.headers['retry-after'];
      const asked = typeof retryAfter === 'string' ? { retryAfter } : {};
      return { status: answer.statusCode, ...asked };
    } catch (error) {
      const reason: unknown = signal.reason;
      const code = (error as { code?: unknown }).code;
      const aborted = reason instanceof Error && reason.message !== '' ? reason.message : 'aborted';
      const failed =
        typeof code === 'string' ? code : error instanceof Error ? error.name : 'error';
      return { error: signal.aborted ? aborted : failed };
    } finally {
      attempt.abort();
    }
  }

  /** A receiver is logged when it starts failing, or fails another way, and when it recovers. */
  #failing(receiver: Receiver, reason: string, failure: AttemptFailure): void {
    if (receiver.failing === null) {
      receiver.failedSince = 0;
      receiver.droppedSince = 0;
    } else if (failure === receiver.failure) {
      receiver.failing = reason;
      return;
    }
    Object.assign(receiver, { failing: reason, failure });
    const says =
      failure === 'transient'
        ? `each is tried again, up to ${this.#policy.maxAttempts} attempts in all`
        : FAILURE_SAYS[failure];
    this.#options.logger.warn(
      { notifyUrl: receiver.display, reason, failure },
      `notifications to ${receiver.display} are failing (${reason}): ${says}; ` +
        'further failures are counted in envsync_notifications_total, not logged, until one is delivered or they fail another way',
    );
  }

  #delivered(receiver: Receiver): void {
    this.#count('delivered');
    if (receiver.failing === null) return;
    const { display, failedSince: failed, droppedSince: dropped } = receiver;
    Object.assign(receiver, { failing: null, failure: null });
    this.#options.logger.info(
      { notifyUrl: display, failed, dropped },
      `notifications to ${display} are delivered again (${failed} failed, ${dropped} dropped meanwhile)`,
    );
  }

  /** Every text masked, then cut (a cut could leave a piece of a secret too short to mask). */
  #bound(value: unknown): unknown {
    const { mask } = this.#options.secrets;
    if (typeof value === 'string') {
      const text = mask(value);
      return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
    }
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_LIST).map((item: unknown) => this.#bound(item));
      return value.length > MAX_LIST ? [...items, `… and ${value.length - MAX_LIST} more`] : items;
    }
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [mask(key), this.#bound(item)]),
    );
  }

  #count(result: NotifyResult): void {
    this.#counts[result]++;
    this.#options.count?.(result);
  }

  #reportQueued(): void {
    this.#options.queued?.(this.#receivers.reduce((n, r) => n + r.queue.length, 0));
  }
}
