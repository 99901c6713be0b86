import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import {
  EMPTY_NOTIFY_MEMORY,
  passEvents,
  type NotifyEvent,
  type NotifyMemory,
  type PassOutcome,
} from '../core/notify-events.ts';
import {
  formatNotification,
  NOTIFY_CONTENT_TYPES,
  notifyUrlSecrets,
  type NotifyFormat,
} from '../core/notify-format.ts';
import { judgeAttempt, type AttemptResult, type NotifyPolicy } from '../core/notify-policy.ts';
import { Redactor, type Scrub } from '../core/redact.ts';
import { VERSION } from '../runtime/version.ts';
import type { SendNotification } from './notify-http.ts';

/** Where notifications go, and in which format. */
export interface NotifyTarget {
  readonly url: URL;
  readonly format: NotifyFormat;
  /** The URL as it may be shown: scheme and host only. */
  readonly display: string;
}

/** How a notification ended, per receiver: the label of `envsync_notifications_total`. */
export type NotifyResult = 'delivered' | 'failed' | 'dropped' | 'abandoned';
export const NOTIFY_RESULTS: readonly NotifyResult[] = [
  'delivered',
  'failed',
  'dropped',
  'abandoned',
];

/** What `/status` shows of the notifications (never a URL's path or query). */
export interface NotifyStatus {
  targets: { url: string; format: NotifyFormat; queued: number; failing: string | null }[];
  delivered: number;
  failed: number;
  dropped: number;
  abandoned: number;
}

export interface NotifierOptions {
  readonly targets: readonly NotifyTarget[];
  /** Signs each body (`X-Envsync-Signature: sha256=<hex HMAC>`) when set. */
  readonly secret: string | undefined;
  readonly clock: Clock;
  readonly send: SendNotification;
  /** Releases what `send` holds (its connections), once the notifier is closed. */
  readonly closeSender?: () => Promise<void>;
  readonly logger: Logger;
  readonly policy: NotifyPolicy;
  /** The CloudEvents source of this daemon. */
  readonly source: string;
  /** The status page's address, when `--public-url` is set. */
  readonly link: string | undefined;
  /** The command's scrubber (the token, the webhook secret): applied to every body too. */
  readonly scrub?: Scrub | undefined;
  readonly newId: () => string;
  /** Counts each notification's end, per receiver (the metrics). */
  readonly count: (result: NotifyResult) => void;
  /** Reports how many notifications wait in all queues. */
  readonly queued: (count: number) => void;
}

/** Longest text kept of any one string of an event (error messages, values). */
const MAX_TEXT = 1_000;
/** Longest list kept of any one value of an event (a set field's members, say). */
const MAX_LIST = 50;

/** One receiver's queue and how its deliveries fare. */
interface Receiver {
  readonly target: NotifyTarget;
  readonly queue: { readonly id: string; readonly type: string; readonly body: string }[];
  worker: Promise<void> | undefined;
  /** Why deliveries fail, while they do: one log line when it starts, one when it ends. */
  failing: string | null;
  failedSince: number;
  droppedSince: number;
}

/**
 * Delivers notifications without ever holding up a pass: `notify` only formats and queues; one
 * worker per receiver POSTs in order, retries with backoff (honouring Retry-After) a bounded
 * number of times, each POST under a timeout. A full queue drops its oldest notification. A
 * failing receiver is logged once when it starts failing and once when it recovers; every
 * notification's end is counted. `close` waits a bounded time, then abandons the rest.
 */
