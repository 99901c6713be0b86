/**
 * The emulator's own validation of everything a client sends. It deliberately shares no code with
 * the envsync client's validation (STYLE.md, "emulator/"): one misreading of the contract must not
 * be able to hide itself on both sides.
 */
import type { FaultSettings, Profile } from './options.ts';
import { MAX_LATENCY_MS } from './options.ts';
import type { EnvironmentInput, StoreDocument, StoredEnvironment } from './store.ts';

/** Environment names (observed-behaviour.md, "Validation"). */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Org names in paths; the spec shows none, so the emulator uses the environment-name rule. */
export const ORG_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const SPEC_TYPES: readonly string[] = ['K8S', 'S3', 'logical'];
export const KOSLI_TYPES: readonly string[] = [
  ...SPEC_TYPES,
  'ECS',
  'lambda',
  'server',
  'docker',
  'azure-apps',
  'cloud-run',
];

/** The types a profile accepts in a PUT (case-sensitive). */
export function typesFor(profile: Profile): readonly string[] {
  return profile === 'kosli' ? KOSLI_TYPES : SPEC_TYPES;
}

export type FieldErrors = Record<string, string>;

export type Validated<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: FieldErrors };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Builds an errors object from a Map, so a key like "__proto__" stays an ordinary key. */
function toErrors(errors: Map<string, string>): FieldErrors {
  return Object.fromEntries(errors);
}

const ENVIRONMENT_FIELDS = new Set(['name', 'description', 'type', 'include_scaling', 'policies']);

/** Validates a parsed PUT /api/v2/environments/{org} body for `profile`. */
export function validateEnvironmentBody(
  body: unknown,
  profile: Profile,
): Validated<EnvironmentInput> {
  const errors = new Map<string, string>();
  if (!isRecord(body)) {
    errors.set('payload', `must be a JSON object, got ${describe(body)}`);
    return { ok: false, errors: toErrors(errors) };
  }
  for (const key of Object.keys(body)) {
    if (!ENVIRONMENT_FIELDS.has(key)) errors.set(key, 'unknown field');
  }
  const { name, description, type } = body;
  if (!Object.hasOwn(body, 'name')) errors.set('name', 'is required');
  else if (typeof name !== 'string') errors.set('name', `must be a string, got ${describe(name)}`);
  else if (!NAME_PATTERN.test(name))
    errors.set('name', `'${name}' does not match ${NAME_PATTERN.source}`);

  if (!Object.hasOwn(body, 'description')) errors.set('description', 'is required');
  else if (typeof description !== 'string') {
    errors.set('description', `must be a string, got ${describe(description)}`);
  }

  const allowed = typesFor(profile);
  if (!Object.hasOwn(body, 'type')) errors.set('type', 'is required');
  else if (typeof type !== 'string') errors.set('type', `must be a string, got ${describe(type)}`);
  else if (!allowed.includes(type)) {
    errors.set('type', `'${type}' is not one of ${allowed.join(', ')}`);
  }

  const includeScaling = Object.hasOwn(body, 'include_scaling') ? body.include_scaling : false;
  if (typeof includeScaling !== 'boolean') {
    errors.set('include_scaling', `must be a boolean, got ${describe(includeScaling)}`);
  }
  const policies = Object.hasOwn(body, 'policies') ? body.policies : [];
  if (!isStringArray(policies)) errors.set('policies', 'must be an array of strings');

  if (
    errors.size > 0 ||
    typeof name !== 'string' ||
    typeof description !== 'string' ||
    typeof type !== 'string' ||
    typeof includeScaling !== 'boolean' ||
    !isStringArray(policies)
  ) {
    return { ok: false, errors: toErrors(errors) };
  }
  return {
    ok: true,
    value: { name, description, type, include_scaling: includeScaling, policies: [...policies] },
  };
}

/** The kosli profile's listing query: no page parameters, a valid page request, or errors. */
export type Pagination =
  | { readonly kind: 'none' }
  | { readonly kind: 'page'; readonly page: number; readonly perPage: number };

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 50;

function parseWhole(raw: string): number | undefined {
  return /^\d{1,9}$/.test(raw) ? Number(raw) : undefined;
}

