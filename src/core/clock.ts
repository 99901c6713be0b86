/**
 * Time, passed in: whatever waits or reads the time takes a clock, so tests drive it and no
 * module reads the global clock on its own. `systemClock` (src/system-clock.ts) is the real one.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
