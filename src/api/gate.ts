import type { Clock } from '../core/clock.ts';

/**
 * The one gate every request passes: a concurrency limit shared by every org, halved by a 429 and
 * grown back by successes (AIMD), a pause shared by all, and a pace matched to the rate the server
 * admitted (docs/how-a-pass-works.md).
 */
export class RequestGate {
  readonly #max: number;
  readonly #clock: Clock;
  #limit: number;
  #inFlight = 0;
  #pausedUntil = 0;
  #interval = 0;
  #nextStart = 0;
  /** Successes since the current window (after the last pause) began. */
  #admitted = 0;
  #windowStart: number;
  readonly #queue: { resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(concurrency: number, clock: Clock) {
    this.#max = Math.max(1, Math.floor(concurrency));
    this.#limit = this.#max;
    this.#clock = clock;
    this.#windowStart = clock.now();
  }

  /** The concurrency limit now (lower than the configured one after throttling). */
  get limit(): number {
    return Math.floor(this.#limit);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** The pace: milliseconds between request starts (0 when not pacing). */
  get interval(): number {
    return this.#interval;
  }

  /**
   * Waits for a slot, then for any pause and the pace; pair it with `release()`. `pause` waits
   * (the clock's sleep by default) and may refuse a wait by throwing: the slot is then given back.
   */
  async acquire(
    signal?: AbortSignal,
    pause = (ms: number, s?: AbortSignal) => this.#clock.sleep(ms, s),
  ): Promise<void> {
    signal?.throwIfAborted();
    if (this.#inFlight < this.limit && this.#queue.length === 0) this.#inFlight++;
    else {
      await new Promise<void>((resolve, reject) => {
        const waiter = { resolve, reject };
        this.#queue.push(waiter);
        const leave = () => {
          const index = this.#queue.indexOf(waiter);
          if (index < 0) return;
          this.#queue.splice(index, 1);
          reject(signal?.reason);
        };
        signal?.addEventListener('abort', leave, { once: true });
      });
    }
    try {
      // A pause may begin or grow while this one waits.
      for (;;) {
        const now = this.#clock.now();
        const wait = Math.max(this.#pausedUntil, this.#interval > 0 ? this.#nextStart : 0) - now;
        if (wait <= 0) {
          if (this.#interval > 0) this.#nextStart = Math.max(now, this.#nextStart) + this.#interval;
          return;
        }
        await pause(wait, signal);
      }
    } catch (error) {
      this.release();
      throw error;
    }
  }

  release(): void {
    this.#inFlight--;
    this.#drain();
  }

  /** A success: the limit grows back towards the configured one, the pace a little faster. */
  succeeded(): void {
    this.#admitted++;
    if (this.#interval > 0) this.#interval = this.#interval < 1 / 0.97 ? 0 : this.#interval * 0.97;
    if (this.#limit < this.#max) {
      this.#limit = Math.min(this.#max, this.#limit + 1 / this.#limit);
      this.#drain();
    }
  }

  /** A 429: everyone pauses for `retryAfterMs`; a new window halves the limit and paces. */
  throttled(retryAfterMs: number): void {
    const now = this.#clock.now();
    const pause = Math.max(1, retryAfterMs);
    if (this.#pausedUntil <= now) {
      // The rate admitted since the last window, over that time and the pause now asked for.
      const span = now - this.#windowStart + pause;
      const estimate = this.#admitted > 0 ? span / this.#admitted : pause / this.limit;
      const slower = this.#interval > 0 ? Math.max(estimate, this.#interval * 1.25) : estimate;
      this.#interval = Math.min(pause, Math.max(1, slower));
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
