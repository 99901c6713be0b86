/** What the API answered, and the service's words as messages quote them. */
import { escapeJson, UNSAFE } from '../core/escape.ts';
import type { Mask } from '../core/mask.ts';

/** One answer, its whole body read. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

const UNSAFE_RUNS = new RegExp(`${UNSAFE.source}+`, 'g');

/** A service's text for a message: masked (before the cut leaves a piece), controls made spaces. */
export function excerpt(text: string, mask: Mask, max = 300): string {
  const clean = mask(text).replace(UNSAFE_RUNS, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max - 3)}...` : clean;
}

/** A name or value from the service for a message: quoted and escaped (docs/security.md), cut. */
export function quoted(text: string, max = 80): string {
  return escapeJson(JSON.stringify(text.length > max ? `${text.slice(0, max - 3)}...` : text));
}

/** The server's own words from an error body: `message` (and 400's `errors`), else an excerpt. */
export function serverMessage(text: string, mask: Mask): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; errors?: unknown };
    if (typeof body?.message === 'string') {
      const errors = Object.entries(typeof body.errors === 'object' ? (body.errors ?? {}) : {})
        .map(([field, why]) => `${field}: ${typeof why === 'string' ? why : JSON.stringify(why)}`)
        .join('; ');
      return excerpt(errors === '' ? body.message : `${body.message} (${errors})`, mask);
    }
  } catch {
    // not JSON: the raw excerpt below
  }
  return excerpt(text, mask) || '(empty body)';
}
