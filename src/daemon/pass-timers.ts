import type { Clock, Timer } from '../core/clock.ts';
import { intervalDelay } from './daemon-policy.ts';

/**
 * The two timers that start passes on their own: the periodic resync (the interval, ±10% jitter,
 * so replicas drift apart) and the earliest end of an org's backoff.
 */
export class PassTimers {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  readonly #random: () => number;
  readonly #start: (reason: 'interval' | 'backoff') => void;
  #interval: Timer | undefined;
  #backoff: Timer | undefined;
  #stopped = false;

  constructor(options: {
    readonly clock: Clock;
    readonly intervalMs: number;
    readonly random: () => number;
    readonly start: (reason: 'interval' | 'backoff') => void;
  }) {
    this.#clock = options.clock;
    this.#intervalMs = options.intervalMs;
    this.#random = options.random;
    this.#start = options.start;
  }

  /** After a pass: the next resync, and the backoff ending at `backoffEndsAt` (if any). */
  arm(backoffEndsAt: number | undefined): void {
    if (this.#stopped) return;
    this.#cancel();
    if (this.#intervalMs > 0) {
      const delay = intervalDelay(this.#intervalMs, this.#random());
      this.#interval = this.#clock.setTimer(delay, () => this.#start('interval'));
    }
    if (backoffEndsAt !== undefined) {
      const delay = Math.max(0, backoffEndsAt - this.#clock.now());
      this.#backoff = this.#clock.setTimer(delay, () => this.#start('backoff'));
    }
  }

  stop(): void {
    this.#stopped = true;
    this.#cancel();
  }

  #cancel(): void {
    this.#interval?.cancel();
    this.#backoff?.cancel();
  }
}
