/** The API's routes: their patterns, methods and handlers, and a raw path to a route. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { allowMethod, authorize, type ApiDeps, type Call } from './access.ts';
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

type Handler = (call: Call) => void | Promise<void>;
type Method = 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE';

/** Each API route: its path under /api/v2/ (the key of the stats) and its handler per method. */
const ROUTES = {
  environments: ['environments/{org}', { GET: listEnvironments, PUT: putEnvironment }],
  environment: ['environments/{org}/{name}', { GET: readEnvironment, PATCH: patchEnvironment }],
  archive: ['environments/{org}/{name}/archive', { PUT: archiveEnvironment }],
  rename: ['environments/{org}/{name}/rename', { PUT: renameEnvironment }],
  policies: [
    'environments/{org}/{name}/policies',
    { POST: changeAttachedPolicies, DELETE: changeAttachedPolicies },
  ],
  tags: ['tags/{org}/environment/{name}', { PATCH: patchTags }],
  'policy-documents': ['policies/{org}', { GET: listPolicies, PUT: putPolicy }],
  policy: ['policies/{org}/{name}', { GET: readPolicy }],
} satisfies Record<IgnorableWrite | 'policy', [string, Partial<Record<Method, Handler>>]>;

export type ApiRoute = { kind: keyof typeof ROUTES; org: string; name: string };
export type Route = ApiRoute | { kind: 'admin'; name: string } | { kind: 'none' };

/** Each pattern as a regular expression of the raw path: a segment is never empty. */
const MATCHERS = Object.entries(ROUTES).map(([kind, [path]]) => ({
  kind: kind as ApiRoute['kind'],
  regex: new RegExp(`^/api/v2/${path.replace(/\{(?:org|name)\}/g, '([^/]+)')}$`),
}));

/**
 * Matches a raw (still percent-encoded) path. Only the kosli profile serves the routes outside the
 * contract (docs/api-behaviour.md#operations-outside-the-contract).
 */
export function matchRoute(path: string, profile: Profile): Route {
  const admin = /^\/_emulator\/([^/]*)$/.exec(path);
  if (admin !== null) return { kind: 'admin', name: admin[1] ?? '' };
  for (const { kind, regex } of MATCHERS) {
    const [matched, org = '', name = ''] = regex.exec(path) ?? [];
    if (matched !== undefined && (profile === 'kosli' || kind === 'environments'))
      return { kind, org, name };
  }
  return { kind: 'none' };
}

export function routeKey(method: string, route: Route): string {
  if (route.kind === 'none') return 'other';
  if (route.kind === 'admin') return `${method} /_emulator/${route.name}`;
  return `${method} /api/v2/${ROUTES[route.kind][0]}`;
}

export async function handleApi(
  req: IncomingMessage,
  res: ServerResponse,
  route: ApiRoute,
  query: URLSearchParams,
  deps: ApiDeps,
  conflict: () => boolean,
): Promise<void> {
  const method = req.method ?? 'GET';
  const handlers: Partial<Record<string, Handler>> = ROUTES[route.kind][1];
  const allow = Object.keys(handlers).flatMap((name) => (name === 'GET' ? [name, 'HEAD'] : name));
  if (!allowMethod(res, method, allow)) return;
  const org = authorize(req, res, route.org, deps);
  if (org === undefined) return;
  const call: Call = { req, res, org, name: route.name, query, deps, conflict };
  const reading = method === 'GET' || method === 'HEAD';
  if (!reading && (deps.faults().ignoredWrites as readonly string[]).includes(route.kind)) {
    // Answered as the operation answers (the PATCH: the environment as held); nothing is done.
    req.resume();
    if (route.kind === 'environment') readEnvironment(call);
    else sendJson(res, route.kind === 'environments' ? 201 : 200, 'OK');
    return;
  }
  await handlers[method === 'HEAD' ? 'GET' : method]?.(call);
}