/** Reads `page` (>= 1) and `per_page` (1..50) from a listing query. */
export function parsePagination(query: URLSearchParams): Validated<Pagination> {
  const rawPage = query.get('page');
  const rawPerPage = query.get('per_page');
  if (rawPage === null && rawPerPage === null) return { ok: true, value: { kind: 'none' } };
  const errors = new Map<string, string>();
  const page = rawPage === null ? 1 : parseWhole(rawPage);
  if (page === undefined || page < 1) errors.set('page', 'must be a whole number from 1');
  const perPage = rawPerPage === null ? DEFAULT_PER_PAGE : parseWhole(rawPerPage);
  if (perPage === undefined || perPage < 1 || perPage > MAX_PER_PAGE) {
    errors.set('per_page', `must be a whole number from 1 to ${MAX_PER_PAGE}`);
  }
  if (errors.size > 0 || page === undefined || perPage === undefined) {
    return { ok: false, errors: toErrors(errors) };
  }
  return { ok: true, value: { kind: 'page', page, perPage } };
}

/** The Authorization header, read. */
export type Credentials =
  | { readonly kind: 'missing' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'scheme'; readonly scheme: string }
  | { readonly kind: 'bearer'; readonly token: string };

/** RFC 6750 b64token. */
const TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Reads `Authorization: Bearer <token>` (the scheme is matched case-insensitively). */
export function parseAuthorization(header: string | undefined): Credentials {
  if (header === undefined || header.trim() === '') return { kind: 'missing' };
  const match = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?: +(\S+))? *$/.exec(header.trim());
  if (match === null) return { kind: 'malformed' };
  const scheme = match[1] ?? '';
  const token = match[2];
  if (scheme.toLowerCase() !== 'bearer') return { kind: 'scheme', scheme };
  if (token === undefined || !TOKEN_PATTERN.test(token)) return { kind: 'malformed' };
  return { kind: 'bearer', token };
}

