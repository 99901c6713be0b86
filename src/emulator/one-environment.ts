/**
 * The kosli profile's routes for one environment, outside the contract
 * (docs/api-behaviour.md#operations-outside-the-contract): GET /api/v2/environments/{org}/{name}
 * and PUT /api/v2/environments/{org}/{name}/archive.
 */
import type { ServerResponse } from 'node:http';
import type { ApiDeps } from './access.ts';
import { decodeSegment, sendError, sendJson } from './http.ts';
import { namePatternFor } from './names.ts';
import { environmentDetail } from './views.ts';

/** The decoded `{name}` segment, or undefined when it cannot name an environment. */
function decodeName(raw: string, deps: ApiDeps): string | undefined {
  const name = decodeSegment(raw);
  return name !== undefined && namePatternFor(deps.profile).test(name) ? name : undefined;
}

/** Production's 404 for a name with no live environment: archived, or never there. */
function sendNotFound(res: ServerResponse, org: string, name: string, deps: ApiDeps): void {
  const message = deps.store.isArchived(org, name)
    ? `Environment named '${name}' in organization '${org}' has been archived`
    : `Environment named '${name}' does not exist for organization '${org}'`;
  sendError(res, 404, message);
}

/** GET one environment: the listing's fields plus `require_provenance`. */
export function readEnvironment(
  res: ServerResponse,
  org: string,
  rawName: string,
  deps: ApiDeps,
): void {
  const name = decodeName(rawName, deps);
  const env = name === undefined ? undefined : deps.store.get(org, name);
  if (env === undefined) {
    sendNotFound(res, org, name ?? decodeSegment(rawName) ?? rawName, deps);
    return;
  }
  sendJson(res, 200, environmentDetail(env));
}

/**
 * Archives one live environment. Production's client sends `{}`; the body is not read, so any
 * body (or none) will do.
 */
export function archiveEnvironment(
  res: ServerResponse,
  org: string,
  rawName: string,
  deps: ApiDeps,
): void {
  const name = decodeName(rawName, deps);
  if (name === undefined || !deps.store.archive(org, name, deps.nowSeconds())) {
    sendNotFound(res, org, name ?? decodeSegment(rawName) ?? rawName, deps);
    return;
  }
  // Production's success answer is not known; the emulator's choice
  // (docs/api-behaviour.md#archived-environments).
  sendJson(res, 200, 'OK');
}
