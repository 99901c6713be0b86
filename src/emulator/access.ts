/**
 * Who may call the API, and what of a request the emulator shows. Every API route first checks,
 * in order: method (405), org syntax (404), credentials (401), token scope (403), org existence
 * (404). A token sent where a token does not belong (in the path or the query) never reaches the
 * emulator's log, `/_emulator/requests` or an answer that quotes the path.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultSettings } from './faults.ts';
import { cutHeader, decodeSegment, sendError } from './http.ts';
import type { Profile } from './options.ts';
import type { EnvironmentStore } from './store.ts';
import { NAME_PATTERN } from './validation.ts';

export interface ApiDeps {
  readonly profile: Profile;
  /** null: every org exists. */
  readonly orgs: ReadonlySet<string> | null;
  readonly tokens: Tokens;
  readonly store: EnvironmentStore;
  readonly baseUrl: () => string;
  /** The fault settings as they stand (the routes apply the listing faults and ignored writes). */
  readonly faults: () => Readonly<FaultSettings>;
  /** Waits `ms` as injected latency does (a create's hold); ends early when the emulator closes. */
  readonly hold: (ms: number) => Promise<void>;
}

/** The accepted tokens (null: any well-formed one), each with its orgs (null: every org). */
type Tokens = ReadonlyMap<string, ReadonlySet<string> | null> | null;

/** One API request on its way to its handler, its method, token, scope and org checked. */
export interface Call {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly org: string;
  /** The route's raw `{name}` segment ('' for a route without one). */
  readonly name: string;
  readonly query: URLSearchParams;
  readonly deps: ApiDeps;
  /** Whether a create meets one of the drawn 409s (recording the fault when it does). */
  readonly conflict: () => boolean;
}

/** RFC 6750 b64token. */
const TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The Bearer token of an Authorization header (the scheme is matched case-insensitively), or why
 * there is none.
 */
function bearer(header: string | undefined): { token: string } | { problem: string } {
  const match = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?: +(\S+))? *$/.exec(header?.trim() ?? '');
  const [, scheme = '', token = ''] = match ?? [];
  if (header === undefined || header.trim() === '') {
    return { problem: 'Missing Authorization header; send "Authorization: Bearer <token>"' };
  }
  if (match !== null && scheme.toLowerCase() !== 'bearer') {
    return { problem: `Unsupported authorization scheme '${cutHeader(scheme)}'; use Bearer` };
  }
  if (!TOKEN_PATTERN.test(token)) {
    return { problem: 'Malformed Authorization header; expected "Bearer <token>"' };
  }
  return { token };
}

/** What a token is shown as (the word envsync's own outputs use). */
const REDACTED = '[REDACTED]';

/** Query parameters that carry a token, whatever their value (OAuth's and the common one). */
const TOKEN_PARAMETERS = new Set(['access_token', 'token']);

/**
 * A token shorter than this is hidden only where it is a whole segment, query name or query
 * value: found inside text, it would hide parts of ordinary names.
 */
const MIN_INSIDE = 8;

/** A token as a target may spell it: each character as itself or percent-encoded. */
function spelling(token: string): string {
  return Array.from(token, (char) => {
    const hex = char.charCodeAt(0).toString(16).padStart(2, '0');
    const anyCase = hex.replace(/[a-f]/g, (digit) => `[${digit}${digit.toUpperCase()}]`);
    return `(?:${char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}|%${anyCase})`;
  }).join('');
}

/**
 * Finds the tokens the emulator knows, in any spelling: those it accepts, and the one
 * `authorization` carries (when it accepts any token, that one is all it knows).
 */
function tokenFinder(accepted: Tokens, authorization: string | undefined): RegExp | undefined {
  const credentials = bearer(authorization);
  const tokens = [...(accepted?.keys() ?? [])];
  if ('token' in credentials) tokens.push(credentials.token);
  if (tokens.length === 0) return undefined;
  const patterns = tokens
    .sort((a, b) => b.length - a.length)
    .map((token) =>
      token.length >= MIN_INSIDE ? spelling(token) : `(?<=^|[/?&=])${spelling(token)}(?=$|[/?&=])`,
    );
  return new RegExp(patterns.join('|'), 'g');
}

/** A decoded path segment as an answer quotes it (a name that does not exist): tokens hidden. */
export function shownSegment(segment: string, { res, deps }: Pick<Call, 'res' | 'deps'>): string {
  const finder = tokenFinder(deps.tokens, res.req.headers.authorization);
  return finder === undefined ? segment : segment.replace(finder, REDACTED);
}

/**
 * `target` as the emulator shows it (its log, `/_emulator/requests`, a 404 that quotes it): every
 * token it knows (see tokenFinder) replaced by [REDACTED] wherever it stands, in the path or the
 * query, and the value of every token parameter too.
 */
export function shownTarget(target: string, accepted: Tokens, authorization?: string): string {
  const finder = tokenFinder(accepted, authorization);
  const shown = finder === undefined ? target : target.replace(finder, REDACTED);
  const mark = shown.indexOf('?');
  if (mark < 0) return shown;
  const parts = shown
    .slice(mark + 1)
    .split('&')
    .map((part) => {
      const equals = part.indexOf('=');
      const name = equals < 0 ? part : part.slice(0, equals);
      // Read both ways a server may read it: `+` as itself, and as a space (forms).
      const named = [name, name.replace(/\+/g, ' ')].some((read) =>
        TOKEN_PARAMETERS.has((decodeSegment(read) ?? read).toLowerCase()),
      );
      return named ? `${name}=${REDACTED}` : part;
    });
  return `${shown.slice(0, mark)}?${parts.join('&')}`;
}

function orgMissing(res: ServerResponse, org: string, deps: ApiDeps): void {
  sendError(res, 404, `Organization '${shownSegment(org, { res, deps })}' does not exist`);
}

/** Sends 405 unless `method` is allowed; returns whether it is. */
export function allowMethod(res: ServerResponse, method: string, allowed: readonly string[]) {
  const allow = allowed.join(', ');
  if (!allowed.includes(method)) {
    sendError(res, 405, `Method ${method} is not allowed here; allowed: ${allow}`, {}, { allow });
  }
  return allowed.includes(method);
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
) {
  const org = decodeSegment(rawOrg);
  if (org === undefined || !NAME_PATTERN.test(org)) {
    orgMissing(res, org ?? rawOrg, deps);
    return undefined;
  }
  const credentials = bearer(req.headers.authorization);
  const scope = 'token' in credentials ? deps.tokens?.get(credentials.token) : undefined;
  if ('problem' in credentials || (deps.tokens !== null && scope === undefined)) {
    const message = 'problem' in credentials ? credentials.problem : 'Invalid token';
    sendError(res, 401, message, {}, { 'www-authenticate': 'Bearer realm="envsync-emulator"' });
    return undefined;
  }
  if (scope !== undefined && scope !== null && !scope.has(org)) {
    sendError(res, 403, "You don't have permission to access this resource");
    return undefined;
  }
  if (deps.orgs !== null && !deps.orgs.has(org)) {
    orgMissing(res, org, deps);
    return undefined;
  }
  return org;
}
