import { StringDecoder } from 'node:string_decoder';
import type { Dispatcher } from 'undici';
import { escapeJson, UNSAFE } from '../core/escape.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import type { Mask } from '../core/mask.ts';

/** Reading what the API answered: bodies within a size limit, and servers' words for messages. */

/** One answer, its whole body read. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/**
 * A server's text for an error message: its secrets masked, then control characters (C0, C1,
 * bidirectional, line separators) stripped and the text shortened. Masked before it is cut: a
 * cut would leave a piece of a secret too short to be masked.
 */
export function excerpt(text: string, mask: Mask, max = 300): string {
  const clean = mask(text)
    .replace(new RegExp(`${UNSAFE.source}+`, 'g'), ' ')
    .trim();
  return clean.length > max ? `${clean.slice(0, max - 3)}...` : clean;
}

/**
 * A header value is never quoted longer than this in a message: a header may be as long as the
 * peer likes (a 15,000-character Content-Type), a message should stay readable and bounded.
 */
export const MAX_HEADER_SHOWN = 300;

/**
 * A response header's value for a message: an excerpt (a service may echo the token in a header
 * as in a body) of MAX_HEADER_SHOWN characters at most, so a huge or hostile header cannot swell
 * or steer the message; `none` when it is absent.
 */
export function headerText(value: string | string[] | undefined, mask: Mask): string {
  if (value === undefined) return 'none';
  const whole = typeof value === 'string' ? value : value.join(', ');
  return excerpt(whole, mask, MAX_HEADER_SHOWN) || '(empty)';
}

/**
 * A name or value from the service for a message: in double quotes, JSON's escapes for quotes,
 * backslashes and C0 controls, \u escapes for the other unsafe characters (docs/security.md),
 * shortened to `max` characters. An empty name shows as "".
 */
export function quoted(text: string, max = 80): string {
  const short = text.length > max ? `${text.slice(0, max - 3)}...` : text;
  return escapeJson(JSON.stringify(short));
}

/** The server's own words from an error body: `message` (and 400's `errors`), else an excerpt. */
export function serverMessage(text: string, mask: Mask): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; errors?: unknown };
    if (body !== null && typeof body === 'object' && typeof body.message === 'string') {
      const errors =
        body.errors !== null && typeof body.errors === 'object'
          ? Object.entries(body.errors as Record<string, unknown>)
              .map(
                ([field, reason]) =>
                  `${field}: ${typeof reason === 'string' ? reason : JSON.stringify(reason)}`,
              )
              .join('; ')
          : '';
      return excerpt(errors === '' ? body.message : `${body.message} (${errors})`, mask);
    }
  } catch {
    // not JSON: fall through to the raw excerpt
  }
  return excerpt(text, mask) || '(empty body)';
}

/** A body over the size limit, refused by its Content-Length or while it streamed in. */
export class ResponseTooLargeError extends Error {
  override name = 'ResponseTooLargeError';
  readonly limit: number;
  /** The size the answer announced, when it did. */
  readonly declared: number | undefined;

  constructor(limit: number, declared?: number) {
    super(
      declared === undefined
        ? `response larger than ${limit} bytes`
        : `response larger than ${limit} bytes (Content-Length ${declared})`,
    );
    this.limit = limit;
    this.declared = declared;
  }
}

/** Bodies up to this size are read by undici's own reader (the fast way, the usual case). */
const SMALL_BODY = 1024 * 1024;

/**
 * Reads a whole response body as text, refusing one larger than `limit` bytes: by its
 * Content-Length before any of it is read, else as soon as the stream passes the limit.
 */
export async function readBody(response: Dispatcher.ResponseData, limit: number): Promise<string> {
  const { body } = response;
  const declared = Number(response.headers['content-length'] ?? Number.NaN);
  const known = Number.isSafeInteger(declared);
  if (known && declared > limit) {
    // Not read at all: the connection is dropped (the abort it reports is expected).
    body.on('error', () => undefined);
    body.destroy();
    throw new ResponseTooLargeError(limit, declared);
  }
  // undici holds the body to its Content-Length.
  if (known && declared <= SMALL_BODY) return body.text();
  // Large, or of unknown length: decoded chunk by chunk, so neither a list of the chunks nor a
  // joined copy of the bytes is held next to the text.
  const decoder = new StringDecoder('utf8');
  let text = '';
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new ResponseTooLargeError(limit);
    }
    text += decoder.write(chunk);
  }
  return text + decoder.end();
}

/**
 * A name the listing shows twice, if any. The production service lists in name order, where a
 * repeat can only sit next to itself; any other order is checked with a set.
 */
export function repeatedName(environments: readonly ObservedEnvironment[]): string | undefined {
  for (let i = 1; i < environments.length; i++) {
    const previous = (environments[i - 1] as ObservedEnvironment).name;
    const name = (environments[i] as ObservedEnvironment).name;
    if (previous === name) return name;
    if (previous > name) {
      const names = new Set<string>();
      for (const env of environments) {
        if (names.has(env.name)) return env.name;
        names.add(env.name);
      }
      return undefined;
    }
  }
  return undefined;
}
