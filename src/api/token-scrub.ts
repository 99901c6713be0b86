import { createRequire } from 'node:module';
import { compileScrub, type DecodeHtml, type Scrub } from '../core/redact.ts';

/**
 * The `entities` package's decoder (the WHATWG table of named references), loaded the first
 * time a text holds something that may be a reference: most answers hold none, and a plan that
 * never needs it never loads it (docs/architecture.md, "Start-up rules").
 */
let decoder: DecodeHtml | undefined;
const decodeHtml: DecodeHtml = (text) => {
  decoder ??= (createRequire(import.meta.url)('entities/decode') as { decodeHTML: DecodeHtml })
    .decodeHTML;
  return decoder(text);
};

/**
 * Scrubs service text of the token requests are sent with, as soon as it is read, before it is
 * cut, parsed or put into a message: nothing downstream ever holds it (docs/security.md). The
 * token is read at each call, so a rotated one is scrubbed too; its spellings are derived again
 * only when the token changes. HTML character references, named and numeric, are decoded before
 * the token is looked for, so an error page that spells it `&plus;` or `&sol;` is scrubbed like
 * one that spells it `+` or `/`.
 */
export function tokenScrub(getToken: () => string): Scrub {
  let scrubbing: { token: string; scrub: Scrub } | undefined;
  return (text) => {
    const token = getToken();
    if (scrubbing?.token !== token)
      scrubbing = { token, scrub: compileScrub([token], { decodeHtml }) };
    return scrubbing.scrub(text);
  };
}
