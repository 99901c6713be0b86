/** Fault injection (docs/emulator.md): the settings, a seeded PRNG, the rate limit's bucket. */
import { z } from 'zod';
import { isRecord, nameSchema, type FieldErrors, type Validated } from './validation.ts';

const IGNORABLE_WRITES = [
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
const MAX_LATENCY_MS = 600_000;
const rate = z.number().min(0).max(1).default(0);
const wholeMs = z.number().int().min(0).max(MAX_LATENCY_MS);
const orgs = <T extends z.ZodType>(key: z.ZodType<string>, value: T) =>
  z.record(key, z.array(value)).default({});

const SETTINGS = z.strictObject({
  latencyMs: z
    .union([
      wholeMs.transform((ms) => ({ min: ms, max: ms })),
      z.strictObject({ min: wholeMs, max: wholeMs }),
    ])
    .refine(({ min, max }) => min <= max)
    .default({ min: 0, max: 0 }),
  failRate: rate,
  resetRate: rate,
  hangRate: rate,
  conflictRate: rate,
  /** Requests per second allowed by a token bucket (burst = max(1, rate)); 0 = off. */
  rateLimit: z.number().min(0).max(1_000_000).default(0),
  createHoldMs: wholeMs.default(0),
  listingExtra: orgs(z.string().min(1), z.custom<Record<string, unknown>>(isRecord)),
  listingOmitOrg: z.boolean().default(false),
  ignoredWrites: z
    .array(z.enum(IGNORABLE_WRITES))
    .transform((writes) => [...new Set(writes)])
    .default([]),
  placeholders: orgs(z.union([z.literal('*'), nameSchema]), nameSchema),
});
export type FaultSettings = z.output<typeof SETTINGS>;
export const NO_FAULTS: FaultSettings = SETTINGS.parse({});

const PATCH = SETTINGS.extend({ seed: z.number().int().min(0).max(0xffffffff) }).partial();
const RATE = 'must be a number from 0 to 1';
const RULES: Readonly<Record<string, string>> = {
  latencyMs: `must be {"min": N, "max": N} or N, whole milliseconds 0..${MAX_LATENCY_MS}, min <= max`,
  failRate: RATE,
  resetRate: RATE,
  hangRate: RATE,
  conflictRate: RATE,
  rateLimit: 'must be a number of requests per second from 0 (off) to 1000000',
  createHoldMs: `must be whole milliseconds from 0 to ${MAX_LATENCY_MS}`,
  listingExtra:
    'must be {"ORG": [ENTRY, ...]}: per org, a list of JSON objects to list besides its environments',
  listingOmitOrg: 'must be true or false',
  ignoredWrites: `must be a list of ${IGNORABLE_WRITES.join(', ')}`,
  placeholders: 'must be {"ORG": ["NAME", ...]} ("*" for every org), each a valid name',
  seed: 'must be a whole number from 0 to 4294967295',
};

/** Checks a partial settings object: the settings it makes over `current`, and the seed given. */
export function patchFaults(
  patch: unknown,
  current: FaultSettings,
): Validated<{ settings: FaultSettings; seed: number | undefined }> {
  const result = PATCH.safeParse(patch);
  if (!result.success) {
    const errors: FieldErrors = {};
    for (const issue of result.error.issues) {
      const unknown = issue.code === 'unrecognized_keys';
      for (const key of unknown ? issue.keys : [String(issue.path[0] ?? 'payload')]) {
        errors[key] ??=
          RULES[key] ?? (key === 'payload' ? 'must be a JSON object' : 'unknown field');
      }
    }
    return { ok: false, errors };
  }
  // The keys given, not the defaults the others got.
  const { seed, ...changes } = result.data;
  const given = Object.entries(changes).filter(([key]) => Object.hasOwn(patch as object, key));
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

export type FaultKind = 'latency' | 'reset' | 'hang' | 'fail' | 'conflict';

/** What happens to one request. `conflict`: a create would be among the drawn 409s. */
export type FaultDecision = ReturnType<FaultInjector['decide']>;

/** The fault settings, the PRNG and the rate limit's bucket; `decide` once per API request. */
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

  get settings(): Readonly<FaultSettings> {
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

  reseed(seed: number): void {
    this.#seed = seed >>> 0;
    this.#random = mulberry32(this.#seed);
    this.#refill();
  }

  decide() {
    const { rateLimit, latencyMs, resetRate, hangRate, failRate, conflictRate } = this.#settings;
    if (rateLimit > 0) {
      const now = this.#monotonicMs();
      const refilled = this.#tokens + (Math.max(0, now - this.#last) / 1000) * rateLimit;
      this.#tokens = Math.min(Math.max(1, rateLimit), refilled);
      this.#last = now;
      if (this.#tokens < 1) {
        // The whole seconds (at least 1) until a token is due.
        const wait = Math.max(1, Math.ceil((1 - this.#tokens) / rateLimit));
        return { kind: 'throttle' as const, retryAfterSeconds: wait };
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
    const conflict = conflictDraw < conflictRate;
    return { kind: 'admit' as const, latencyMs: latency, outcome, conflict };
  }

  #refill(): void {
    this.#tokens = Math.max(1, this.#settings.rateLimit);
    this.#last = this.#monotonicMs();
  }
}
