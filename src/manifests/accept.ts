import { ENVIRONMENT_TYPES, NAME_PATTERN } from './names.ts';

/**
 * The fast path's check of one parsed manifest document, without the schema.
 *
 * The zod schema in schema.ts is the authority: it decides, it words every message, and the
 * JSON Schema comes from it. But it copies every object it reads, and at 100,000 environments
 * that was a tenth of a no-op plan (cold JIT included). This check only ever says "certainly
 * valid, and here it is": it reads the values in place, and anything it does not recognise,
 * wrong or merely unusual, returns undefined and goes to the schema. A property test
 * (test/manifests/accept.test.ts) checks that it accepts exactly what the schema accepts, with
 * the same result.
 */

const TYPES: ReadonlySet<string> = new Set(ENVIRONMENT_TYPES);
const NONE: readonly string[] = Object.freeze([]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** True when every own key of `value` is one of `allowed` (strictObject's rule). */
function onlyKeys(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key of Object.keys(value)) if (!allowed.includes(key)) return false;
  return true;
}

const ROOT_KEYS = ['org', 'environments'];
const ENVIRONMENT_KEYS = ['name', 'type', 'description', 'include_scaling', 'policies'];

function isName(value: unknown): value is string {
  return typeof value === 'string' && NAME_PATTERN.test(value);
}

/** A list of distinct strings (the schema's `policies`). */
function isPolicyList(value: unknown): value is readonly string[] {
  if (!Array.isArray(value)) return false;
  const seen = value.length > 16 ? new Set<unknown>() : undefined;
  for (let i = 0; i < value.length; i++) {
    const policy: unknown = value[i];
    if (typeof policy !== 'string') return false;
    if (seen === undefined ? i > 0 && value.lastIndexOf(policy, i - 1) >= 0 : seen.has(policy))
      return false;
    seen?.add(policy);
  }
  return true;
}

/** Builds the caller's object from one accepted environment (fields as the schema outputs them). */
export type BuildEnvironment<T> = (
  name: string,
  type: string,
  description: string,
  includeScaling: boolean,
  policies: readonly string[],
) => T;

function acceptEnvironment<T>(value: unknown, build: BuildEnvironment<T>): T | undefined {
  if (!isPlainObject(value) || !onlyKeys(value, ENVIRONMENT_KEYS)) return undefined;
  const { name, type, description, include_scaling: includeScaling, policies } = value;
  if (!isName(name) || typeof type !== 'string' || !TYPES.has(type)) return undefined;
  if (typeof description !== 'string') return undefined;
  if (includeScaling !== undefined && typeof includeScaling !== 'boolean') return undefined;
  if (policies !== undefined && !isPolicyList(policies)) return undefined;
  return build(name, type, description, includeScaling ?? false, policies ?? NONE);
}

/**
 * The document's org and its environments built by `build`, when the schema certainly accepts
 * the document; else undefined (ask the schema).
 */
export function acceptDocument<T>(
  value: unknown,
  build: BuildEnvironment<T>,
): { org: string; environments: T[] } | undefined {
  if (!isPlainObject(value) || !onlyKeys(value, ROOT_KEYS)) return undefined;
  const { org, environments } = value;
  if (!isName(org) || !Array.isArray(environments)) return undefined;
  const accepted: T[] = [];
  for (const entry of environments as unknown[]) {
    const environment = acceptEnvironment(entry, build);
    if (environment === undefined) return undefined;
    accepted.push(environment);
  }
  return { org, environments: accepted };
}
