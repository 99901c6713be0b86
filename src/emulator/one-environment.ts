/**
 * The kosli profile's routes for one environment, outside the contract
 * (docs/api-behaviour.md#operations-outside-the-contract): GET /api/v2/environments/{org}/{name}
 * and PUT /api/v2/environments/{org}/{name}/archive, and the 404s every route below one
 * environment shares.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiDeps } from './access.ts';
import { decodeSegment, sendError, sendJson } from './http.ts';
import { namePatternFor } from './names.ts';
import { noteUnknownKeys, readJsonObject, sendInvalid } from './request-body.ts';
import { shownSegment } from './request-tokens.ts';
import { toErrors } from './validation.ts';
import { environmentDetail } from './views.ts';

/** The decoded `{name}` segment, or undefined when it cannot name an environment. */
function decodeName(raw: string, deps: ApiDeps): string | undefined {
  const name = decodeSegment(raw);
  return name !== undefined && namePatternFor(deps.profile).test(name) ? name : undefined;
}

/** Production's 404 for a name with no live environment: archived, or never there. */
function sendNotFound(res: ServerResponse, org: string, name: string, deps: ApiDeps): void {
  const shown = shownSegment(name, res, deps.tokens);
  const message = deps.store.isArchived(org, name)
    ? `Environment named '${shown}' in organization '${org}' has been archived`
    : `Environment named '${shown}' does not exist for organization '${org}'`;
  sendError(res, 404, message);
}

/**
 * The decoded name of a live environment of `org`, or undefined once production's 404 ("does
 * not exist" or "has been archived") has been sent.
 */
export function liveEnvironmentName(
  res: ServerResponse,
  org: string,
  rawName: string,
  deps: ApiDeps,
): string | undefined {
  const name = decodeName(rawName, deps);
  if (name !== undefined && deps.store.get(org, name) !== undefined) return name;
  sendNotFound(res, org, name ?? decodeSegment(rawName) ?? rawName, deps);
  return undefined;
}

/** GET one environment: the listing's fields plus `require_provenance`. */
export function readEnvironment(
  res: ServerResponse,
  org: string,
  rawName: string,
  deps: ApiDeps,
): void {
  const name = liveEnvironmentName(res, org, rawName, deps);
  const env = name === undefined ? undefined : deps.store.get(org, name);
  if (env !== undefined) sendJson(res, 200, environmentDetail(env));
}

/**
 * Archives one live environment. Production's client sends `{}`; an empty body reads as `{}`,
 * and a key in it is refused like any unknown field.
 */
export async function archiveEnvironment(
  req: IncomingMessage,
  res: ServerResponse,
  org: string,
  rawName: string,
  deps: ApiDeps,
): Promise<void> {
  const body = await readJsonObject(req, res, { emptyIsObject: true });
  if (body === undefined) return;
  const errors = new Map<string, string>();
  noteUnknownKeys(body, [], errors);
  if (errors.size > 0) {
    sendInvalid(res, toErrors(errors));
    return;
  }
  const name = liveEnvironmentName(res, org, rawName, deps);
  if (name === undefined) return;
  deps.store.archive(org, name, deps.nowSeconds());
  // Production's success answer is not known; the emulator's choice
  // (docs/api-behaviour.md#archived-environments).
  sendJson(res, 200, 'OK');
}