export class Notifier {
  readonly #options: NotifierOptions;
  readonly #receivers: Receiver[];
  readonly #redactor = new Redactor();
  /** Aborted when the daemon stops: no more waits between attempts. */
  readonly #closing = new AbortController();
  /** Aborted when the drain time is over: requests in flight end. */
  readonly #abort = new AbortController();
  /** What the passes so far said of each org (core/notify-events.ts decides from it). */
  #memory: NotifyMemory = EMPTY_NOTIFY_MEMORY;
  readonly #counts: Record<NotifyResult, number> = {
    delivered: 0,
    failed: 0,
    dropped: 0,
    abandoned: 0,
  };

  constructor(options: NotifierOptions) {
    this.#options = options;
    this.#receivers = options.targets.map((target) => ({
      target,
      queue: [],
      worker: undefined,
      failing: null,
      failedSince: 0,
      droppedSince: 0,
    }));
    if (options.secret !== undefined) this.#redactor.add(options.secret);
    for (const { url } of options.targets) {
      for (const secret of notifyUrlSecrets(url)) this.#redactor.add(secret);
    }
  }

  /** Scrubbed from every notification from now on (a token read for this pass, say). */
  addSecret(secret: string): void {
    this.#redactor.add(secret);
  }

  /** Every secret the notifier scrubs of its own: the notify secret, URL credentials. */
  get secrets(): readonly string[] {
    return this.#redactor.secrets;
  }

  /** Queues the events a pass makes (the transitions since the passes before it); returns at once. */
  notePass(pass: PassOutcome): void {
    const { events, memory } = passEvents(this.#memory, pass);
    this.#memory = memory;
    this.notify(events);
  }

  /** Queues `events` for every receiver; returns at once. */
  notify(events: readonly NotifyEvent[]): void {
    if (this.#closing.signal.aborted || this.#receivers.length === 0) return;
    for (const raw of events) {
      const event = this.#bound(raw) as NotifyEvent;
      const id = this.#options.newId();
      const context = { id, source: this.#options.source, link: this.#options.link };
      const bodies = new Map<NotifyFormat, string>();
      for (const receiver of this.#receivers) {
        const { format } = receiver.target;
        let body = bodies.get(format);
        if (body === undefined) {
          body = this.#scrub(formatNotification(event, format, context));
          bodies.set(format, body);
        }
        if (receiver.queue.length >= this.#options.policy.queueLimit) {
          receiver.queue.shift();
          receiver.droppedSince++;
          this.#count('dropped');
        }
        receiver.queue.push({ id, type: event.type, body });
        receiver.worker ??= this.#work(receiver);
      }
    }
    this.#reportQueued();
  }

  /** What `/status` shows. */
  status(): NotifyStatus {
    return {
      targets: this.#receivers.map((r) => ({
        url: r.target.display,
        format: r.target.format,
        queued: r.queue.length,
        failing: r.failing,
      })),
      ...this.#counts,
    };
  }

  /**
   * Stops: no new notification is queued and no failed one tried again; what is queued may be
   * delivered within the drain time, then requests in flight are aborted and the rest abandoned.
   */
  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new Error('shutdown'));
    const workers = this.#receivers.flatMap((r) => (r.worker === undefined ? [] : [r.worker]));
    if (workers.length > 0) {
      const drained = new AbortController();
      await Promise.race([
        Promise.all(workers),
        this.#options.clock.sleep(this.#options.policy.drainMs, drained.signal).catch(() => {}),
      ]);
      drained.abort();
    }
    this.#abort.abort(new Error('shutdown'));
    await Promise.all(workers);
    for (const receiver of this.#receivers) {
      for (let n = receiver.queue.length; n > 0; n--) this.#count('abandoned');
      receiver.queue.length = 0;
    }
    this.#reportQueued();
    await this.#options.closeSender?.();
  }

  #scrub(text: string): string {
    const own = this.#redactor.scrub(text);
    return this.#options.scrub === undefined ? own : this.#options.scrub(own);
  }

  /** The event with every text scrubbed, then cut to size, and every list bounded. */
  #bound(value: unknown): unknown {
    if (typeof value === 'string') {
      const text = this.#scrub(value);
      return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
    }
    if (Array.isArray(value)) {
      const items: unknown[] = value.slice(0, MAX_LIST).map((item) => this.#bound(item));
      if (value.length > MAX_LIST) items.push(`… and ${value.length - MAX_LIST} more`);
      return items;
    }
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [this.#scrub(key), this.#bound(item)]),
      );
    }
    return value;
  }

  #count(result: NotifyResult): void {
    this.#counts[result]++;
    this.#options.count(result);
  }

  #reportQueued(): void {
    this.#options.queued(this.#receivers.reduce((n, r) => n + r.queue.length, 0));
  }

  async #work(receiver: Receiver): Promise<void> {
    try {
      for (;;) {
        const next = receiver.queue.shift();
        if (next === undefined || this.#abort.signal.aborted) {
          if (next !== undefined) receiver.queue.unshift(next);
          return;
        }
        this.#reportQueued();
        await this.#deliver(receiver, next);
      }
    } finally {
      receiver.worker = undefined;
    }
  }

  async #deliver(receiver: Receiver, delivery: Receiver['queue'][number]): Promise<void> {
    const { clock, policy } = this.#options;
    for (let attempt = 1; ; attempt++) {
      const result = await this.#attempt(receiver.target, delivery);
      const verdict = judgeAttempt(result, attempt, policy, clock.now());
      if (verdict.kind === 'delivered') {
        this.#count('delivered');
        this.#recovered(receiver);
        return;
      }
      this.#failing(receiver, verdict.reason);
      if (verdict.kind === 'failed') {
        receiver.failedSince++;
        this.#count('failed');
        return;
      }
      if (this.#closing.signal.aborted) {
        this.#count('abandoned');
        return;
      }
      try {
        await clock.sleep(verdict.delayMs, this.#closing.signal);
      } catch {
        this.#count('abandoned');
        return;
      }
    }
  }

  async #attempt(
    target: NotifyTarget,
    delivery: Receiver['queue'][number],
  ): Promise<AttemptResult> {
    const { clock, policy, secret } = this.#options;
    const headers: Record<string, string> = {
      'content-type': NOTIFY_CONTENT_TYPES[target.format],
      'user-agent': `envsync/${VERSION}`,
      'x-envsync-event': delivery.type,
      'x-envsync-delivery': delivery.id,
    };
    if (secret !== undefined) {
      headers['x-envsync-signature'] =
        `sha256=${createHmac('sha256', secret).update(delivery.body).digest('hex')}`;
    }
    const attempt = new AbortController();
    const timeout = new Error(`no answer within ${policy.timeoutMs} ms`);
    clock.sleep(policy.timeoutMs, attempt.signal).then(
      () => attempt.abort(timeout),
      () => {},
    );
    try {
      return await this.#options.send(
        target.url,
        delivery.body,
        headers,
        AbortSignal.any([attempt.signal, this.#abort.signal]),
      );
    } finally {
      attempt.abort();
    }
  }

  #failing(receiver: Receiver, reason: string): void {
    const first = receiver.failing === null;
    receiver.failing = reason;
    if (!first) return;
    receiver.failedSince = 0;
    receiver.droppedSince = 0;
    this.#options.logger.warn(
      { notifyUrl: receiver.target.display, reason },
      `notifications to ${receiver.target.display} are failing (${reason}): they are retried, and ` +
        'further failures are counted in envsync_notifications_total, not logged, until one is delivered',
    );
  }

  #recovered(receiver: Receiver): void {
    if (receiver.failing === null) return;
    receiver.failing = null;
    this.#options.logger.info(
      {
        notifyUrl: receiver.target.display,
        failed: receiver.failedSince,
        dropped: receiver.droppedSince,
      },
      `notifications to ${receiver.target.display} are delivered again ` +
        `(${receiver.failedSince} failed, ${receiver.droppedSince} dropped meanwhile)`,
    );
  }
}
