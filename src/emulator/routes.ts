/** Request target -> route, a pure function (no decoding beyond splitting on "/"). */
import type { Profile } from './options.ts';

export type Route =
  | { readonly kind: 'environments'; readonly org: string }
  | { readonly kind: 'environment'; readonly org: string; readonly name: string }
  | { readonly kind: 'archive'; readonly org: string; readonly name: string }
  | { readonly kind: 'admin'; readonly name: string }
  | { readonly kind: 'none' };

export const ENVIRONMENTS_PATTERN = '/api/v2/environments/{org}';
export const ENVIRONMENT_PATTERN = '/api/v2/environments/{org}/{name}';
export const ARCHIVE_PATTERN = '/api/v2/environments/{org}/{name}/archive';

/** Matches a raw (still percent-encoded) path. `org`/`name` are the raw segments. */
export function matchRoute(path: string, profile: Profile): Route {
  const segments = path.split('/');
  if (segments[0] !== '') return { kind: 'none' };
  if (segments[1] === '_emulator' && segments.length === 3) {
    return { kind: 'admin', name: segments[2] ?? '' };
  }
  if (segments[1] !== 'api' || segments[2] !== 'v2' || segments[3] !== 'environments') {
    return { kind: 'none' };
  }
  const org = segments[4];
  if (org === undefined || org === '') return { kind: 'none' };
  if (segments.length === 5) return { kind: 'environments', org };
  const name = segments[5];
  // Reading one environment and archiving are outside the contract; only the kosli profile
  // serves them (docs/api-behaviour.md#operations-outside-the-contract).
  if (profile !== 'kosli' || name === undefined || name === '') return { kind: 'none' };
  if (segments.length === 6) return { kind: 'environment', org, name };
  if (segments.length === 7 && segments[6] === 'archive') return { kind: 'archive', org, name };
  return { kind: 'none' };
}

/** The key a request is counted under in /_emulator/stats. */
export function routeKey(method: string, route: Route): string {
  switch (route.kind) {
    case 'environments':
      return `${method} ${ENVIRONMENTS_PATTERN}`;
    case 'environment':
      return `${method} ${ENVIRONMENT_PATTERN}`;
    case 'archive':
      return `${method} ${ARCHIVE_PATTERN}`;
    case 'admin':
      return `${method} /_emulator/${route.name}`;
    default:
      return 'other';
  }
}
