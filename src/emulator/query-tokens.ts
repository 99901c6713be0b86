/**
 * The request target as the emulator records it (its log and `/_emulator/requests`): a client
 * that sends its token in the query string (`?access_token=`, `?token=`, or under any other name)
 * must not find it in a log anyone who runs the emulator can read.
 */
import { parseAuthorization } from './credentials.ts';
import { decodeSegment } from './http.ts';

/** What a token is recorded as (the word envsync's own outputs use). */
const REDACTED = '[REDACTED]';

/** Query parameters that carry a token, whatever their value (OAuth's and the common one). */
const TOKEN_PARAMETERS = new Set(['access_token', 'token']);

/** A query part read both ways a server may read it: `+` as itself, and as a space (forms). */
function readings(part: string): string[] {
  return [decodeSegment(part) ?? part, decodeSegment(part.replace(/\+/g, ' ')) ?? part];
}

/**
 * `target` with the value of every token parameter, and every query value or name equal to a
 * token the emulator knows (those it accepts, and the one this request was sent with), replaced
 * by [REDACTED]. The path is left as it is: it never carries a token in this API.
 */
export function recordedTarget(
  target: string,
  accepted: ReadonlyMap<string, unknown> | null,
  authorization: string | undefined,
): string {
  const mark = target.indexOf('?');
  if (mark < 0) return target;
  const credentials = parseAuthorization(authorization);
  const sent = credentials.kind === 'bearer' ? credentials.token : undefined;
  const isToken = (text: string) =>
    readings(text).some((value) => value === sent || accepted?.has(value) === true);
  const parts = target
    .slice(mark + 1)
    .split('&')
    .map((part) => {
      const equals = part.indexOf('=');
      const name = equals < 0 ? part : part.slice(0, equals);
      const value = equals < 0 ? '' : part.slice(equals + 1);
      if (isToken(name)) return REDACTED;
      const named = readings(name).some((read) => TOKEN_PARAMETERS.has(read.toLowerCase()));
      return named || isToken(value) ? `${name}=${REDACTED}` : part;
    });
  return `${target.slice(0, mark)}?${parts.join('&')}`;
}
