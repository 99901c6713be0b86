/**
 * Attaching and detaching policies (kosli profile; docs/api-behaviour.md#policies):
 * `POST` and `DELETE /api/v2/environments/{org}/{name}/policies`, body `{"policy_names": [...]}`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiDeps } from './access.ts';
import { sendJson } from './http.ts';
import { namePatternFor } from './names.ts';
import { liveEnvironmentName } from './one-environment.ts';
import { noteUnknownKeys, readValidBody, sendInvalid } from './request-body.ts';
import type { Validated } from './validation.ts';
import { describe, toErrors } from './validation.ts';

/** Validates `{"policy_names": [...]}`: one or more policy names, listing every problem. */
export function validatePolicyNames(
  body: Readonly<Record<string, unknown>>,
  pattern: RegExp,
): Validated<string[]> {
  const errors = new Map<string, string>();
  noteUnknownKeys(body, ['policy_names'], errors);
  const names = body.policy_names;
  if (!Object.hasOwn(body, 'policy_names')) errors.set('policy_names', 'is required');
  else if (!Array.isArray(names)) {
    errors.set('policy_names', `must be a list of policy names, got ${describe(names)}`);
  } else if (names.length === 0) errors.set('policy_names', 'must name at least one policy');
  else {
    const bad = names.find((name) => typeof name !== 'string' || !pattern.test(name));
    if (bad !== undefined) {
      errors.set(
        'policy_names',
        typeof bad === 'string'
          ? `'${bad}' does not match ${pattern.source}`
          : `must hold strings only, got ${describe(bad)}`,
      );
    }
  }
  if (errors.size > 0 || !Array.isArray(names)) return { ok: false, errors: toErrors(errors) };
  return { ok: true, value: names.filter((name): name is string => typeof name === 'string') };
}

/** The given names without repeats, in the order first given. */
function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}

/**
 * Attaches (`POST`) or detaches (`DELETE`) policies. Attaching needs a policy document of each
 * name in the org (else 400 naming each missing one, and nothing is attached); a name already
 * attached stays once. Detaching a name that is not attached is not an error.
 */
export async function changeAttachedPolicies(
  req: IncomingMessage,
  res: ServerResponse,
  org: string,
  rawName: string,
  deps: ApiDeps,
): Promise<void> {
  const requested = await readValidBody(req, res, (body) =>
    validatePolicyNames(body, namePatternFor(deps.profile)),
  );
  if (requested === undefined) return;
  const name = liveEnvironmentName(res, org, rawName, deps);
  if (name === undefined) return;
  const names = unique(requested);
  const attach = req.method === 'POST';
  if (attach) {
    const missing = names.filter((policy) => !deps.store.policies.has(org, policy));
    if (missing.length > 0) {
      const problems = missing.map(
        (policy) => `policy '${policy}' does not exist in organization '${org}'`,
      );
      sendInvalid(res, { policy_names: problems.join('; ') });
      return;
    }
  }
  deps.store.update(
    org,
    name,
    (env) => {
      const attached = env.policies ?? [];
      return {
        policies: attach
          ? [...attached, ...names.filter((policy) => !attached.includes(policy))]
          : attached.filter((policy) => !names.includes(policy)),
      };
    },
    deps.nowSeconds(),
  );
  // Production's success body is not published; the emulator answers as the archive route does.
  sendJson(res, 200, 'OK');
}
