/** Validation of fault settings: PATCH /_emulator/faults and the `faults` start-up option. */
import type { FaultSettings, IgnorableWrite } from './options.ts';
import { IGNORABLE_WRITES, MAX_LATENCY_MS } from './options.ts';
import type { Validated } from './validation.ts';
import { isRecord, notAnObject, toErrors } from './validation.ts';

/** A validated patch: the complete settings after it, and the seed to restart the PRNG from. */
export interface FaultPatch {
  readonly settings: FaultSettings;
  readonly seed: number | undefined;
}

const FAULT_FIELDS = new Set([
  'latencyMs',
  'failRate',
  'resetRate',
  'hangRate',
  'rateLimit',
  'listingExtra',
  'listingOmitOrg',
  'ignoredWrites',
  'seed',
]);

/** Entries a listing may be given per org: JSON objects, anything in them (that is the fault). */
function checkListingExtra(value: unknown): FaultSettings['listingExtra'] | undefined {
  if (!isRecord(value)) return undefined;
  const extra = new Map<string, Record<string, unknown>[]>();
  for (const [org, entries] of Object.entries(value)) {
    if (org === '' || !Array.isArray(entries) || !entries.every(isRecord)) return undefined;
    extra.set(org, entries);
  }
  return Object.fromEntries(extra);
}

function checkRate(errors: Map<string, string>, key: string, value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) {
    errors.set(key, 'must be a number from 0 to 1');
    return undefined;
  }
  return value;
}

function isWholeMs(value: unknown): value is number {
  return (
    typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_LATENCY_MS
  );
}

/**
 * Validates a partial fault settings object and applies it over `current`. `latencyMs` is
 * `{min, max}` or one number (min = max).
 */
export function validateFaultPatch(patch: unknown, current: FaultSettings): Validated<FaultPatch> {
  if (!isRecord(patch)) return notAnObject(patch);
  const errors = new Map<string, string>();
  const next: FaultSettings = { ...current, latencyMs: { ...current.latencyMs } };
  for (const key of Object.keys(patch)) {
    if (!FAULT_FIELDS.has(key)) errors.set(key, 'unknown field');
  }
  if (Object.hasOwn(patch, 'latencyMs')) {
    const latency = patch.latencyMs;
    if (isWholeMs(latency)) next.latencyMs = { min: latency, max: latency };
    else if (
      isRecord(latency) &&
      isWholeMs(latency.min) &&
      isWholeMs(latency.max) &&
      latency.min <= latency.max &&
      Object.keys(latency).every((key) => key === 'min' || key === 'max')
    ) {
      next.latencyMs = { min: latency.min, max: latency.max };
    } else {
      errors.set(
        'latencyMs',
        `must be {"min": N, "max": N} or N, whole milliseconds 0..${MAX_LATENCY_MS}, min <= max`,
      );
    }
  }
  for (const key of ['failRate', 'resetRate', 'hangRate'] as const) {
    if (!Object.hasOwn(patch, key)) continue;
    const rate = checkRate(errors, key, patch[key]);
    if (rate !== undefined) next[key] = rate;
  }
  if (Object.hasOwn(patch, 'rateLimit')) {
    const rate = patch.rateLimit;
    if (typeof rate === 'number' && Number.isFinite(rate) && rate >= 0 && rate <= 1_000_000) {
      next.rateLimit = rate;
    } else {
      errors.set('rateLimit', 'must be a number of requests per second from 0 (off) to 1000000');
    }
  }
  if (Object.hasOwn(patch, 'listingExtra')) {
    const extra = checkListingExtra(patch.listingExtra);
    if (extra === undefined) {
      errors.set(
        'listingExtra',
        'must be {"ORG": [ENTRY, ...]}: per org, a list of JSON objects to list besides its environments',
      );
    } else next.listingExtra = extra;
  }
  if (Object.hasOwn(patch, 'listingOmitOrg')) {
    if (typeof patch.listingOmitOrg === 'boolean') next.listingOmitOrg = patch.listingOmitOrg;
    else errors.set('listingOmitOrg', 'must be true or false');
  }
  if (Object.hasOwn(patch, 'ignoredWrites')) {
    const writes = patch.ignoredWrites;
    const known = (w: unknown): w is IgnorableWrite =>
      (IGNORABLE_WRITES as readonly unknown[]).includes(w);
    if (Array.isArray(writes) && writes.every(known)) next.ignoredWrites = [...new Set(writes)];
    else errors.set('ignoredWrites', `must be a list of ${IGNORABLE_WRITES.join(', ')}`);
  }
  let seed: number | undefined;
  if (Object.hasOwn(patch, 'seed')) {
    const raw = patch.seed;
    if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0 && raw <= 0xffffffff) {
      seed = raw;
    } else {
      errors.set('seed', 'must be a whole number from 0 to 4294967295');
    }
  }
  if (errors.size > 0) return { ok: false, errors: toErrors(errors) };
  return { ok: true, value: { settings: next, seed } };
}
