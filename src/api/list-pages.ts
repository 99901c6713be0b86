/** Reading an org's whole listing: every page, checked to add up, each name once. */
import type { Scrub } from '../core/redact.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import { ApiError } from './errors.ts';
import { readListing } from './listing.ts';
import { excerpt, repeatedName, type RawResponse } from './response.ts';

/** A listing is never followed past this many pages. */
const MAX_PAGES = 10_000;

/** The answer as JSON; the service's text is scrubbed before any of it goes into a message. */
function parseJson(path: string, response: RawResponse, scrub: Scrub): unknown {
  const text = scrub(response.text);
  try {
    return JSON.parse(text);
  } catch {
    const type = response.headers['content-type'];
    throw new ApiError(
      'invalid-response',
      `GET ${path}: the listing is not JSON (${response.status}, content-type ${String(type ?? 'none')}): ${excerpt(text, 120) || '(empty body)'}`,
      { method: 'GET', path, status: response.status },
    );
  }
}

async function readPage(url: string, response: RawResponse, scrub: Scrub) {
  try {
    return await readListing(parseJson(url, response, scrub));
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError('invalid-response', `GET ${url}: ${(error as Error).message}`, {
      method: 'GET',
      path: url,
      status: response.status,
    });
  }
}

/**
 * Every environment of the listing at `path`, following its pages with `get` (which carries out
 * the retry policy). A listing whose pages do not add up, or that shows a name twice, is refused.
 */
export async function readAllPages(
  path: string,
  get: (url: string) => Promise<RawResponse>,
  scrub: Scrub,
): Promise<ObservedEnvironment[]> {
  const page = await readPage(path, await get(path), scrub);
  const environments = page.environments; // a fresh array: more pages are appended to it
  if (page.paging !== undefined) {
    const { perPage } = page.paging;
    const totalPages = Math.min(page.paging.totalPages, MAX_PAGES);
    for (let next = page.paging.page + 1; next <= totalPages; next++) {
      const url = `${path}?page=${next}&per_page=${perPage}`;
      environments.push(...(await readPage(url, await get(url), scrub)).environments);
    }
    if (page.paging.totalCount !== undefined && environments.length !== page.paging.totalCount) {
      throw new ApiError(
        'invalid-response',
        `GET ${path}: the paginated listing announced ${page.paging.totalCount} environments but its pages held ${environments.length} (it changed while envsync read it); run again`,
        { method: 'GET', path },
      );
    }
  }
  const twice = repeatedName(environments);
  if (twice !== undefined) {
    throw new ApiError(
      'invalid-response',
      `GET ${path}: the listing shows environment "${twice}" twice; run again`,
      { method: 'GET', path },
    );
  }
  return environments;
}
