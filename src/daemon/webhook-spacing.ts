import type { Clock, Timer } from '../core/clock.ts';
import { nextWebhookPassAt } from './daemon-policy.ts';

/** The trigger a webhook pass carries. */
export const WEBHOOK_TRIGGER = 'webhook';

/**
 * Spaces the passes that webhooks start: a post starts a pass at once when none started from a
 * webhook within `minIntervalMs`; otherwise it joins the next webhook pass, which starts when that
 * interval is over (daemon/daemon-policy.ts's `nextWebhookPassAt`). A burst of pushes makes at most
 * one pass per interval, and none is lost.
 */
export class WebhookSpacer {
  readonly #clock: Clock;
  readonly #minIntervalMs: number;
  readonly #start: () => void;
  #lastStartedAt: number | undefined;
  /** A webhook pass was asked of the scheduler and has not started yet. */
  #queued = false;
  #timer: Timer | undefined;
  #runAt = 0;

  /** `start` asks the scheduler for a pass triggered by WEBHOOK_TRIGGER. */
  constructor(clock: Clock, minIntervalMs: number, start: () => void) {
    this.#clock = clock;
    this.#minIntervalMs = minIntervalMs;
    this.#start = start;
  }

  /** A post: when its pass is due (ms since the epoch), and whether it joined one already due. */
  request(): { runAt: number; joined: boolean } {
    const now = this.#clock.now();
    if (this.#queued) return { runAt: now, joined: true };
    if (this.#timer !== undefined) return { runAt: this.#runAt, joined: true };
    const at = nextWebhookPassAt(this.#lastStartedAt, now, this.#minIntervalMs);
    if (at <= now) {
      this.#fire();
      return { runAt: now, joined: false };
    }
    this.#runAt = at;
    this.#timer = this.#clock.setTimer(at - now, () => {
      this.#timer = undefined;
      this.#fire();
    });
    return { runAt: at, joined: false };
  }

  /** A pass starts: if a webhook triggered it, the interval counts from now. */
  passStarted(reasons: readonly string[], at: number): void {
    if (!reasons.includes(WEBHOOK_TRIGGER)) return;
    this.#lastStartedAt = at;
    this.#queued = false;
  }

  stop(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #fire(): void {
    this.#queued = true;
    this.#start();
  }
}
