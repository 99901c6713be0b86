import { compileScrub, type Scrub } from '../core/redact.ts';

/**
 * Scrubs service text of the token requests are sent with, as soon as it is read, before it is
 * cut, parsed or put into a message: nothing downstream ever holds it (docs/security.md). The
 * token is read at each call, so a rotated one is scrubbed too; the scrubber is compiled again
 * only when the token changes.
 */
export function tokenScrub(getToken: () => string): Scrub {
  let scrubbing: { token: string; scrub: Scrub } | undefined;
  return (text) => {
    const token = getToken();
    if (scrubbing?.token !== token) scrubbing = { token, scrub: compileScrub([token]) };
    return scrubbing.scrub(text);
  };
}
