/**
 * The API's routes: a request target to a route (no decoding beyond splitting on "/"), the methods
 * each answers, and the handler each goes to once method, token, scope and org are checked.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { allowMethod, authorize, type ApiDeps } from './access.ts';
import {
  archiveEnvironment,
  listEnvironments,
  patchEnvironment,
  putEnvironment,
  readEnvironment,
  renameEnvironment,
} from './environments.ts';
import type { IgnorableWrite } from './faults.ts';
import { sendJson } from './http.ts';
import type { Profile } from './options.ts';
import { changeAttachedPolicies, listPolicies, putPolicy, readPolicy } from './policies.ts';
import { patchTags } from './tags.ts';

/** Each API route: its pattern (the key of the stats) and the methods it answers. */
const ROUTES = {
  environments: { pattern: '/api/v2/environments/{org}', allow: ['GET', 'HEAD', 'PUT'] },
  environment: { pattern: '/api/v2/environments/{org}/{name}', allow: ['GET', 'HEAD', 'PATCH'] },
  archive: { pattern: '/api/v2/environments/{org}/{name}/archive', allow: ['PUT'] },
  rename: { pattern: '/api/v2/environments/{org}/{name}/rename', allow: ['PUT'] },
  policies: { pattern: '/api/v2/environments/{org}/{name}/policies', allow: ['POST', 'DELETE'] },
  tags: { pattern: '/api/v2/tags/{org}/environment/{name}', allow: ['PATCH'] },
  'policy-documents': { pattern: '/api/v2/policies/{org}', allow: ['GET', 'HEAD', 'PUT'] },
  policy: { pattern: '/api/v2/policies/{org}/{name}', allow: ['GET', 'HEAD'] },
} as const satisfies Record<
  IgnorableWrite | 'policy',
  { pattern: string; allow: readonly string[] }
>;

export type ApiRoute = {
  readonly kind: keyof typeof ROUTES;
  readonly org: string;
  readonly name: string;
};

export type Route =
  | ApiRoute
  | { readonly kind: 'admin'; readonly name: string }
  | { readonly kind: 'none' };

const NONE: Route = { kind: 'none' };

/**
 * Matches a raw (still percent-encoded) path; `org` and `name` are the raw segments. Everything
 * but the contract's one path is outside the contract: only the kosli profile serves it
 * (docs/api-behaviour.md#operations-outside-the-contract).
 */
export function matchRoute(path: string, profile: Profile): Route {
  const segments = path.split('/');
  const [empty, top, version, resource, org = '', name = '', action, ...rest] = segments;
  if (empty !== '') return NONE;
  if (top === '_emulator')
    return segments.length === 3 ? { kind: 'admin', name: version ?? '' } : NONE;
  if (top !== 'api' || version !== 'v2' || org === '' || rest.length > 0) return NONE;
  const kosli = profile === 'kosli';
  const one = segments.length === 5;
  if (resource === 'environments') {
    if (one) return { kind: 'environments', org, name: '' };
    if (!kosli || name === '') return NONE;
    if (action === undefined) return { kind: 'environment', org, name };
    if (action === 'archive' || action === 'rename' || action === 'policies')
      return { kind: action, org, name };
  } else if (kosli && resource === 'policies' && action === undefined) {
    if (one) return { kind: 'policy-documents', org, name: '' };
    if (name !== '') return { kind: 'policy', org, name };
  } else if (kosli && resource === 'tags' && name === 'environment' && (action ?? '') !== '') {
    return { kind: 'tags', org, name: action ?? '' };
  }
  return NONE;
}

/** The key a request is counted under in /_emulator/stats. */
export function routeKey(method: string, route: Route): string {
  if (route.kind === 'none') return 'other';
  if (route.kind === 'admin') return `${method} /_emulator/${route.name}`;
  return `${method} ${ROUTES[route.kind].pattern}`;
}

/**
 * Handles one request on an API route (after fault injection). `conflict()`: whether a create
 * meets one of the drawn 409s (it records the fault when it does).
 */
export async function handleApi(
  req: IncomingMessage,
  res: ServerResponse,
  route: ApiRoute,
  query: URLSearchParams,
  deps: ApiDeps,
  conflict: () => boolean,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (!allowMethod(res, method, ROUTES[route.kind].allow)) return;
  const org = authorize(req, res, route.org, deps);
  if (org === undefined) return;
  const { kind, name } = route;
  const reading = method === 'GET' || method === 'HEAD';
  if (!reading && (deps.faults().ignoredWrites as readonly string[]).includes(kind)) {
    // The fault: answered as the operation answers, and nothing is done.
    req.resume();
    // The PATCH answers with the environment as held (or its 404).
    if (kind === 'environment') readEnvironment(res, org, name, deps);
    else sendJson(res, kind === 'environments' ? 201 : 200, 'OK');
    return;
  }
  if (kind === 'environments') {
    if (reading) listEnvironments(res, org, query, deps);
    else await putEnvironment(req, res, org, deps, conflict);
  } else if (kind === 'environment') {
    if (reading) readEnvironment(res, org, name, deps);
    else await patchEnvironment(req, res, org, name, deps);
  } else if (kind === 'archive') await archiveEnvironment(req, res, org, name, deps);
  else if (kind === 'rename') await renameEnvironment(req, res, org, name, deps);
  else if (kind === 'policies') await changeAttachedPolicies(req, res, org, name, deps);
  else if (kind === 'tags') await patchTags(req, res, org, name, deps);
  else if (kind === 'policy') readPolicy(res, org, name, deps);
  else if (reading) listPolicies(res, org, deps);
  else await putPolicy(req, res, org, deps);
}
