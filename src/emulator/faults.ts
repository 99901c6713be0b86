/**
 * Fault injection: a seeded PRNG and a token bucket. Every admitted request draws the same number
 * of values in arrival order, so under one seed the n-th request always meets the same fate,
 * whatever else the settings say.
 */
import type { FaultSettings, RouteFaults } from './options.ts';
import { completeFaults } from './options.ts';

/** mulberry32: a tiny, fast 32-bit PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A token bucket refilled continuously at `rate` tokens per second, holding at most max(1, rate). */
export class TokenBucket {
  readonly #rate: number;
  readonly #capacity: number;
  #tokens: number;
  #last: number;

  constructor(rate: number, nowMs: number) {
    this.#rate = rate;
    this.#capacity = Math.max(1, rate);
    this.#tokens = this.#capacity;
    this.#last = nowMs;
  }

  /** Takes one token: returns 0 when granted, else the whole seconds (>= 1) until one is due. */
  take(nowMs: number): number {
    const elapsed = Math.max(0, nowMs - this.#last) / 1000;
    this.#last = nowMs;
    this.#tokens = Math.min(this.#capacity, this.#tokens + elapsed * this.#rate);
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.#tokens) / this.#rate));
  }
}

export type FaultKind = 'latency' | 'reset' | 'hang' | 'fail';

/** What happens to one request. */
export type FaultDecision =
  | { readonly kind: 'throttle'; readonly retryAfterSeconds: number }
  | {
      readonly kind: 'admit';
      readonly latencyMs: number;
      readonly outcome: 'reset' | 'hang' | 'fail' | 'normal';
    };

/** Holds the fault settings, the PRNG and the bucket; `decide` is called once per API request. */
export class FaultInjector {
  readonly #monotonicMs: () => number;
  #settings: FaultSettings;
  #seed: number;
  #random: () => number;
  #bucket: TokenBucket | undefined;

  constructor(settings: FaultSettings, seed: number, monotonicMs: () => number) {
    this.#monotonicMs = monotonicMs;
    this.#settings = completeFaults(settings);
    this.#seed = seed >>> 0;
    this.#random = mulberry32(this.#seed);
    this.#bucket = this.#makeBucket();
  }

  get settings(): FaultSettings {
    return completeFaults(this.#settings);
  }

  /** The faults the API routes apply themselves, as they stand (not copied: only read). */
  get routes(): RouteFaults {
    return this.#settings;
  }

  get seed(): number {
    return this.#seed;
  }

  /** Replaces the settings (already validated); a new rate limit starts with a full bucket. */
  update(settings: FaultSettings): void {
    const rateChanged = settings.rateLimit !== this.#settings.rateLimit;
    this.#settings = completeFaults(settings);
    if (rateChanged) this.#bucket = this.#makeBucket();
  }

  /** Restarts the PRNG from `seed` and refills the bucket. */
  reseed(seed: number): void {
    this.#seed = seed >>> 0;
    this.#random = mulberry32(this.#seed);
    this.#bucket = this.#makeBucket();
  }

  /** Decides one request's fate. Order: rate limit, latency, reset, hang, fail. */
  decide(): FaultDecision {
    if (this.#bucket !== undefined) {
      const wait = this.#bucket.take(this.#monotonicMs());
      if (wait > 0) return { kind: 'throttle', retryAfterSeconds: wait };
    }
    // Always four draws, so changing one setting does not shift the others' sequence.
    const latencyDraw = this.#random();
    const resetDraw = this.#random();
    const hangDraw = this.#random();
    const failDraw = this.#random();
    const { latencyMs, resetRate, hangRate, failRate } = this.#settings;
    const latency = latencyMs.min + Math.floor(latencyDraw * (latencyMs.max - latencyMs.min + 1));
    let outcome: 'reset' | 'hang' | 'fail' | 'normal' = 'normal';
    if (resetDraw < resetRate) outcome = 'reset';
    else if (hangDraw < hangRate) outcome = 'hang';
    else if (failDraw < failRate) outcome = 'fail';
    return { kind: 'admit', latencyMs: latency, outcome };
  }

  #makeBucket(): TokenBucket | undefined {
    const rate = this.#settings.rateLimit;
    return rate > 0 ? new TokenBucket(rate, this.#monotonicMs()) : undefined;
  }
}
