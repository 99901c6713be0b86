/**
 * Validation of a whole store document: PUT /_emulator/store and the `--data` file. Loose where a
 * hand-written seed would be (defaults for what is missing, any non-empty type), strict where a
 * typo would hide (unknown fields, wrong types, one live name twice).
 */
import { KOSLI_NAME_PATTERN } from './names.ts';
import type { StoreDocument, StoredEnvironment } from './store.ts';
import { readPolicyDocuments } from './validate-policy-documents.ts';
import type { Validated } from './validation.ts';
import { describe, isRecord, isStringArray, notAnObject, toErrors } from './validation.ts';

/**
 * The wider of the two profiles' rules, so one file serves both: an environment named with `~` is
 * kept (the spec profile lists it but cannot write it, like a seeded type it would refuse).
 */
const NAME_PATTERN = KOSLI_NAME_PATTERN;

const STORED_FIELDS = new Set([
  'org',
  'name',
  'type',
  'description',
  'include_scaling',
  'require_provenance',
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
  const requireProvenance = get('require_provenance', false);
  if (typeof requireProvenance !== 'boolean') fail('require_provenance', 'must be a boolean');
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
    typeof requireProvenance !== 'boolean' ||
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
    require_provenance: requireProvenance,
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

/** Validates a whole store document; `nowSeconds` is the default `last_modified_at`. */
export function validateStoreDocument(raw: unknown, nowSeconds: number): Validated<StoreDocument> {
  if (!isRecord(raw)) return notAnObject(raw);
  const errors = new Map<string, string>();
  for (const key of Object.keys(raw)) {
    if (key !== 'version' && key !== 'orgs' && key !== 'policies') errors.set(key, 'unknown field');
  }
  if (Object.hasOwn(raw, 'version') && raw.version !== 1) errors.set('version', 'must be 1');
  if (!isRecord(raw.orgs)) {
    errors.set('orgs', 'must be an object of org name -> array of environments');
    return { ok: false, errors: toErrors(errors) };
  }
  const orgs = new Map<string, StoredEnvironment[]>();
  for (const [org, list] of Object.entries(raw.orgs)) {
    const where = `orgs.${org}`;
    if (!NAME_PATTERN.test(org)) {
      errors.set(where, `org name must match ${NAME_PATTERN.source}`);
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
  // Policy documents came later: a document without them loads with none.
  const policies = Object.hasOwn(raw, 'policies')
    ? readPolicyDocuments(raw.policies, nowSeconds, errors)
    : new Map();
  if (errors.size > 0) return { ok: false, errors: toErrors(errors) };
  return {
    ok: true,
    value: { version: 1, orgs: Object.fromEntries(orgs), policies: Object.fromEntries(policies) },
  };
}
