/**
 * Scrubbing secrets out of text: the one redaction rule every sink shares. Pure: the caller
 * says which secrets (and gives the HTML decoder, where text comes from a service); nothing
 * here reads the environment.
 *
 * A secret is found in every spelling derived from it when it is learnt (secret-forms.ts: the
 * secret, its JSON string, URL and form encoding, base64 and base64url at every byte alignment
 * (also JSON-escaped and percent-encoded), hex in either case); the secret itself also written
 * with any mix of JSON and markdown escapes, percent-encoding and numeric HTML references
 * (scrub-match.ts); and, given a decoder, all of these in the text with its HTML references,
 * named and numeric, decoded (html-references.ts). A run of MIN_FRAGMENT or more characters of
 * the secret (what is left when someone cut it) is scrubbed too, and a run of each spelling as
 * long as six characters of the secret come to in it (run-finder.ts).
 */
import { decodeReferences, type DecodeHtml } from './html-references.ts';
import {
  escapedRanges,
  mayHoldEscape,
  replaceRanges,
  secretMatcher,
  type Range,
  type SecretMatcher,
} from './scrub-match.ts';
import { MIN_FRAGMENT, secretForms } from './secret-forms.ts';

export { MIN_FRAGMENT };
export type { DecodeHtml };

/** What a secret is replaced by. */
export const REDACTED = '[REDACTED]';

/** Secrets shorter than this are never scrubbed (they would scrub ordinary words). */
const MIN_SECRET = 4;

/** How many times references are decoded in turn (`&amp;plus;` is `+` written twice). */
const DECODE_ROUNDS = 3;

/** Scrubs text of a set of secrets. */
export type Scrub = (text: string) => string;

/** How text is read before it is scrubbed. */
export interface ScrubOptions {
  /** Decodes HTML references, named and numeric: given where text comes from a service. */
  readonly decodeHtml?: DecodeHtml | undefined;
}

/** Secrets compiled lately: a few, for a token and its rotations (and the other secrets). */
const COMPILED_KEPT = 32;
const compiled = new Map<string, SecretMatcher>();

/**
 * Every spelling of `secret` compiled for finding: derived once per secret, when it is learnt
 * (the regex of its escaped spellings the first time text holding an escape is scrubbed), and
 * shared by every scrubber of the process that learns it (the command's outputs and the API
 * client both scrub the token; a rotation compiles the new token once).
 */
export function compileSecret(secret: string): SecretMatcher {
  const known = compiled.get(secret);
  if (known !== undefined) return known;
  const matcher = secretMatcher(secretForms(secret));
  compiled.set(secret, matcher);
  if (compiled.size > COMPILED_KEPT) compiled.delete(compiled.keys().next().value as string);
  return matcher;
}

/** The ranges of `text` that hold a secret of `matchers`, in any spelling. */
function rangesIn(text: string, matchers: readonly SecretMatcher[]): Range[] {
  const ranges: Range[] = [];
  const hasEscape = mayHoldEscape(text);
  for (const matcher of matchers) {
    escapedRanges(text, matcher, ranges, hasEscape);
    matcher.runs.find(text, ranges);
  }
  return ranges;
}

/** Scrubs with matchers already compiled (longest secret first). */
function scrubWith(matchers: readonly SecretMatcher[], { decodeHtml }: ScrubOptions): Scrub {
  if (matchers.length === 0) return (text) => text;
  return (text) => {
    const ranges = rangesIn(text, matchers);
    if (decodeHtml !== undefined) {
      // Each round maps back through the ones before it, to the text as it was.
      const back: ((range: Range) => Range)[] = [];
      let current = text;
      for (let round = 0; round < DECODE_ROUNDS; round++) {
        const view = decodeReferences(current, decodeHtml);
        if (view === undefined) break;
        back.unshift(view.toSource);
        current = view.text;
        for (const range of rangesIn(current, matchers))
          ranges.push(back.reduce((mapped, toSource) => toSource(mapped), range));
      }
    }
    return replaceRanges(text, ranges, REDACTED);
  };
}

/** The secrets worth scrubbing, longest first (a secret that contains another goes whole). */
function scrubbable(secrets: readonly string[]): string[] {
  return [...new Set(secrets)]
    .filter((secret) => secret.length >= MIN_SECRET)
    .sort((a, b) => b.length - a.length);
}

/** Compiles `secrets` once into a scrubber (compile again when the set changes). */
export function compileScrub(secrets: readonly string[], options: ScrubOptions = {}): Scrub {
  return scrubWith(scrubbable(secrets).map(compileSecret), options);
}

/** Scrubs `text` of `secrets`: for one-off use. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  return compileScrub(secrets)(text);
}

/**
 * The secrets a command has learnt (the token, a rotated token, ...) and the scrubber for them:
 * the single redaction point every sink calls before it writes. Each secret's spellings are
 * derived when it is added (compileSecret).
 */
export class Redactor {
  readonly #secrets: string[] = [];
  #scrub: Scrub = (text) => text;

  /** From now on, `secret` is scrubbed from everything `scrub` sees. */
  add(secret: string): void {
    if (this.#secrets.includes(secret)) return;
    this.#secrets.push(secret);
    this.#scrub = scrubWith(scrubbable(this.#secrets).map(compileSecret), {});
  }

  /** The secrets learnt so far. */
  get secrets(): readonly string[] {
    return this.#secrets;
  }

  /** `text` without any secret learnt so far, in any spelling. */
  readonly scrub: Scrub = (text) => this.#scrub(text);
}

/** RFC 6750's b64token: the characters a Bearer token may be made of. */
export const BEARER_TOKEN_PATTERN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** True when `token` may be sent as `Authorization: Bearer <token>` (RFC 6750, section 2.1). */
export function isBearerToken(token: string): boolean {
  return BEARER_TOKEN_PATTERN.test(token);
}
