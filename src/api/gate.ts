/** Clock and sleep, passed in so the gate can be driven by tests and never reads globals. */
export interface GateClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The one gate every request to the API passes: a concurrency limit shared by GETs and PUTs of
 * every org, and a pause shared by all workers when the server throttles.
 *
 * On a 429 the gate closes for the Retry-After and halves its concurrency (once per pause, so a
 * burst of 429s from one window counts once); each success opens it again by 1/limit (AIMD, as
 * TCP does). One 429 thus slows everyone a little instead of N workers retrying on their own.
 */
export class RequestGate {
  readonly #max: number;
  readonly #clock: GateClock;
  #limit: number;
  #inFlight = 0;
  #pausedUntil = 0;
  readonly #queue: { resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(concurrency: number, clock: GateClock) {
    this.#max = Math.max(1, Math.floor(concurrency));
    this.#limit = this.#max;
    this.#clock = clock;
  }

  /** The current concurrency limit (lower than the configured one after throttling). */
  get limit(): number {
    return Math.floor(this.#limit);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Waits for a slot and for any pause to end. Pair every call with `release()`. */
  async acquire(signal?: AbortSignal): Promise<void> {
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
    // The slot is ours; now honour a pause (it may begin or grow while we wait).
    try {
      for (let wait = this.#pausedUntil - this.#clock.now(); wait > 0; wait = this.#pausedUntil - this.#clock.now()) {
        await this.#clock.sleep(wait, signal);
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
    if (this.#limit < this.#max) {
      this.#limit = Math.min(this.#max, this.#limit + 1 / this.#limit);
      this.#drain();
    }
  }

  /** Records a 429: everyone pauses for `retryAfterMs`, and the limit halves once per pause. */
  throttled(retryAfterMs: number): void {
    const now = this.#clock.now();
    if (this.#pausedUntil <= now) this.#limit = Math.max(1, this.#limit / 2);
    this.#pausedUntil = Math.max(this.#pausedUntil, now + retryAfterMs);
  }

  #drain(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.limit) {
      this.#inFlight++;
      this.#queue.shift()?.resolve();
    }
  }
}