/** The fault settings patch of PATCH /_emulator/faults (`seed` restarts the PRNG). */
export interface FaultPatch {
  readonly settings: FaultSettings;
  readonly seed: number | undefined;
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

const FAULT_FIELDS = new Set([
  'latencyMs',
  'failRate',
  'resetRate',
  'hangRate',
  'rateLimit',
  'seed',
]);

/**
 * Validates a partial fault settings object and applies it over `current`. `latencyMs` is
 * `{min, max}` or one number (min = max).
 */
export function validateFaultPatch(patch: unknown, current: FaultSettings): Validated<FaultPatch> {
  const errors = new Map<string, string>();
  if (!isRecord(patch)) {
    errors.set('payload', `must be a JSON object, got ${describe(patch)}`);
    return { ok: false, errors: toErrors(errors) };
  }
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

const STORED_FIELDS = new Set([
  'org',
  'name',
  'type',
  'description',
  'include_scaling',
  'policies',
  'tags',
  'last_modified_at',
  'last_reported_at',
  'last_changed_at',
  'state',
  'included_environments',
  'archived',
]);

function isNumberOrNull(value: unknown): value is number | null {
  return value === null || (typeof value === 'number' && Number.isFinite(value));
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((item) => typeof item === 'string');
}

/** Reads one stored environment loosely: defaults for what is missing, errors for what is wrong. */
function readStoredEnvironment(
  org: string,
  raw: unknown,
  where: string,
  nowSeconds: number,
  errors: Map<string, string>,
): StoredEnvironment | undefined {
  if (!isRecord(raw)) {
    errors.set(where, `must be an object, got ${describe(raw)}`);
    return undefined;
  }
  const before = errors.size;
  const fail = (field: string, reason: string): void => {
    errors.set(`${where}.${field}`, reason);
  };
  for (const key of Object.keys(raw)) if (!STORED_FIELDS.has(key)) fail(key, 'unknown field');
  const get = (key: string, fallback: unknown): unknown =>
    Object.hasOwn(raw, key) ? raw[key] : fallback;

  const orgField = get('org', org);
  if (orgField !== org) fail('org', `must be "${org}" (the key it is listed under) or absent`);
  const name = get('name', undefined);
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) {
    fail('name', `must be a string matching ${NAME_PATTERN.source}`);
  }
  const type = get('type', undefined);
  if (typeof type !== 'string' || type === '') fail('type', 'must be a non-empty string');
  const description = get('description', undefined);
  if (typeof description !== 'string') fail('description', 'must be a string');
  const includeScaling = get('include_scaling', false);
  if (typeof includeScaling !== 'boolean') fail('include_scaling', 'must be a boolean');
  const policies = get('policies', []);
  if (policies !== null && !isStringArray(policies)) {
    fail('policies', 'must be an array of strings or null');
  }
  const tags = get('tags', {});
  if (!isStringRecord(tags)) fail('tags', 'must be an object of strings');
  const modified = get('last_modified_at', nowSeconds);
  if (typeof modified !== 'number' || !Number.isFinite(modified)) {
    fail('last_modified_at', 'must be a number (epoch seconds)');
  }
  const reported = get('last_reported_at', null);
  if (!isNumberOrNull(reported)) fail('last_reported_at', 'must be a number or null');
  const changed = get('last_changed_at', modified);
  if (!isNumberOrNull(changed)) fail('last_changed_at', 'must be a number or null');
  const state = get('state', null);
  if (state !== null && typeof state !== 'boolean') fail('state', 'must be a boolean or null');
  const included = get('included_environments', type === 'logical' ? [] : null);
  if (included !== null && !isStringArray(included)) {
    fail('included_environments', 'must be an array of strings or null');
  }
  const archived = get('archived', false);
  if (typeof archived !== 'boolean') fail('archived', 'must be a boolean');

  if (
    errors.size > before ||
    typeof name !== 'string' ||
    typeof type !== 'string' ||
    typeof description !== 'string' ||
    typeof includeScaling !== 'boolean' ||
    (policies !== null && !isStringArray(policies)) ||
    !isStringRecord(tags) ||
    typeof modified !== 'number' ||
    !isNumberOrNull(reported) ||
    !isNumberOrNull(changed) ||
    (state !== null && typeof state !== 'boolean') ||
    (included !== null && !isStringArray(included)) ||
    typeof archived !== 'boolean'
  ) {
    return undefined;
  }
  return {
    org,
    name,
    type,
    description,
    include_scaling: includeScaling,
    policies: policies === null ? null : [...policies],
    tags: { ...tags },
    last_modified_at: modified,
    last_reported_at: reported,
    last_changed_at: changed,
    state,
    included_environments: included === null ? null : [...included],
    archived,
  };
}

/**
 * Validates a whole store document (PUT /_emulator/store, the `--data` file). Loose: missing
 * optional fields get defaults and any non-empty `type` is kept, but unknown fields, wrong types
 * and two live environments with one name are errors.
 */
export function validateStoreDocument(raw: unknown, nowSeconds: number): Validated<StoreDocument> {
  const errors = new Map<string, string>();
  if (!isRecord(raw)) {
    errors.set('payload', `must be a JSON object, got ${describe(raw)}`);
    return { ok: false, errors: toErrors(errors) };
  }
  for (const key of Object.keys(raw)) {
    if (key !== 'version' && key !== 'orgs') errors.set(key, 'unknown field');
  }
  if (Object.hasOwn(raw, 'version') && raw.version !== 1) errors.set('version', 'must be 1');
  if (!isRecord(raw.orgs)) {
    errors.set('orgs', 'must be an object of org name -> array of environments');
    return { ok: false, errors: toErrors(errors) };
  }
  const orgs = new Map<string, StoredEnvironment[]>();
  for (const [org, list] of Object.entries(raw.orgs)) {
    const where = `orgs.${org}`;
    if (!ORG_PATTERN.test(org)) {
      errors.set(where, `org name must match ${ORG_PATTERN.source}`);
      continue;
    }
    if (!Array.isArray(list)) {
      errors.set(where, 'must be an array of environments');
      continue;
    }
    const environments: StoredEnvironment[] = [];
    const liveNames = new Set<string>();
    list.forEach((item: unknown, index) => {
      const env = readStoredEnvironment(org, item, `${where}[${index}]`, nowSeconds, errors);
      if (env === undefined) return;
      if (!env.archived) {
        if (liveNames.has(env.name)) {
          errors.set(`${where}[${index}].name`, `a live environment '${env.name}' is listed twice`);
        }
        liveNames.add(env.name);
      }
      environments.push(env);
    });
    orgs.set(org, environments);
  }
  if (errors.size > 0) return { ok: false, errors: toErrors(errors) };
  return { ok: true, value: { version: 1, orgs: Object.fromEntries(orgs) } };
}
