import { checkListedFields, observedOf } from '../core/compiled.generated.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import { isPlainObject } from '../core/plain-object.ts';
import type { ListedEnvironment } from './listing-schema.ts';

/**
 * The tolerant reader of the listing: the spec's `{"env": [...]}`, the production service's bare
 * array, and its paginated envelope (docs/api-behaviour.md). Unknown fields are ignored and
 * unknown types accepted; anything else is an error, never a guess.
 *
 * The zod schema (listing-schema.ts) is the authority. The usual listing (a list of well-formed
 * entries, bare or under `env`) is read in place by `acceptEntries`, which accepts exactly what
 * the schema accepts (test/api/listing.test.ts checks it); everything else, the paginated
 * envelope included, goes to the schema, loaded on first use. Both follow the field registry.
 */

/** The entries read in place when every one is certainly valid; else undefined (ask the schema). */
export function acceptEntries(list: unknown): ObservedEnvironment[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const out: ObservedEnvironment[] = [];
  for (const entry of list as unknown[]) {
    if (!isPlainObject(entry)) return undefined;
    const { name } = entry;
    if (typeof name !== 'string' || name === '' || !checkListedFields(entry)) return undefined;
    out.push(toObserved(entry as ListedEnvironment));
  }
  return out;
}

/** One page (or the whole) of a listing, read. */
export interface ListingPage {
  readonly environments: ObservedEnvironment[];
  /** Present for the paginated envelope: what to fetch next. */
  readonly paging?: {
    page: number;
    perPage: number;
    totalPages: number;
    totalCount: number | undefined;
  };
}

/** One listed entry as envsync compares it (the fast path and the schema's both end here). */
export function toObserved(entry: ListedEnvironment): ObservedEnvironment {
  return observedOf(entry) as ObservedEnvironment;
}

/** Reads a parsed JSON listing body in any of the three known shapes. Rejects with a plain Error. */
export async function readListing(body: unknown): Promise<ListingPage> {
  if (Array.isArray(body)) {
    const fast = acceptEntries(body);
    if (fast !== undefined) return { environments: fast };
    const { entries, firstIssue } = await import('./listing-schema.ts');
    const result = entries.safeParse(body);
    if (!result.success) throw new Error(`listing entry is malformed: ${firstIssue(result.error)}`);
    return { environments: result.data.map(toObserved) };
  }
  if (body !== null && typeof body === 'object') {
    if (Object.hasOwn(body, 'env')) {
      const fast = acceptEntries((body as { env: unknown }).env);
      if (fast !== undefined) return { environments: fast };
      const { specListing, firstIssue } = await import('./listing-schema.ts');
      const result = specListing.safeParse(body);
      if (!result.success) throw new Error(`listing is malformed: ${firstIssue(result.error)}`);
      return { environments: result.data.env.map(toObserved) };
    }
    if (Object.hasOwn(body, 'environments')) {
      const { pageEnvelope, firstIssue } = await import('./listing-schema.ts');
      const result = pageEnvelope.safeParse(body);
      if (!result.success)
        throw new Error(`listing page is malformed: ${firstIssue(result.error)}`);
      const page = result.data;
      return {
        environments: page.environments.map(toObserved),
        paging: {
          page: page.page ?? 1,
          perPage: page.per_page ?? Math.max(1, page.environments.length),
          totalPages: page.total_pages ?? 1,
          totalCount: page.total_count,
        },
      };
    }
  }
  const shape = body === null ? 'null' : Array.isArray(body) ? 'array' : typeof body;
  throw new Error(
    `listing has an unexpected shape (${shape}${
      body !== null && typeof body === 'object'
        ? ` with keys ${Object.keys(body).slice(0, 5).join(', ') || 'none'}`
        : ''
    }); expected {"env": [...]}, a list, or a paginated envelope`,
  );
}
