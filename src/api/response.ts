import type { Dispatcher } from 'undici';
import { UNSAFE } from '../core/escape.ts';
import type { ObservedEnvironment } from '../core/model.ts';

/** Reading what the API answered: bodies within a size limit, and servers' words for messages. */

/** One answer, its whole body read. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/**
 * Strips control characters (C0, C1, bidirectional, line separators) and shortens a server's text
 * for an error message. The caller has scrubbed it of the token first (cutting first would leave
 * a fragment the scrubber may no longer recognise).
 */
export function excerpt(text: string, max = 300): string {
  const clean = text.replace(new RegExp(`${UNSAFE.source}+`, 'g'), ' ').trim();
  return clean.length > max ? `${clean.slice(0, max - 3)}...` : clean;
}

/** The server's own words from an error body: `message` (and 400's `errors`), else an excerpt. */
export function serverMessage(text: string): string {
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
      return excerpt(errors === '' ? body.message : `${body.message} (${errors})`);
    }
  } catch {
    // not JSON: fall through to the raw excerpt
  }
  return excerpt(text) || '(empty body)';
}

/** Reads a whole response body as text, refusing one larger than `limit` bytes. */
export async function readBody(response: Dispatcher.ResponseData, limit: number): Promise<string> {
  const { body } = response;
  const declared = Number(response.headers['content-length'] ?? Number.NaN);
  if (Number.isSafeInteger(declared) && declared <= limit) {
    // undici holds the body to its Content-Length: its own reader is the fast way (the usual case).
    return body.text();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new Error(`response larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
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
