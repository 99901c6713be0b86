/**
 * Renaming an environment (kosli profile; docs/api-behaviour.md#renaming):
 * `PUT /api/v2/environments/{org}/{name}/rename`, body `{"new_name": "..."}`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiDeps } from './access.ts';
import { sendJson } from './http.ts';
import { namePatternFor } from './names.ts';
import { liveEnvironmentName } from './one-environment.ts';
import { noteUnknownKeys, readValidBody, sendInvalid } from './request-body.ts';
import type { Validated } from './validation.ts';
import { describe, toErrors } from './validation.ts';

/** Validates `{"new_name": "..."}`: the one key, a name by the profile's rule. */
export function validateRename(
  body: Readonly<Record<string, unknown>>,
  pattern: RegExp,
): Validated<string> {
  const errors = new Map<string, string>();
  noteUnknownKeys(body, ['new_name'], errors);
  const name = body.new_name;
  if (!Object.hasOwn(body, 'new_name')) errors.set('new_name', 'is required');
  else if (typeof name !== 'string') {
    errors.set('new_name', `must be a string, got ${describe(name)}`);
  } else if (!pattern.test(name))
    errors.set('new_name', `'${name}' does not match ${pattern.source}`);
  if (errors.size > 0 || typeof name !== 'string') return { ok: false, errors: toErrors(errors) };
  return { ok: true, value: name };
}

/**
 * Renames a live environment, keeping its fields, tags, policies and timestamps. A new name that
 * a live environment holds (the old name included) is a 400: a 409 would be retried by clients
 * that read it as a lock conflict, and this conflict does not pass.
 */
export async function renameEnvironment(
  req: IncomingMessage,
  res: ServerResponse,
  org: string,
  rawName: string,
  deps: ApiDeps,
): Promise<void> {
  const newName = await readValidBody(req, res, (body) =>
    validateRename(body, namePatternFor(deps.profile)),
  );
  if (newName === undefined) return;
  const name = liveEnvironmentName(res, org, rawName, deps);
  if (name === undefined) return;
  // Checked and applied in one synchronous step, so no other request can take the name between.
  if (deps.store.rename(org, name, newName, deps.nowSeconds()) === 'taken') {
    sendInvalid(res, {
      new_name: `an environment named '${newName}' already exists in organization '${org}'`,
    });
    return;
  }
  sendJson(res, 200, 'OK');
}
