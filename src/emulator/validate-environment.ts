/** Validation of the PUT /api/v2/environments/{org} body (docs/api-behaviour.md#validation-errors). */
import { namePatternFor, typesFor } from './names.ts';
import type { Profile } from './options.ts';
import type { EnvironmentInput } from './store.ts';
import type { Validated } from './validation.ts';
import { describe, isRecord, isStringArray, notAnObject, toErrors } from './validation.ts';

/** The fields the contract defines; anything else is refused, as production does. */
const SPEC_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'description',
  'type',
  'include_scaling',
  'policies',
]);
/** Production's published schema adds two (docs/api-behaviour.md#request-body-schema). */
const KOSLI_FIELDS: ReadonlySet<string> = new Set([
  ...SPEC_FIELDS,
  'require_provenance',
  'included_environments',
]);

/**
 * An optional field's value, or undefined when it is absent. Production reads `null` as "not
 * given"; the contract shows no null, so the spec profile passes it on to be refused.
 */
function optional(body: Record<string, unknown>, key: string, profile: Profile): unknown {
  if (!Object.hasOwn(body, key)) return undefined;
  const value = body[key];
  return value === null && profile === 'kosli' ? undefined : value;
}

/**
 * The problem with `members` as the members of an environment of `type`, or undefined. Whether
 * each member exists is the store's to say, once the body itself is valid.
 */
function membersProblem(members: unknown, type: unknown, pattern: RegExp): string | undefined {
  if (!isStringArray(members)) return 'must be a list of environment names or null';
  if (typeof type === 'string' && type !== 'logical') {
    return `only a logical environment includes others; this one is of type '${type}'`;
  }
  const seen = new Set<string>();
  for (const member of members) {
    if (!pattern.test(member)) return `'${member}' does not match ${pattern.source}`;
    if (seen.has(member)) return `'${member}' is listed more than once`;
    seen.add(member);
  }
  return undefined;
}

/** Validates a parsed PUT body for `profile`, listing every problem at once. */
export function validateEnvironmentBody(
  body: unknown,
  profile: Profile,
): Validated<EnvironmentInput> {
  if (!isRecord(body)) return notAnObject(body);
  const errors = new Map<string, string>();
  const fields = profile === 'kosli' ? KOSLI_FIELDS : SPEC_FIELDS;
  for (const key of Object.keys(body)) {
    if (!fields.has(key)) errors.set(key, 'unknown field');
  }
  const { name, description, type } = body;
  const namePattern = namePatternFor(profile);
  if (!Object.hasOwn(body, 'name')) errors.set('name', 'is required');
  else if (typeof name !== 'string') errors.set('name', `must be a string, got ${describe(name)}`);
  else if (!namePattern.test(name))
    errors.set('name', `'${name}' does not match ${namePattern.source}`);

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

  // A field not given takes its default on a create and keeps its value on an update (store.ts).
  const includeScaling = optional(body, 'include_scaling', profile);
  if (includeScaling !== undefined && typeof includeScaling !== 'boolean') {
    errors.set('include_scaling', `must be a boolean, got ${describe(includeScaling)}`);
  }
  // The spec profile has refused these two as unknown fields above.
  const kosliOnly = (key: string): unknown =>
    profile === 'kosli' ? optional(body, key, profile) : undefined;
  const requireProvenance = kosliOnly('require_provenance');
  if (requireProvenance !== undefined && typeof requireProvenance !== 'boolean') {
    errors.set('require_provenance', `must be a boolean, got ${describe(requireProvenance)}`);
  }
  const policies = optional(body, 'policies', profile);
  if (policies !== undefined && !isStringArray(policies)) {
    errors.set('policies', `must be an array of strings${profile === 'kosli' ? ' or null' : ''}`);
  }
  const members = kosliOnly('included_environments');
  const membersError =
    members === undefined ? undefined : membersProblem(members, type, namePattern);
  if (membersError !== undefined) errors.set('included_environments', membersError);

  if (
    errors.size > 0 ||
    typeof name !== 'string' ||
    typeof description !== 'string' ||
    typeof type !== 'string' ||
    (includeScaling !== undefined && typeof includeScaling !== 'boolean') ||
    (requireProvenance !== undefined && typeof requireProvenance !== 'boolean') ||
    (policies !== undefined && !isStringArray(policies)) ||
    (members !== undefined && !isStringArray(members))
  ) {
    return { ok: false, errors: toErrors(errors) };
  }
  return {
    ok: true,
    value: {
      name,
      description,
      type,
      include_scaling: includeScaling,
      require_provenance: requireProvenance,
      policies: policies === undefined ? undefined : [...policies],
      included_environments: members === undefined ? undefined : [...members],
    },
  };
}
