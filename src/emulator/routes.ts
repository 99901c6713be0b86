/** Request target -> route, a pure function (no decoding beyond splitting on "/"). */
import type { Profile } from './options.ts';

/** The routes for one environment, and the policy documents: all outside the contract. */
type NamedKind = 'environment' | 'archive' | 'rename' | 'policies' | 'tags' | 'policy';

export type Route =
  | { readonly kind: 'environments'; readonly org: string }
  | { readonly kind: NamedKind; readonly org: string; readonly name: string }
  | { readonly kind: 'policy-documents'; readonly org: string }
  | { readonly kind: 'admin'; readonly name: string }
  | { readonly kind: 'none' };

export const ENVIRONMENTS_PATTERN = '/api/v2/environments/{org}';
export const ENVIRONMENT_PATTERN = '/api/v2/environments/{org}/{name}';
export const ARCHIVE_PATTERN = '/api/v2/environments/{org}/{name}/archive';
export const RENAME_PATTERN = '/api/v2/environments/{org}/{name}/rename';
export const ATTACHED_POLICIES_PATTERN = '/api/v2/environments/{org}/{name}/policies';
export const TAGS_PATTERN = '/api/v2/tags/{org}/environment/{name}';
export const POLICY_DOCUMENTS_PATTERN = '/api/v2/policies/{org}';
export const POLICY_DOCUMENT_PATTERN = '/api/v2/policies/{org}/{name}';

const PATTERNS: Record<Exclude<Route['kind'], 'admin' | 'none'>, string> = {
  environments: ENVIRONMENTS_PATTERN,
  environment: ENVIRONMENT_PATTERN,
  archive: ARCHIVE_PATTERN,
  rename: RENAME_PATTERN,
  policies: ATTACHED_POLICIES_PATTERN,
  tags: TAGS_PATTERN,
  'policy-documents': POLICY_DOCUMENTS_PATTERN,
  policy: POLICY_DOCUMENT_PATTERN,
};

const NONE: Route = { kind: 'none' };

/** The sub-resources of one environment, by their last path segment. */
const ENVIRONMENT_ACTIONS: Readonly<Record<string, NamedKind>> = {
  archive: 'archive',
  rename: 'rename',
  policies: 'policies',
};

function isSegment(segment: string | undefined): segment is string {
  return segment !== undefined && segment !== '';
}

/** /api/v2/environments/{org}[/{name}[/{action}]] (segments from `{org}` on). */
function environmentsRoute(rest: readonly string[], profile: Profile): Route {
  const [org, name, action] = rest;
  if (!isSegment(org)) return NONE;
  if (rest.length === 1) return { kind: 'environments', org };
  // Everything below one environment is outside the contract; only the kosli profile serves it
  // (docs/api-behaviour.md#operations-outside-the-contract).
  if (profile !== 'kosli' || !isSegment(name)) return NONE;
  if (rest.length === 2) return { kind: 'environment', org, name };
  const kind =
    rest.length === 3 && action !== undefined && Object.hasOwn(ENVIRONMENT_ACTIONS, action)
      ? ENVIRONMENT_ACTIONS[action]
      : undefined;
  return kind === undefined ? NONE : { kind, org, name };
}

/** Matches a raw (still percent-encoded) path. `org`/`name` are the raw segments. */
export function matchRoute(path: string, profile: Profile): Route {
  const segments = path.split('/');
  if (segments[0] !== '') return NONE;
  if (segments[1] === '_emulator' && segments.length === 3) {
    return { kind: 'admin', name: segments[2] ?? '' };
  }
  if (segments[1] !== 'api' || segments[2] !== 'v2') return NONE;
  const rest = segments.slice(4);
  if (segments[3] === 'environments') return environmentsRoute(rest, profile);
  if (profile !== 'kosli') return NONE;
  const [org, second, third] = rest;
  if (!isSegment(org)) return NONE;
  if (segments[3] === 'policies') {
    if (rest.length === 1) return { kind: 'policy-documents', org };
    return rest.length === 2 && isSegment(second) ? { kind: 'policy', org, name: second } : NONE;
  }
  if (segments[3] === 'tags' && rest.length === 3 && second === 'environment' && isSegment(third)) {
    return { kind: 'tags', org, name: third };
  }
  return NONE;
}

/** The key a request is counted under in /_emulator/stats. */
export function routeKey(method: string, route: Route): string {
  if (route.kind === 'none') return 'other';
  if (route.kind === 'admin') return `${method} /_emulator/${route.name}`;
  return `${method} ${PATTERNS[route.kind]}`;
}
