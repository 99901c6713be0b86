/**
 * The Environments API itself: PUT and GET /api/v2/environments/{org}, and in the kosli profile
 * the routes outside the contract: one environment (one-environment.ts), renaming (rename.ts),
 * attached policies (attached-policies.ts), tags (tags.ts) and policy documents (policies.ts).
 * The checks before the request itself are in access.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiDeps } from './access.ts';
import { allowMethod, authorize } from './access.ts';
import { changeAttachedPolicies } from './attached-policies.ts';
import { sendError, sendJson } from './http.ts';
import { archiveEnvironment, readEnvironment } from './one-environment.ts';
import { listPolicies, putPolicy, readPolicy } from './policies.ts';
import { renameEnvironment } from './rename.ts';
import { readJsonRequest, sendInvalid } from './request-body.ts';
import type { Route } from './routes.ts';
import { parsePagination } from './pagination.ts';
import { patchTags } from './tags.ts';
import { validateEnvironmentBody } from './validate-environment.ts';
import { listingEntry } from './views.ts';

export type { ApiDeps } from './access.ts';

type ApiRoute = Exclude<Route, { kind: 'admin' | 'none' }>;

/** The methods each API route answers; any other is a 405 with this list in `Allow`. */
const ALLOWED: Record<ApiRoute['kind'], readonly string[]> = {
  environments: ['GET', 'HEAD', 'PUT'],
  environment: ['GET', 'HEAD'],
  archive: ['PUT'],
  rename: ['PUT'],
  policies: ['POST', 'DELETE'],
  tags: ['PATCH'],
  'policy-documents': ['GET', 'HEAD', 'PUT'],
  policy: ['GET', 'HEAD'],
};

function isWrite(method: string): boolean {
  return method !== 'GET' && method !== 'HEAD';
}

async function putEnvironment(
  req: IncomingMessage,
  res: ServerResponse,
  org: string,
  deps: ApiDeps,
): Promise<void> {
  const body = await readJsonRequest(req, res);
  if (body === undefined) return;
  const input = validateEnvironmentBody(body.value, deps.profile);
  if (!input.ok) {
    sendInvalid(res, input.errors);
    return;
  }
  // Checked against the store and applied in one synchronous step, so no other request can
  // archive a member in between (docs/api-behaviour.md#logical-environments).
  const members = input.value.included_environments;
  const problem =
    members === undefined ? undefined : deps.store.membersProblem(org, input.value.name, members);
  if (problem !== undefined) {
    sendInvalid(res, { included_environments: problem });
    return;
  }
  deps.store.upsert(org, input.value, deps.profile, deps.nowSeconds());
  // Production's answer for create and update alike (docs/api-behaviour.md#successful-writes).
  sendJson(res, 201, 'OK');
}

/** Code-unit order of names, whatever a listed entry's name holds. */
function byName(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const x = String(a['name']);
  const y = String(b['name']);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The org's entries as the listing shows them, with the listing faults: `org` left out, and the
 * extra entries listed as given, in name order (a stable sort: the store's entry comes first).
 */
function withListingFaults(
  entries: Record<string, unknown>[],
  org: string,
  deps: ApiDeps,
): Record<string, unknown>[] {
  const { listingExtra, listingOmitOrg } = deps.routeFaults();
  const shown = listingOmitOrg ? entries.map(({ org: _org, ...entry }) => entry) : entries;
  const extra = Object.hasOwn(listingExtra, org) ? (listingExtra[org] ?? []) : [];
  return extra.length === 0 ? shown : [...shown, ...extra].sort(byName);
}

function listEnvironments(
  res: ServerResponse,
  org: string,
  query: URLSearchParams,
  deps: ApiDeps,
): void {
  const environments = deps.store.list(org);
  if (deps.profile === 'spec') {
    const env = environments.map(({ name, type, description }) => ({
      org,
      name,
      type,
      description,
    }));
    sendJson(res, 200, { env: withListingFaults(env, org, deps) });
    return;
  }
  const pagination = parsePagination(query);
  if (!pagination.ok) {
    sendError(res, 400, 'Invalid query parameters', { errors: pagination.errors });
    return;
  }
  const listed = withListingFaults(environments.map(listingEntry), org, deps);
  if (pagination.value.kind === 'none') {
    sendJson(res, 200, listed);
    return;
  }
  const { page, perPage } = pagination.value;
  const start = (page - 1) * perPage;
  sendJson(res, 200, {
    page,
    per_page: perPage,
    total_pages: Math.ceil(listed.length / perPage),
    total_count: listed.length,
    environments: listed.slice(start, start + perPage),
    _links: {
      self: {
        href: `${deps.baseUrl()}/api/v2/environments/${encodeURIComponent(org)}?page=${page}&per_page=${perPage}`,
      },
    },
  });
}

/** Handles one request on an API route (after fault injection). */
export async function handleApi(
  req: IncomingMessage,
  res: ServerResponse,
  route: ApiRoute,
  query: URLSearchParams,
  deps: ApiDeps,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (!allowMethod(res, method, ALLOWED[route.kind])) return;
  const org = authorize(req, res, route.org, deps);
  if (org === undefined) return;
  if (isWrite(method) && (deps.routeFaults().ignoredWrites as string[]).includes(route.kind)) {
    // The fault: answered as the operation answers, and nothing is done.
    req.resume();
    sendJson(res, route.kind === 'environments' ? 201 : 200, 'OK');
    return;
  }
  switch (route.kind) {
    case 'environment':
      readEnvironment(res, org, route.name, deps);
      return;
    case 'archive':
      await archiveEnvironment(req, res, org, route.name, deps);
      return;
    case 'rename':
      await renameEnvironment(req, res, org, route.name, deps);
      return;
    case 'policies':
      await changeAttachedPolicies(req, res, org, route.name, deps);
      return;
    case 'tags':
      await patchTags(req, res, org, route.name, deps);
      return;
    case 'policy':
      readPolicy(res, org, route.name, deps);
      return;
    case 'policy-documents':
      if (method === 'PUT') await putPolicy(req, res, org, deps);
      else listPolicies(res, org, deps);
      return;
    case 'environments':
      if (method === 'PUT') await putEnvironment(req, res, org, deps);
      else listEnvironments(res, org, query, deps);
  }
}
