/** Validation of the PUT /api/v2/environments/{org} body (docs/api-behaviour.md#validation-errors). */
import { NAME_PATTERN, typesFor } from './names.ts';
import type { Profile } from './options.ts';
import type { EnvironmentInput } from './store.ts';
import type { Validated } from './validation.ts';
import { describe, isRecord, isStringArray, notAnObject, toErrors } from './validation.ts';

/** The fields the contract defines; anything else is refused, as production does. */
const ENVIRONMENT_FIELDS = new Set(['name', 'description', 'type', 'include_scaling', 'policies']);

/** Validates a parsed PUT body for `profile`, listing every problem at once. */
export function validateEnvironmentBody(
  body: unknown,
  profile: Profile,
): Validated<EnvironmentInput> {
  if (!isRecord(body)) return notAnObject(body);
  const errors = new Map<string, string>();
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
