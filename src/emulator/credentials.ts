/** Reading the Authorization header (docs/api-behaviour.md#other-errors). */

/** The Authorization header, read. */
export type Credentials =
  | { readonly kind: 'missing' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'scheme'; readonly scheme: string }
  | { readonly kind: 'bearer'; readonly token: string };

/** RFC 6750 b64token. */
const TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** Reads `Authorization: Bearer <token>` (the scheme is matched case-insensitively). */
export function parseAuthorization(header: string | undefined): Credentials {
  if (header === undefined || header.trim() === '') return { kind: 'missing' };
  const match = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)(?: +(\S+))? *$/.exec(header.trim());
  if (match === null) return { kind: 'malformed' };
  const scheme = match[1] ?? '';
  const token = match[2];
  if (scheme.toLowerCase() !== 'bearer') return { kind: 'scheme', scheme };
  if (token === undefined || !TOKEN_PATTERN.test(token)) return { kind: 'malformed' };
  return { kind: 'bearer', token };
}
