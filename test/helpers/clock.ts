import type { Clock, Timer } from '../../src/core/clock.ts';

/** A clock that moves only when the test says so: sleeps and timers fire as time is stepped. */
export interface ManualClock extends Clock {
  /** Moves time forward by `ms`, firing (in time order) every sleep and timer due meanwhile. */
  advance(ms: number): Promise<void>;
  /** Sleeps and timers waiting to fire. */
  readonly pending: number;
}

interface Waiter {
  readonly at: number;
  readonly seq: number;
  readonly fire: () => void;
}

/** A manual clock starting at `start` (ms since the epoch). */
export function manualClock(start = 0): ManualClock {
  let now = start;
  let seq = 0;
  let waiters: Waiter[] = [];
  const add = (ms: number, fire: () => void): Waiter => {
    const waiter = { at: now + Math.max(0, ms), seq: seq++, fire };
    waiters.push(waiter);
    return waiter;
  };
  const remove = (waiter: Waiter): void => {
    waiters = waiters.filter((w) => w !== waiter);
  };
  // Lets promise callbacks that a fired waiter started run before time moves on.
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return {
    now: () => now,
    sleep(ms: number, signal?: AbortSignal): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) {
          reject(signal.reason);
          return;
        }
        const onAbort = () => {
          remove(waiter);
          reject(signal?.reason);
        };
        const waiter = add(ms, () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    setTimer(ms: number, callback: () => void): Timer {
      const waiter = add(ms, callback);
      return { cancel: () => remove(waiter) };
    },
    async advance(ms: number): Promise<void> {
      const until = now + ms;
      await settle();
      for (;;) {
        const due = waiters
          .filter((w) => w.at <= until)
          .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
        if (due === undefined) break;
        remove(due);
        now = Math.max(now, due.at);
        due.fire();
        await settle();
      }
      now = until;
      await settle();
    },
    get pending() {
      return waiters.length;
    },
  };
}
