/** Who may call the API (405, 404, 401, 403, 404 in that order), and its target as shown. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultSettings } from './faults.ts';
import { cutHeader, decodeSegment, sendError } from './http.ts';
import type { Profile } from './options.ts';
import type { EnvironmentStore } from './store.ts';
import { NAME_PATTERN } from './validation.ts';

/** The accepted tokens and their orgs; null: any well-formed token, or every org. */
export type Tokens = ReadonlyMap<string, ReadonlySet<string> | null> | null;

/** Hides every token it knows in `text`, and the one `authorization` carries. */
export type Mask = (text: string, authorization: string | undefined) => string;

export interface ApiDeps {
  readonly profile: Profile;
  /** null: every org exists. */
  readonly orgs: ReadonlySet<string> | null;
  readonly tokens: Tokens;
  readonly mask: Mask;
  readonly store: EnvironmentStore;
  readonly baseUrl: () => string;
  readonly faults: () => Readonly<FaultSettings>;
  /** Waits out a create's hold as injected latency is waited out. */
  readonly hold: (ms: number) => Promise<void>;
}

export interface Call {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly org: string;
  readonly name: string;
  readonly query: URLSearchParams;
  readonly deps: ApiDeps;
  /** Whether a create meets one of the drawn 409s (recording the fault when it does). */
  readonly conflict: () => boolean;
}

/** The Bearer token of an Authorization header (RFC 6750 b64token), or why there is none. */
function bearer(header: string | undefined): { token: string } | { problem: string } {
  const match = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?: +(\S+))? *$/.exec(header?.trim() ?? '');
  const [, scheme = '', token = ''] = match ?? [];
  if (header === undefined || header.trim() === '')
    return { problem: 'Missing Authorization header; send "Authorization: Bearer <token>"' };
  if (match !== null && scheme.toLowerCase() !== 'bearer')
    return { problem: `Unsupported authorization scheme '${cutHeader(scheme)}'; use Bearer` };
  if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(token))
    return { problem: 'Malformed Authorization header; expected "Bearer <token>"' };
  return { token };
}

const REDACTED = '[REDACTED]';
const FORBIDDEN = "You don't have permission to access this resource";

/** Query parameters that carry a token, whatever their value (OAuth's and the common one). */
const TOKEN_PARAMETERS = new Set(['access_token', 'token']);

/**
 * A shorter token is hidden only as a whole segment, query name or value, not to cut names apart.
 * Longer ones are looked up by their start, so the cost does not grow with the number of tokens.
 */
const MIN_INSIDE = 8;

/** The mask of `accepted`: each token hidden wherever it stands, each character as is or %XX. */
export function tokenMasker(accepted: Iterable<string>): Mask {
  const long = new Map<string, string[]>();
  const short = new Set<string>();
  for (const token of accepted) {
    const key = token.slice(0, MIN_INSIDE);
    if (token.length < MIN_INSIDE) short.add(token);
    else long.set(key, [...(long.get(key) ?? []), token]);
  }
  return (text, authorization) => {
    const credentials = bearer(authorization);
    const own = 'token' in credentials ? credentials.token : '';
    // The text with every %XX decoded; `starts[i]`: where its character `i` begins in `text`.
    let plain = '';
    const starts: number[] = [];
    for (let at = 0; at < text.length;) {
      const hex = text[at] === '%' ? /^[0-9A-Fa-f]{2}/.exec(text.slice(at + 1, at + 3)) : null;
      starts.push(at);
      plain += hex === null ? text.charAt(at) : String.fromCharCode(Number.parseInt(hex[0], 16));
      at += hex === null ? 1 : 3;
    }
    starts.push(text.length);
    // A `/`, `?`, `&` or `=` written as itself ends a segment, query name or value.
    const endsAt = (i: number): boolean =>
      i === plain.length ||
      ('/?&='.includes(plain.charAt(i)) && starts[i + 1] === (starts[i] ?? 0) + 1);
    const tokenAt = (i: number): number => {
      let length = own.length >= MIN_INSIDE && plain.startsWith(own, i) ? own.length : 0;
      for (const token of long.get(plain.slice(i, i + MIN_INSIDE)) ?? [])
        if (token.length > length && plain.startsWith(token, i)) length = token.length;
      if (i > 0 && !endsAt(i - 1)) return length;
      for (let end = Math.min(plain.length, i + MIN_INSIDE - 1); end > i + length; end -= 1) {
        const whole = plain.slice(i, end);
        if (endsAt(end) && (short.has(whole) || whole === own)) return whole.length;
      }
      return length;
    };
    let shown = '';
    let copied = 0;
    for (let i = 0; i < plain.length;) {
      const length = tokenAt(i);
      if (length === 0) i += 1;
      else {
        shown += `${text.slice(copied, starts[i])}${REDACTED}`;
        i += length;
        copied = starts[i] ?? text.length;
      }
    }
    return shown + text.slice(copied);
  };
}

/** A decoded path segment as an answer quotes it: tokens hidden. */
export function shownSegment(segment: string, { req, deps }: Pick<Call, 'req' | 'deps'>): string {
  return deps.mask(segment, req.headers.authorization);
}

/** `target` as the emulator shows it: tokens hidden, and the value of every token parameter. */
export function shownTarget(target: string, mask: Mask, authorization?: string): string {
  const shown = mask(target, authorization);
  const mark = shown.indexOf('?');
  if (mark < 0) return shown;
  const parts = shown.slice(mark + 1).split('&');
  // A parameter name read both ways a server may read it: `+` as itself, and as a space (forms).
  const named = (name: string) =>
    [name, name.replace(/\+/g, ' ')].some((read) =>
      TOKEN_PARAMETERS.has((decodeSegment(read) ?? read).toLowerCase()),
    );
  const shownParts = parts.map((part) => {
    const name = part.split('=', 1)[0] ?? '';
    return named(name) ? `${name}=${REDACTED}` : part;
  });
  return `${shown.slice(0, mark)}?${shownParts.join('&')}`;
}

export function allowMethod(res: ServerResponse, method: string, allowed: readonly string[]) {
  const allow = allowed.join(', ');
  if (!allowed.includes(method))
    sendError(res, 405, `Method ${method} is not allowed here; allowed: ${allow}`, {}, { allow });
  return allowed.includes(method);
}

/** The `{org}` segment as sent (`raw`), decoded and authorized; undefined once answered. */
export function authorize(req: IncomingMessage, res: ServerResponse, raw: string, deps: ApiDeps) {
  const org = decodeSegment(raw);
  const credentials = bearer(req.headers.authorization);
  const scope = 'token' in credentials ? deps.tokens?.get(credentials.token) : undefined;
  const missing = (name: string) =>
    `Organization '${shownSegment(name, { req, deps })}' does not exist`;
  let refusal: [number, string] | undefined;
  if (org === undefined || !NAME_PATTERN.test(org)) refusal = [404, missing(org ?? raw)];
  else if ('problem' in credentials) refusal = [401, credentials.problem];
  else if (deps.tokens !== null && scope === undefined) refusal = [401, 'Invalid token'];
  else if (scope?.has(org) === false) refusal = [403, FORBIDDEN];
  else if (deps.orgs?.has(org) === false) refusal = [404, missing(org)];
  if (refusal === undefined) return org;
  const [status, message] = refusal;
  const challenge = status === 401 ? { 'www-authenticate': 'Bearer realm="envsync-emulator"' } : {};
  sendError(res, status, message, {}, challenge);
  return undefined;
}
