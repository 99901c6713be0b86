/** Reading an org's whole listing: every page, checked to add up, each name once. */
import type { Mask } from '../core/mask.ts';
import type { ListingShape } from '../core/dialect.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import { ApiError } from './errors.ts';
import { readListing } from './listing.ts';
import { excerpt, headerText, quoted, repeatedName, type RawResponse } from './response.ts';

/** A listing is never followed past this many pages. */
const MAX_PAGES = 10_000;

/** The answer as JSON, as it came; what a message quotes of it is masked (`mask`). */
function parseJson(path: string, response: RawResponse, mask: Mask): unknown {
  try {
    return JSON.parse(response.text);
  } catch {
    const type = headerText(response.headers['content-type'], mask);
    throw new ApiError(
      'invalid-response',
      `GET ${path}: the listing is not JSON (${response.status}, content-type ${type}): ${excerpt(response.text, mask, 120) || '(empty body)'}`,
      { method: 'GET', path, status: response.status },
    );
  }
}

async function readPage(org: string, url: string, response: RawResponse, mask: Mask) {
  try {
    return readListing(parseJson(url, response, mask), org);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError('invalid-response', `GET ${url}: ${(error as Error).message}`, {
      method: 'GET',
      path: url,
      status: response.status,
    });
  }
}

/** An org's whole listing, checked. */
export interface Listing {
  readonly environments: ObservedEnvironment[];
  /** Entries with an empty name, set aside on every page: the caller warns about them once. */
  readonly unnamed: number;
  /** The shape of its first page. */
  readonly shape: ListingShape;
}

/**
 * Every environment of `org`'s listing at `path`, following its pages with `get` (which carries
 * out the retry policy). Every page is checked (listing.ts): an entry of another org refuses the
 * listing, one with an empty name is set aside. A listing whose pages do not add up, or that
 * shows a name twice, is refused.
 */
export async function readAllPages(
  org: string,
  path: string,
  get: (url: string) => Promise<RawResponse>,
  mask: Mask,
): Promise<Listing> {
  const page = await readPage(org, path, await get(path), mask);
  const environments = page.environments; // a fresh array: more pages are appended to it
  let unnamed = page.unnamed;
  if (page.paging !== undefined) {
    const { perPage } = page.paging;
    const totalPages = Math.min(page.paging.totalPages, MAX_PAGES);
    for (let next = page.paging.page + 1; next <= totalPages; next++) {
      const url = `${path}?page=${next}&per_page=${perPage}`;
      const more = await readPage(org, url, await get(url), mask);
      environments.push(...more.environments);
      unnamed += more.unnamed;
    }
    const held = environments.length + unnamed;
    if (page.paging.totalCount !== undefined && held !== page.paging.totalCount) {
      throw new ApiError(
        'invalid-response',
        `GET ${path}: the paginated listing announced ${page.paging.totalCount} environments but its pages held ${held} (it changed while envsync read it); run again`,
        { method: 'GET', path },
      );
    }
  }
  const twice = repeatedName(environments);
  if (twice !== undefined) {
    throw new ApiError(
      'invalid-response',
      `GET ${path}: the listing shows environment ${quoted(twice)} twice; run again`,
      { method: 'GET', path },
    );
  }
  return { environments, unnamed, shape: page.shape };
}
