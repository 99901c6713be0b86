/**
 * The Environments API itself: PUT and GET /api/v2/environments/{org} (and, in the kosli profile,
 * GET /api/v2/environments/{org}/{name}). Check order: method (405), org syntax (404),
 * credentials (401), token scope (403), org existence (404), then the request itself.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Profile } from './options.ts';
import { MAX_BODY_BYTES } from './options.ts';
import { decodeSegment, parseJson, readBody, sendError, sendJson } from './http.ts';
import type { Route } from './routes.ts';
import type { EnvironmentStore, StoredEnvironment } from './store.ts';
import { parseAuthorization } from './credentials.ts';
import { NAME_PATTERN, ORG_PATTERN } from './names.ts';
import { parsePagination } from './pagination.ts';
import { validateEnvironmentBody } from './validate-environment.ts';

export interface ApiDeps {
  readonly profile: Profile;
  /** null: every org exists. */
  readonly orgs: ReadonlySet<string> | null;
  /** null: any well-formed token; a token's set null: every org. */
  readonly tokens: ReadonlyMap<string, ReadonlySet<string> | null> | null;
  readonly store: EnvironmentStore;
  readonly nowSeconds: () => number;
  readonly baseUrl: () => string;
}

const VALIDATION_FAILED = 'Input payload validation failed';
const FORBIDDEN = "You don't have permission to access this resource";
const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="envsync-emulator"' };

function orgMissing(res: ServerResponse, org: string): void {
  sendError(res, 404, `Organization '${org}' does not exist`);
}

/** Sends 405 unless `method` is allowed; returns whether it is. */
function allowMethod(res: ServerResponse, method: string, allowed: readonly string[]): boolean {
  if (allowed.includes(method)) return true;
  sendError(
    res,
    405,
    `Method ${method} is not allowed here; allowed: ${allowed.join(', ')}`,
    {},
    {
      allow: allowed.join(', '),
    },
  );
  return false;
}

/** Sends 401, 403 or 404 for credentials and org; returns whether the request may go on. */
function authorize(req: IncomingMessage, res: ServerResponse, org: string, deps: ApiDeps): boolean {
  const credentials = parseAuthorization(req.headers.authorization);
  switch (credentials.kind) {
    case 'missing':
      sendError(
        res,
        401,
        'Missing Authorization header; send "Authorization: Bearer <token>"',
        {},
        WWW_AUTHENTICATE,
      );
      return false;
    case 'malformed':
      sendError(
        res,
        401,
        'Malformed Authorization header; expected "Bearer <token>"',
        {},
        WWW_AUTHENTICATE,
      );
      return false;
    case 'scheme':
      sendError(
        res,
        401,
        `Unsupported authorization scheme '${credentials.scheme}'; use Bearer`,
        {},
        WWW_AUTHENTICATE,
      );
      return false;
    case 'bearer':
      break;
  }
  if (deps.tokens !== null) {
    if (!deps.tokens.has(credentials.token)) {
      sendError(res, 401, 'Invalid token', {}, WWW_AUTHENTICATE);
      return false;
    }
    const scope = deps.tokens.get(credentials.token);
    if (scope !== undefined && scope !== null && !scope.has(org)) {
      sendError(res, 403, FORBIDDEN);
      return false;
    }
  }
  if (deps.orgs !== null && !deps.orgs.has(org)) {
    orgMissing(res, org);
    return false;
  }
  return true;
}

/**
 * The kosli listing entry: every stored field except `archived`
 * (docs/api-behaviour.md#listing-shapes).
 */
function kosliEntry(env: StoredEnvironment): Omit<StoredEnvironment, 'archived'> {
  const { archived: _archived, ...entry } = env;
  return entry;
}

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
  deps.store.upsert(org, input.value, deps.profile, deps.nowSeconds());
  // Production's answer for create and update alike (docs/api-behaviour.md#successful-writes).
  sendJson(res, 201, 'OK');
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
    sendJson(res, 200, { env });
    return;
  }
  const pagination = parsePagination(query);
  if (!pagination.ok) {
    sendError(res, 400, 'Invalid query parameters', { errors: pagination.errors });
    return;
  }
  if (pagination.value.kind === 'none') {
    sendJson(res, 200, environments.map(kosliEntry));
    return;
  }
  const { page, perPage } = pagination.value;
  const start = (page - 1) * perPage;
  sendJson(res, 200, {
    page,
    per_page: perPage,
    total_pages: Math.ceil(environments.length / perPage),
    total_count: environments.length,
    environments: environments.slice(start, start + perPage).map(kosliEntry),
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
  route: Extract<Route, { kind: 'environments' | 'environment' }>,
  query: URLSearchParams,
  deps: ApiDeps,
): Promise<void> {
  const method = req.method ?? 'GET';
  const allowed = route.kind === 'environments' ? ['GET', 'HEAD', 'PUT'] : ['GET', 'HEAD'];
  if (!allowMethod(res, method, allowed)) return;
  const org = decodeSegment(route.org);
  if (org === undefined || !ORG_PATTERN.test(org)) {
    orgMissing(res, org ?? route.org);
    return;
  }
  if (!authorize(req, res, org, deps)) return;
  if (route.kind === 'environment') {
    const name = decodeSegment(route.name);
    const env =
      name !== undefined && NAME_PATTERN.test(name) ? deps.store.get(org, name) : undefined;
    if (env === undefined) {
      sendError(
        res,
        404,
        `Environment named '${name ?? route.name}' does not exist for organization '${org}'`,
      );
      return;
    }
    sendJson(res, 200, kosliEntry(env));
    return;
  }
  if (method === 'PUT') await putEnvironment(req, res, org, deps);
  else listEnvironments(res, org, query, deps);
}
