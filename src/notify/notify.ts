import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import type { NotifyEvent } from './notify-events.ts';
import { formatNotification, notifyUrlSecrets, type NotifyFormat } from './notify-format.ts';
import type { NotifyPolicy, NotifyResult, NotifyStatus } from './notify-policy.ts';
import type { Masker } from '../core/mask.ts';
import { Receiver, type NotifyTarget } from './notify-delivery.ts';
import type { SendNotification } from './notify-http.ts';

export type { NotifyTarget } from './notify-delivery.ts';
export type { NotifyResult, NotifyStatus } from './notify-policy.ts';

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
  /**
   * The secrets every text of an event, and every body, is masked of (the tokens, the webhook
   * secret); the notifier adds its own (the notify secret, URL credentials).
   */
  readonly secrets: Masker;
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

/**
 * Delivers notifications without ever holding up a pass: `notify` only masks, bounds, formats
 * and queues; each receiver's own worker delivers them (notify-delivery.ts). A full queue drops
 * its oldest notification; every notification's end is counted. `close` waits a bounded time,
 * then abandons the rest. Which events a pass makes is decided in notify/notify-events.ts.
 */
export class Notifier {
  readonly #options: NotifierOptions;
  readonly #receivers: Receiver[];
  readonly #closing = new AbortController();
  readonly #abort = new AbortController();
  readonly #counts: Record<NotifyResult, number> = {
    delivered: 0,
    failed: 0,
    dropped: 0,
    abandoned: 0,
  };

  constructor(options: NotifierOptions) {
    this.#options = options;
    const context = {
      clock: options.clock,
      policy: options.policy,
      send: options.send,
      logger: options.logger,
      secret: options.secret,
      closing: this.#closing.signal,
      abort: this.#abort.signal,
      count: (result: NotifyResult) => this.#count(result),
      dequeued: () => this.#reportQueued(),
    };
    this.#receivers = options.targets.map((target) => new Receiver(target, context));
    if (options.secret !== undefined) options.secrets.add(options.secret);
    for (const { url } of options.targets) {
      for (const secret of notifyUrlSecrets(url)) options.secrets.add(secret);
    }
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
          body = this.#options.secrets.mask(formatNotification(event, format, context));
          bodies.set(format, body);
        }
        receiver.push({ id, type: event.type, body });
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

  /**
   * The event with every text masked, then cut to size (masked first: a cut would leave a piece
   * of a secret too short to be masked), and every list bounded.
   */
  #bound(value: unknown): unknown {
    const { mask } = this.#options.secrets;
    if (typeof value === 'string') {
      const text = mask(value);
      return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
    }
    if (Array.isArray(value)) {
      const items: unknown[] = value.slice(0, MAX_LIST).map((item) => this.#bound(item));
      if (value.length > MAX_LIST) items.push(`… and ${value.length - MAX_LIST} more`);
      return items;
    }
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [mask(key), this.#bound(item)]),
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
}
