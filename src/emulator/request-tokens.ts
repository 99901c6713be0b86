/**
 * A token sent where a token does not belong: in the request target's path or query. A client
 * that puts its token there (`?access_token=`, `?token=`, a query value, a path segment) must not
 * find it in the emulator's log, in `/_emulator/requests` or in an answer that quotes the path,
 * which anyone who runs the emulator or sees its answers can read.
 */
import type { ServerResponse } from 'node:http';
import { parseAuthorization } from './credentials.ts';
import { decodeSegment } from './http.ts';

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
function tokenFinder(
  accepted: ReadonlyMap<string, unknown> | null,
  authorization: string | undefined,
): RegExp | undefined {
  const credentials = parseAuthorization(authorization);
  const tokens = [...(accepted?.keys() ?? [])];
  if (credentials.kind === 'bearer') tokens.push(credentials.token);
  if (tokens.length === 0) return undefined;
  const patterns = tokens
    .sort((a, b) => b.length - a.length)
    .map((token) =>
      token.length >= MIN_INSIDE ? spelling(token) : `(?<=^|[/?&=])${spelling(token)}(?=$|[/?&=])`,
    );
  return new RegExp(patterns.join('|'), 'g');
}

/** A decoded path segment as an answer quotes it (a name that does not exist): tokens hidden. */
export function shownSegment(
  segment: string,
  res: ServerResponse,
  accepted: ReadonlyMap<string, unknown> | null,
): string {
  const finder = tokenFinder(accepted, res.req.headers.authorization);
  return finder === undefined ? segment : segment.replace(finder, REDACTED);
}

/**
 * `target` as the emulator shows it (its log, `/_emulator/requests`, a 404 that quotes it): every
 * token it knows (see tokenFinder) replaced by [REDACTED] wherever it stands, in the path or the
 * query, and the value of every token parameter too.
 */
export function shownTarget(
  target: string,
  accepted: ReadonlyMap<string, unknown> | null,
  authorization: string | undefined,
): string {
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
