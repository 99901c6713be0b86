/**
 * The Environments API itself: PUT and GET /api/v2/environments/{org}, and in the kosli profile
 * the routes for one environment (one-environment.ts). The checks before the request itself are
 * in access.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiDeps } from './access.ts';
import { allowMethod, authorize } from './access.ts';
import { MAX_BODY_BYTES } from './options.ts';
import { parseJson, readBody, sendError, sendJson } from './http.ts';
import { archiveEnvironment, readEnvironment } from './one-environment.ts';
import type { Route } from './routes.ts';
import { parsePagination } from './pagination.ts';
import { validateEnvironmentBody } from './validate-environment.ts';
import { listingEntry } from './views.ts';

export type { ApiDeps } from './access.ts';

const VALIDATION_FAILED = 'Input payload validation failed';

/** The methods each API route answers; any other is a 405 with this list in `Allow`. */
const ALLOWED: Record<ApiRoute['kind'], readonly string[]> = {
  environments: ['GET', 'HEAD', 'PUT'],
  environment: ['GET', 'HEAD'],
  archive: ['PUT'],
};

type ApiRoute = Extract<Route, { kind: 'environments' | 'environment' | 'archive' }>;

function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const mediaType = header.split(';')[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

async function putEnvironment(
  req: IncomingMessage,
  res: ServerResponse,
  org: string,
  deps: ApiDeps,
): Promise<void> {
  if (!isJsonContentType(req.headers['content-type'])) {
    sendError(res, 415, 'Content-Type must be application/json');
    return;
  }
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body.kind === 'aborted') return;
  if (body.kind === 'too-large') {
    sendError(res, 413, `Request body is larger than ${MAX_BODY_BYTES} bytes`);
    return;
  }
  const parsed = parseJson(body.body);
  if (!parsed.ok) {
    sendError(res, 400, VALIDATION_FAILED, { errors: { payload: parsed.reason } });
    return;
  }
  const input = validateEnvironmentBody(parsed.value, deps.profile);
  if (!input.ok) {
    sendError(res, 400, VALIDATION_FAILED, { errors: input.errors });
    return;
  }
  // Checked against the store and applied in one synchronous step, so no other request can
  // archive a member in between (docs/api-behaviour.md#logical-environments).
  const members = input.value.included_environments;
  const problem =
    members === undefined ? undefined : deps.store.membersProblem(org, input.value.name, members);
  if (problem !== undefined) {
    sendError(res, 400, VALIDATION_FAILED, { errors: { included_environments: problem } });
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
  const { listingExtra, listingOmitOrg } = deps.listingFaults();
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
  switch (route.kind) {
    case 'environment':
      readEnvironment(res, org, route.name, deps);
      return;
    case 'archive':
      archiveEnvironment(res, org, route.name, deps);
      return;
    case 'environments':
      if (method === 'PUT') await putEnvironment(req, res, org, deps);
      else listEnvironments(res, org, query, deps);
  }
}
