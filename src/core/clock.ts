/**
 * Time, passed in, so tests step it by hand: `systemClock` (src/runtime/system-clock.ts) is the
 * real one, test/helpers/clock.ts a manual one.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `callback` once, `ms` from now; with `unref`, the timer alone keeps no process alive. */
  setTimer(ms: number, callback: () => void, options?: TimerOptions): Timer;
}

export interface TimerOptions {
  readonly unref?: boolean;
}

/** Cancelling a timer that already fired, or twice, does nothing. */
export interface Timer {
  cancel(): void;
}
