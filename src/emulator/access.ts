/**
 * The checks every API route makes before its own work: method (405), org syntax (404),
 * credentials (401), token scope (403) and org existence (404), in that order.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseAuthorization } from './credentials.ts';
import { cutHeader, decodeSegment, sendError } from './http.ts';
import { orgPatternFor } from './names.ts';
import type { RouteFaults, Profile } from './options.ts';
import { shownSegment } from './request-tokens.ts';
import type { EnvironmentStore } from './store.ts';

export interface ApiDeps {
  readonly profile: Profile;
  /** null: every org exists. */
  readonly orgs: ReadonlySet<string> | null;
  /** null: any well-formed token; a token's set null: every org. */
  readonly tokens: ReadonlyMap<string, ReadonlySet<string> | null> | null;
  readonly store: EnvironmentStore;
  readonly nowSeconds: () => number;
  readonly baseUrl: () => string;
  /** What the listing shows that it should not, and the writes it ignores (fault injection). */
  readonly routeFaults: () => RouteFaults;
}

const FORBIDDEN = "You don't have permission to access this resource";
const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="envsync-emulator"' };

function orgMissing(res: ServerResponse, org: string, deps: ApiDeps): void {
  sendError(res, 404, `Organization '${shownSegment(org, res, deps.tokens)}' does not exist`);
}

/** Sends 405 unless `method` is allowed; returns whether it is. */
export function allowMethod(
  res: ServerResponse,
  method: string,
  allowed: readonly string[],
): boolean {
  if (allowed.includes(method)) return true;
  sendError(
    res,
    405,
    `Method ${method} is not allowed here; allowed: ${allowed.join(', ')}`,
    {},
    { allow: allowed.join(', ') },
  );
  return false;
}

/** Sends 401 with the Bearer challenge. */
function unauthorized(res: ServerResponse, message: string): void {
  sendError(res, 401, message, {}, WWW_AUTHENTICATE);
}

/**
 * Decodes and checks the raw `{org}` segment, then the credentials, scope and org existence.
 * Returns the org when the request may go on; otherwise the answer has been sent. A malformed org
 * is a 404 before any token check: it cannot exist.
 */
export function authorize(
  req: IncomingMessage,
  res: ServerResponse,
  rawOrg: string,
  deps: ApiDeps,
): string | undefined {
  const org = decodeSegment(rawOrg);
  if (org === undefined || !orgPatternFor(deps.profile).test(org)) {
    orgMissing(res, org ?? rawOrg, deps);
    return undefined;
  }
  const credentials = parseAuthorization(req.headers.authorization);
  switch (credentials.kind) {
    case 'missing':
      unauthorized(res, 'Missing Authorization header; send "Authorization: Bearer <token>"');
      return undefined;
    case 'malformed':
      unauthorized(res, 'Malformed Authorization header; expected "Bearer <token>"');
      return undefined;
    case 'scheme':
      unauthorized(
        res,
        `Unsupported authorization scheme '${cutHeader(credentials.scheme)}'; use Bearer`,
      );
      return undefined;
    case 'bearer':
      break;
  }
  if (deps.tokens !== null) {
    if (!deps.tokens.has(credentials.token)) {
      unauthorized(res, 'Invalid token');
      return undefined;
    }
    const scope = deps.tokens.get(credentials.token);
    if (scope !== undefined && scope !== null && !scope.has(org)) {
      sendError(res, 403, FORBIDDEN);
      return undefined;
    }
  }
  if (deps.orgs !== null && !deps.orgs.has(org)) {
    orgMissing(res, org, deps);
    return undefined;
  }
  return org;
}
