/**
 * Time, passed in: whatever waits, reads the time or sets a timer takes a clock, so tests drive it
 * by stepping time and no module reads the global clock on its own. `systemClock`
 * (src/runtime/system-clock.ts) is the real one; test/helpers/clock.ts has a manual one.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `callback` once, `ms` from now, unless the timer is cancelled first. With `unref`, the
   * timer alone does not keep the process alive.
   */
  setTimer(ms: number, callback: () => void, options?: TimerOptions): Timer;
}

export interface TimerOptions {
  readonly unref?: boolean;
}

/** A timer set through a Clock. Cancelling one that already fired, or twice, does nothing. */
export interface Timer {
  cancel(): void;
}
