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

/** Each API route: its pattern (the key of the stats), its methods, its read and write handlers. */
const ROUTES = {
  environments: {
    pattern: '/api/v2/environments/{org}',
    allow: ['GET', 'HEAD', 'PUT'],
    read: listEnvironments,
    write: putEnvironment,
  },
  environment: {
    pattern: '/api/v2/environments/{org}/{name}',
    allow: ['GET', 'HEAD', 'PATCH'],
    read: readEnvironment,
    write: patchEnvironment,
  },
  archive: {
    pattern: '/api/v2/environments/{org}/{name}/archive',
    allow: ['PUT'],
    write: archiveEnvironment,
  },
  rename: {
    pattern: '/api/v2/environments/{org}/{name}/rename',
    allow: ['PUT'],
    write: renameEnvironment,
  },
  policies: {
    pattern: '/api/v2/environments/{org}/{name}/policies',
    allow: ['POST', 'DELETE'],
    write: changeAttachedPolicies,
  },
  tags: { pattern: '/api/v2/tags/{org}/environment/{name}', allow: ['PATCH'], write: patchTags },
  'policy-documents': {
    pattern: '/api/v2/policies/{org}',
    allow: ['GET', 'HEAD', 'PUT'],
    read: listPolicies,
    write: putPolicy,
  },
  policy: { pattern: '/api/v2/policies/{org}/{name}', allow: ['GET', 'HEAD'], read: readPolicy },
} satisfies Record<
  IgnorableWrite | 'policy',
  { pattern: string; allow: readonly string[]; read?: Handler; write?: Handler }
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

/** Each pattern as a regular expression of the raw path: a segment is never empty. */
const MATCHERS = Object.entries(ROUTES).map(([kind, { pattern }]) => ({
  kind: kind as ApiRoute['kind'],
  regex: new RegExp(`^${pattern.replace(/\{(?:org|name)\}/g, '([^/]+)')}$`),
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
    if (matched !== undefined && (profile === 'kosli' || kind === 'environments')) {
      return { kind, org, name };
    }
  }
  return { kind: 'none' };
}

/** The key a request is counted under in /_emulator/stats. */
export function routeKey(method: string, route: Route): string {
  if (route.kind === 'none') return 'other';
  if (route.kind === 'admin') return `${method} /_emulator/${route.name}`;
  return `${method} ${ROUTES[route.kind].pattern}`;
}

/** Handles one request on an API route, after fault injection. */
export async function handleApi(
  req: IncomingMessage,
  res: ServerResponse,
  route: ApiRoute,
  query: URLSearchParams,
  deps: ApiDeps,
  conflict: () => boolean,
): Promise<void> {
  const method = req.method ?? 'GET';
  const { allow, ...handlers }: { allow: readonly string[]; read?: Handler; write?: Handler } =
    ROUTES[route.kind];
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
  await (reading ? handlers.read : handlers.write)?.(call);
}
