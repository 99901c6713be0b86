/**
 * Fault injection: the settings and their check, a seeded PRNG and a token bucket. Every request
 * admitted by the rate limit draws the same five numbers in arrival order, so under one seed the
 * n-th request always meets the same fate, whatever else the settings say.
 */
import { z } from 'zod';
import { isRecord, nameSchema, type FieldErrors, type Validated } from './validation.ts';

/** The writes `ignoredWrites` may name: the routes that change the store. */
export const IGNORABLE_WRITES = [
  'environments',
  'environment',
  'archive',
  'rename',
  'policies',
  'tags',
  'policy-documents',
] as const;
export type IgnorableWrite = (typeof IGNORABLE_WRITES)[number];

/** Upper bound for injected waits, so a typo cannot park a request for a day. */
export const MAX_LATENCY_MS = 600_000;

const rate = z.number().min(0).max(1);
const wholeMs = z.number().int().min(0).max(MAX_LATENCY_MS);

/** The fault settings (docs/emulator.md, "Fault injection"); every rate is from 0 to 1. */
const SETTINGS = z.strictObject({
  /** Added delay per request, drawn from min..max whole milliseconds (one number: min = max). */
  latencyMs: z
    .union([
      wholeMs.transform((ms) => ({ min: ms, max: ms })),
      z.strictObject({ min: wholeMs, max: wholeMs }),
    ])
    .refine(({ min, max }) => min <= max),
  /** Share of requests answered 503. */
  failRate: rate,
  /** Share of requests whose socket is destroyed without an answer. */
  resetRate: rate,
  /** Share of requests never answered (until the client gives up or the emulator closes). */
  hangRate: rate,
  /** Share of creates (a PUT of a name with no live environment) answered 409, nothing stored. */
  conflictRate: rate,
  /** Requests per second allowed by a token bucket (burst = max(1, rate)); 0 = off. */
  rateLimit: z.number().min(0).max(1_000_000),
  /** A create holds its name this long before it lands; another create of it meanwhile: 409. */
  createHoldMs: wholeMs,
  /** Per org, entries listed as given besides its environments, in name order. Not drawn. */
  listingExtra: z.record(z.string().min(1), z.array(z.custom<Record<string, unknown>>(isRecord))),
  /** Listing entries are shown without their `org` field (the extra entries stay as given). */
  listingOmitOrg: z.boolean(),
  /** Writes answered as if done, and not done (the routes that change the store). */
  ignoredWrites: z.array(z.enum(IGNORABLE_WRITES)).transform((writes) => [...new Set(writes)]),
  /** Per org (`*`: every org), the environments the listing shows as the service's placeholder. */
  placeholders: z.record(z.union([z.literal('*'), nameSchema]), z.array(nameSchema)),
});
export type FaultSettings = z.output<typeof SETTINGS>;

/** A partial settings object, as PATCH /_emulator/faults and `startEmulator` take it. */
const PATCH = SETTINGS.extend({ seed: z.number().int().min(0).max(0xffffffff) }).partial();

export const NO_FAULTS: FaultSettings = {
  latencyMs: { min: 0, max: 0 },
  failRate: 0,
  resetRate: 0,
  hangRate: 0,
  conflictRate: 0,
  rateLimit: 0,
  createHoldMs: 0,
  listingExtra: {},
  listingOmitOrg: false,
  ignoredWrites: [],
  placeholders: {},
};

/** What each setting must be, for the 400 that refuses it. */
const RULES: Readonly<Record<string, string>> = {
  latencyMs: `must be {"min": N, "max": N} or N, whole milliseconds 0..${MAX_LATENCY_MS}, min <= max`,
  failRate: 'must be a number from 0 to 1',
  resetRate: 'must be a number from 0 to 1',
  hangRate: 'must be a number from 0 to 1',
  conflictRate: 'must be a number from 0 to 1',
  rateLimit: 'must be a number of requests per second from 0 (off) to 1000000',
  createHoldMs: `must be whole milliseconds from 0 to ${MAX_LATENCY_MS}`,
  listingExtra:
    'must be {"ORG": [ENTRY, ...]}: per org, a list of JSON objects to list besides its environments',
  listingOmitOrg: 'must be true or false',
  ignoredWrites: `must be a list of ${IGNORABLE_WRITES.join(', ')}`,
  placeholders: 'must be {"ORG": ["NAME", ...]} ("*" for every org), each a valid name',
  seed: 'must be a whole number from 0 to 4294967295',
};

/**
 * Checks a partial settings object and applies it over `current`: the complete settings, and the
 * seed to restart the PRNG from when one is given.
 */
