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
 * Scrubs service text of every token requests are sent with (each org's, with `--token-dir`), as
 * soon as it is read, before it is cut, parsed or put into a message: nothing downstream ever
 * holds one (docs/security.md). The tokens are read at each call, so a rotated one is scrubbed
 * too; their spellings are derived again only when they change. HTML character references, named
 * and numeric, are decoded before the tokens are looked for, so an error page that spells one
 * `&plus;` or `&sol;` is scrubbed like one that spells it `+` or `/`.
 */
export function tokenScrub(getTokens: () => readonly string[]): Scrub {
  let scrubbing: { key: string; scrub: Scrub } | undefined;
  return (text) => {
    const tokens = getTokens();
    // A token holds no newline (it is a Bearer token): the key stands for the list.
    const key = tokens.join('\n');
    if (scrubbing?.key !== key) scrubbing = { key, scrub: compileScrub(tokens, { decodeHtml }) };
    return scrubbing.scrub(text);
  };
}
