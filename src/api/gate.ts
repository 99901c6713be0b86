import type { Clock } from '../core/clock.ts';

/** Clock and sleep, passed in so the gate can be driven by tests and never reads globals. */
export type GateClock = Clock;

/**
 * The one gate every request to the API passes: a concurrency limit shared by GETs and PUTs of
 * every org, and a pause shared by all workers when the server throttles.
 *
 * On a 429 the gate closes for the Retry-After and halves its concurrency (once per pause, so a
 * burst of 429s from one window counts once); each success opens it again by 1/limit (AIMD, as
 * TCP does). It also starts pacing: from the successes the server admitted since the last pause
 * it estimates the rate the server allows and spaces request starts to match, probing slowly
 * upwards while no 429 comes. One 429 thus slows everyone a little, instead of N workers
 * retrying on their own and every in-flight request meeting the next empty bucket.
 */
export class RequestGate {
  readonly #max: number;
  readonly #clock: GateClock;
  #limit: number;
  #inFlight = 0;
  #pausedUntil = 0;
  /** Milliseconds between request starts while pacing; 0 when not pacing. */
  #interval = 0;
  #nextStart = 0;
  /** Successes since the current window (after the last pause) began. */
  #admitted = 0;
  #windowStart = 0;
  readonly #queue: { resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(concurrency: number, clock: GateClock) {
    this.#max = Math.max(1, Math.floor(concurrency));
    this.#limit = this.#max;
    this.#clock = clock;
    this.#windowStart = clock.now();
  }

  /** The current concurrency limit (lower than the configured one after throttling). */
  get limit(): number {
    return Math.floor(this.#limit);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** The pacing interval in milliseconds (0 when not pacing). */
  get interval(): number {
    return this.#interval;
  }

  /**
   * Waits for a slot and for any pause to end. Pair every call with `release()`. `pause` does
   * the waiting for a pause or pacing (by default the clock's sleep); it may refuse a wait by
   * throwing (the run's deadline), and the slot is then given back.
   */
  async acquire(
    signal?: AbortSignal,
    pause: (ms: number, signal?: AbortSignal) => Promise<void> = (ms, s) =>
      this.#clock.sleep(ms, s),
  ): Promise<void> {
    signal?.throwIfAborted();
    if (this.#inFlight < this.limit && this.#queue.length === 0) this.#inFlight++;
    else {
      await new Promise<void>((resolve, reject) => {
        const waiter = { resolve, reject };
        this.#queue.push(waiter);
        signal?.addEventListener(
          'abort',
          () => {
            const index = this.#queue.indexOf(waiter);
            if (index >= 0) {
              this.#queue.splice(index, 1);
              reject(signal.reason);
            }
          },
          { once: true },
        );
      });
    }
    // The slot is ours; now honour a pause (it may begin or grow while we wait) and the pacing.
    try {
      for (;;) {
        const now = this.#clock.now();
        const wait = Math.max(this.#pausedUntil, this.#interval > 0 ? this.#nextStart : 0) - now;
        if (wait <= 0) {
          if (this.#interval > 0) this.#nextStart = Math.max(now, this.#nextStart) + this.#interval;
          break;
        }
        await pause(wait, signal);
      }
    } catch (error) {
      this.release();
      throw error;
    }
  }

  /** Gives the slot back and hands it to the next waiter if the limit allows. */
  release(): void {
    this.#inFlight--;
    this.#drain();
  }

  /** Records a success: the limit grows back towards the configured concurrency. */
  succeeded(): void {
    this.#admitted++;
    if (this.#interval > 0) {
      // Probe upwards: a little faster with every success, until the server says no again.
      this.#interval *= 0.97;
      if (this.#interval < 1) this.#interval = 0;
    }
    if (this.#limit < this.#max) {
      this.#limit = Math.min(this.#max, this.#limit + 1 / this.#limit);
      this.#drain();
    }
  }

  /** Records a 429: everyone pauses for `retryAfterMs`, and the limit halves once per pause. */
  throttled(retryAfterMs: number): void {
    const now = this.#clock.now();
    const pause = Math.max(1, retryAfterMs);
    if (this.#pausedUntil <= now) {
      // A new throttle window: estimate the allowed rate from what was admitted since the last
      // one (over that time plus the pause the server now asks for), and pace to it.
      const span = now - this.#windowStart + pause;
      const estimate = this.#admitted > 0 ? span / this.#admitted : pause / Math.max(1, this.limit);
      this.#interval = Math.min(
        pause,
        Math.max(1, this.#interval > 0 ? Math.max(estimate, this.#interval * 1.25) : estimate),
      );
      this.#limit = Math.max(1, this.#limit / 2);
      this.#admitted = 0;
      this.#windowStart = now + pause;
    }
    this.#pausedUntil = Math.max(this.#pausedUntil, now + pause);
  }

  #drain(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.limit) {
      this.#inFlight++;
      this.#queue.shift()?.resolve();
    }
  }
}
