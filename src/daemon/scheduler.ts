import type { Clock, Timer, TimerOptions } from '../core/clock.ts';

type Run = (reasons: readonly string[]) => Promise<void>;

/**
 * Runs reconcile passes one at a time. File events are debounced and coalesced; a trigger during
 * a pass makes exactly one more pass. Named timers start passes later (the interval, a backoff's
 * end, a webhook's spacing, a sync window opening).
 */
export class PassScheduler {
  readonly #run: Run;
  readonly #debounceMs: number;
  readonly #clock: Clock;
  readonly #timers = new Map<string, Timer>();
  #pending = new Set<string>();
  #running: Promise<void> | undefined;
  #stopped = false;
  /** When the pass now running started (ms since the epoch). */
  passStartedAt: number | undefined;

  constructor(run: Run, debounceMs: number, clock: Clock) {
    this.#run = run;
    this.#debounceMs = debounceMs;
    this.#clock = clock;
  }

  get running(): boolean {
    return this.#running !== undefined;
  }

  /** A file event: runs once the debounce passed quietly. */
  debounced(reason: string): void {
    if (this.#stopped) return;
    this.#pending.add(reason);
    this.at('debounce', this.#debounceMs);
  }

  /** Runs as soon as no pass runs. */
  now(reason: string): void {
    if (this.#stopped) return;
    this.#pending.add(reason);
    this.cancel('debounce');
    this.#kick();
  }

  /** Runs a pass in `ms` (for `reason`, if any), replacing the timer of the same name. */
  at(name: string, ms: number, reason?: string, options?: TimerOptions): void {
    this.cancel(name);
    if (this.#stopped) return;
    const fire = () => {
      this.#timers.delete(name);
      if (reason === undefined) this.#kick();
      else this.now(reason);
    };
    this.#timers.set(name, this.#clock.setTimer(Math.max(0, ms), fire, options));
  }

  cancel(name: string): void {
    this.#timers.get(name)?.cancel();
    this.#timers.delete(name);
  }

  #kick(): void {
    if (this.#running !== undefined || this.#pending.size === 0 || this.#stopped) return;
    const reasons = [...this.#pending];
    this.#pending = new Set();
    this.passStartedAt = this.#clock.now();
    this.#running = this.#run(reasons)
      .catch(() => undefined) // a pass reports its own errors
      .finally(() => {
        this.#running = undefined;
        this.passStartedAt = undefined;
        // Triggers that came during the pass: one more pass (after a debounce under way).
        if (!this.#timers.has('debounce')) this.#kick();
      });
  }

  /** Stops scheduling; resolves when the pass in flight (if any) has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const name of this.#timers.keys()) this.cancel(name);
    await this.#running;
  }

  /** Resolves when no pass runs and none is pending (for tests). */
  async idle(): Promise<void> {
    while (this.#running !== undefined || this.#timers.has('debounce')) {
      await (this.#running ?? this.#clock.sleep(this.#debounceMs));
    }
  }
}
