import type { Clock, Timer } from '../core/clock.ts';

/**
 * Runs reconcile passes one at a time (single-flight). File events are debounced (trailing) and
 * coalesced; a trigger during a pass schedules exactly one more pass, never a pile.
 */
export class PassScheduler {
  readonly #run: (reasons: readonly string[]) => Promise<void>;
  readonly #debounceMs: number;
  readonly #clock: Clock;
  #timer: Timer | undefined;
  #pending = new Set<string>();
  #running: Promise<void> | undefined;
  #stopped = false;
  #passStartedAt: number | undefined;

  constructor(
    run: (reasons: readonly string[]) => Promise<void>,
    debounceMs: number,
    clock: Clock,
  ) {
    this.#run = run;
    this.#debounceMs = debounceMs;
    this.#clock = clock;
  }

  /** When the pass now running started (ms since epoch), if one is running. */
  get passStartedAt(): number | undefined {
    return this.#passStartedAt;
  }

  get running(): boolean {
    return this.#running !== undefined;
  }

  /** A file event: waits for the debounce to pass quietly, then runs. */
  debounced(reason: string): void {
    if (this.#stopped) return;
    this.#pending.add(reason);
    this.#timer?.cancel();
    this.#timer = this.#clock.setTimer(this.#debounceMs, () => {
      this.#timer = undefined;
      this.#kick();
    });
  }

  /** A webhook, SIGHUP, the interval or a backoff expiring: runs as soon as no pass runs. */
  now(reason: string): void {
    if (this.#stopped) return;
    this.#pending.add(reason);
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#kick();
  }

  #kick(): void {
    if (this.#running !== undefined || this.#pending.size === 0 || this.#stopped) return;
    const reasons = [...this.#pending];
    this.#pending = new Set();
    this.#passStartedAt = this.#clock.now();
    this.#running = this.#run(reasons)
      .catch(() => undefined) // the pass reports its own errors
      .finally(() => {
        this.#running = undefined;
        this.#passStartedAt = undefined;
        // Triggers that came during the pass: exactly one more pass (after the debounce, if the
        // last trigger was a file event still settling).
        if (this.#pending.size > 0 && this.#timer === undefined) this.#kick();
      });
  }

  /** Stops scheduling; resolves when the pass in flight (if any) has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    await this.#running;
  }

  /** Resolves when no pass runs and none is pending (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.#running !== undefined || this.#timer !== undefined) {
      await (this.#running ?? this.#clock.sleep(this.#debounceMs));
    }
  }
}