export function patchFaults(
  patch: unknown,
  current: FaultSettings,
): Validated<{ settings: FaultSettings; seed: number | undefined }> {
  const result = PATCH.safeParse(patch);
  if (!result.success) {
    const errors: FieldErrors = {};
    for (const issue of result.error.issues) {
      const keys =
        issue.code === 'unrecognized_keys' ? issue.keys : [String(issue.path[0] ?? 'payload')];
      for (const key of keys) {
        errors[key] ??=
          RULES[key] ?? (key === 'payload' ? 'must be a JSON object' : 'unknown field');
      }
    }
    return { ok: false, errors };
  }
  const { seed, ...changes } = result.data;
  const given = Object.entries(changes).filter(([, value]) => value !== undefined);
  const settings: FaultSettings = structuredClone({ ...current, ...Object.fromEntries(given) });
  return { ok: true, value: { settings, seed } };
}

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

/** The faults a request can meet, as the stats count them. */
export type FaultKind = 'latency' | 'reset' | 'hang' | 'fail' | 'conflict';

/** What happens to one request. `conflict`: a create among the drawn 409s. */
export type FaultDecision =
  | { readonly kind: 'throttle'; readonly retryAfterSeconds: number }
  | {
      readonly kind: 'admit';
      readonly latencyMs: number;
      readonly outcome: 'reset' | 'hang' | 'fail' | 'normal';
      readonly conflict: boolean;
    };

/**
 * Holds the fault settings, the PRNG and the rate limit's token bucket (refilled continuously at
 * `rateLimit` per second, holding at most max(1, rate)); `decide` is called once per API request.
 */
export class FaultInjector {
  readonly #monotonicMs: () => number;
  #settings: FaultSettings;
  #seed = 0;
  #random: () => number = Math.random;
  #tokens = 0;
  #last = 0;

  constructor(settings: FaultSettings, seed: number, monotonicMs: () => number) {
    this.#monotonicMs = monotonicMs;
    this.#settings = structuredClone(settings);
    this.reseed(seed);
  }

  /** A copy of the settings. */
  get settings(): FaultSettings {
    return structuredClone(this.#settings);
  }

  /** The settings as they stand, for the routes that read them (not copied: only read). */
  get current(): Readonly<FaultSettings> {
    return this.#settings;
  }

  get seed(): number {
    return this.#seed;
  }

  /** Replaces the settings (already checked); a new rate limit starts with a full bucket. */
  update(settings: FaultSettings): void {
    const rateChanged = settings.rateLimit !== this.#settings.rateLimit;
    this.#settings = structuredClone(settings);
    if (rateChanged) this.#refill();
  }

  /** Restarts the PRNG from `seed` and refills the bucket. */
  reseed(seed: number): void {
    this.#seed = seed >>> 0;
    this.#random = mulberry32(this.#seed);
    this.#refill();
  }

  /** Decides one request's fate. Order: rate limit, latency, reset, hang, fail. */
  decide(): FaultDecision {
    const { rateLimit, latencyMs, resetRate, hangRate, failRate, conflictRate } = this.#settings;
    if (rateLimit > 0) {
      const now = this.#monotonicMs();
      const refilled = this.#tokens + (Math.max(0, now - this.#last) / 1000) * rateLimit;
      this.#tokens = Math.min(Math.max(1, rateLimit), refilled);
      this.#last = now;
      if (this.#tokens < 1) {
        // The whole seconds (at least 1) until a token is due.
        const wait = Math.max(1, Math.ceil((1 - this.#tokens) / rateLimit));
        return { kind: 'throttle', retryAfterSeconds: wait };
      }
      this.#tokens -= 1;
    }
    // Always five draws, so changing one setting does not shift the others' sequence.
    const [latencyDraw = 0, resetDraw = 0, hangDraw = 0, failDraw = 0, conflictDraw = 0] =
      Array.from({ length: 5 }, this.#random);
    const latency = latencyMs.min + Math.floor(latencyDraw * (latencyMs.max - latencyMs.min + 1));
    let outcome: 'reset' | 'hang' | 'fail' | 'normal' = 'normal';
    if (resetDraw < resetRate) outcome = 'reset';
    else if (hangDraw < hangRate) outcome = 'hang';
    else if (failDraw < failRate) outcome = 'fail';
    return { kind: 'admit', latencyMs: latency, outcome, conflict: conflictDraw < conflictRate };
  }

  #refill(): void {
    this.#tokens = Math.max(1, this.#settings.rateLimit);
    this.#last = this.#monotonicMs();
  }
}
