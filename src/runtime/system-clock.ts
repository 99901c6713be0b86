import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../core/clock.ts';

/** The real clock: wall time and Node's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => sleep(ms, undefined, signal === undefined ? {} : { signal }),
  setTimer: (ms, callback, options) => {
    const timer = setTimeout(callback, ms);
    if (options?.unref === true) timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};
