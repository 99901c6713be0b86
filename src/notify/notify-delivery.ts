import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import { NOTIFY_CONTENT_TYPES, type NotifyFormat } from './notify-format.ts';
import {
  judgeAttempt,
  type AttemptFailure,
  type AttemptResult,
  type NotifyPolicy,
  type NotifyResult,
} from './notify-policy.ts';
import { VERSION } from '../runtime/version.ts';
import type { SendNotification } from './notify-http.ts';

/** Where notifications go, and in which format. */
export interface NotifyTarget {
  readonly url: URL;
  readonly format: NotifyFormat;
  /** The URL as it may be shown: scheme and host only. */
  readonly display: string;
}

/** One notification, formatted for its receiver. */
export interface Delivery {
  readonly id: string;
  readonly type: string;
  readonly body: string;
}

/** What every receiver's deliveries share. */
export interface DeliveryContext {
  readonly clock: Clock;
  readonly policy: NotifyPolicy;
  readonly send: SendNotification;
  readonly logger: Logger;
  /** Signs each body (`X-Envsync-Signature: sha256=<hex HMAC>`) when set. */
  readonly secret: string | undefined;
  /** Aborted when the daemon stops: no more waits between attempts. */
  readonly closing: AbortSignal;
  /** Aborted when the drain time is over: requests in flight end. */
  readonly abort: AbortSignal;
  /** Counts each notification's end. */
  readonly count: (result: NotifyResult) => void;
  /** Told whenever a queue got shorter. */
  readonly dequeued: () => void;
}

/** What happens to a notification that fails each way, as the log line says it. */
const FAILURE_SAYS: Readonly<Record<AttemptFailure, (maxAttempts: number) => string>> = {
  transient: (maxAttempts) => `each is tried again, up to ${maxAttempts} attempts in all`,
  redirect: () =>
    'the receiver answered with a redirect, which is never followed: such a notification fails at once, not retried (give --notify-url the final address)',
  refused: () => 'the receiver refused it: such a notification fails at once, not retried',
};

/**
 * One receiver: its queue, worked by one worker that POSTs in order and retries with backoff
 * (honouring Retry-After) as notify/notify-policy.ts judges, each POST under a timeout. A failing
 * receiver is logged once when it starts failing, again only if it starts failing another way
 * (so the line that says what happens to its notifications stays true), and once when it
 * recovers.
 */
export class Receiver {
  readonly target: NotifyTarget;
  readonly queue: Delivery[] = [];
  /** Why deliveries fail, while they do. */
  failing: string | null = null;
  /** The way they fail, as last logged. */
  #failure: AttemptFailure | null = null;
  /** Counted since deliveries began to fail, for the line that says they recovered. */
  failedSince = 0;
  droppedSince = 0;
  readonly #context: DeliveryContext;
  #worker: Promise<void> | undefined;

  constructor(target: NotifyTarget, context: DeliveryContext) {
    this.target = target;
    this.#context = context;
  }

  /** The worker while it runs (undefined when the queue is empty). */
  get worker(): Promise<void> | undefined {
    return this.#worker;
  }

  /** Queues a delivery (dropping the oldest beyond the limit) and starts the worker. */
  push(delivery: Delivery): void {
    if (this.queue.length >= this.#context.policy.queueLimit) {
      this.queue.shift();
      this.droppedSince++;
      this.#context.count('dropped');
    }
    this.queue.push(delivery);
    this.#worker ??= this.#work().finally(() => {
      this.#worker = undefined;
    });
  }

  async #work(): Promise<void> {
    for (;;) {
      const next = this.queue.shift();
      if (next === undefined || this.#context.abort.aborted) {
        if (next !== undefined) this.queue.unshift(next);
        return;
      }
      this.#context.dequeued();
      await this.#deliver(next);
    }
  }

  async #deliver(delivery: Delivery): Promise<void> {
    const { clock, policy, count, closing } = this.#context;
    for (let attempt = 1; ; attempt++) {
      const result = await this.#attempt(delivery);
      const verdict = judgeAttempt(result, attempt, policy, clock.now());
      if (verdict.kind === 'delivered') {
        count('delivered');
        this.#recovered();
        return;
      }
      this.#failing(verdict.reason, verdict.failure);
      if (verdict.kind === 'failed') {
        this.failedSince++;
        count('failed');
        return;
      }
      try {
        await clock.sleep(verdict.delayMs, closing);
      } catch {
        count('abandoned');
        return;
      }
    }
  }

  async #attempt(delivery: Delivery): Promise<AttemptResult> {
    const { clock, policy, secret } = this.#context;
    const headers: Record<string, string> = {
      'content-type': NOTIFY_CONTENT_TYPES[this.target.format],
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
      return await this.#context.send(
        this.target.url,
        delivery.body,
        headers,
        AbortSignal.any([attempt.signal, this.#context.abort]),
      );
    } finally {
      attempt.abort();
    }
  }

  #failing(reason: string, failure: AttemptFailure): void {
    const first = this.failing === null;
    this.failing = reason;
    if (first) {
      this.failedSince = 0;
      this.droppedSince = 0;
    } else if (failure === this.#failure) return;
    this.#failure = failure;
    const { display } = this.target;
    const { maxAttempts } = this.#context.policy;
    this.#context.logger.warn(
      { notifyUrl: display, reason, failure },
      `notifications to ${display} are failing (${reason}): ${FAILURE_SAYS[failure](maxAttempts)}; ` +
        'further failures are counted in envsync_notifications_total, not logged, until one is delivered or they fail another way',
    );
  }

  #recovered(): void {
    if (this.failing === null) return;
    this.failing = null;
    this.#failure = null;
    const { display } = this.target;
    this.#context.logger.info(
      { notifyUrl: display, failed: this.failedSince, dropped: this.droppedSince },
      `notifications to ${display} are delivered again ` +
        `(${this.failedSince} failed, ${this.droppedSince} dropped meanwhile)`,
    );
  }
}
