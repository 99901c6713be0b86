import { checkListedFields, observedOf } from '../core/compiled.generated.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import type { ListingShape } from '../core/dialect.ts';
import { isPlainObject } from '../core/plain-object.ts';
import type { ListedEnvironment } from './listing-schema.ts';
import { quoted } from './response.ts';

/**
 * The tolerant reader of the listing: the spec's `{"env": [...]}`, the production service's bare
 * array, and its paginated envelope (docs/api-behaviour.md). Unknown fields are ignored and
 * unknown types accepted; anything else is an error, never a guess.
 *
 * A listing is checked before it is believed, in every shape and on every page: an entry whose
 * `org` is not the org asked for is refused (the service's fault: nothing of it is compared, and
 * the caller sends nothing to the org); an entry with an empty name is set aside and counted, for
 * the caller to warn about. An entry without `org` is read as the asked org's.
 *
 * The zod schema (listing-schema.ts) is the authority. The usual listing (a list of well-formed
 * entries of the asked org, bare or under `env`) is read in place by `acceptEntries`, which
 * accepts exactly what the schema accepts and these checks let through unchanged
 * (test/api/listing.test.ts checks it); everything else, the paginated envelope included, goes to
 * the schema, loaded on first use, and then to the checks. Both follow the field registry.
 */

/**
 * The entries read in place when every one is certainly valid, named, and of `org` (or shows no
 * org); else undefined (ask the schema, then the checks).
 */
export function acceptEntries(list: unknown, org: string): ObservedEnvironment[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const out: ObservedEnvironment[] = [];
  for (const entry of list as unknown[]) {
    if (!isPlainObject(entry)) return undefined;
    const { name, org: owner } = entry;
    if (typeof name !== 'string' || name === '') return undefined;
    if (owner !== undefined && owner !== org) return undefined;
    if (!checkListedFields(entry)) return undefined;
    out.push(toObserved(entry as ListedEnvironment));
  }
  return out;
}

/** One page (or the whole) of a listing, read. */
export interface ListingPage {
  readonly environments: ObservedEnvironment[];
  /** The shape it came in (what `--api-dialect auto` reads). */
  readonly shape: ListingShape;
  /** Entries with an empty name, set aside: never compared, never changed. */
  readonly unnamed: number;
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

/**
 * The checks on entries the schema read: refuses an entry of another org, sets aside (and
 * counts) those with an empty name.
 */
export function checkEntries(
  listed: readonly ListedEnvironment[],
  org: string,
): { environments: ObservedEnvironment[]; unnamed: number } {
  const environments: ObservedEnvironment[] = [];
  let unnamed = 0;
  for (const entry of listed) {
    if (entry.org !== undefined && entry.org !== org) {
      throw new Error(
        `the listing of org ${quoted(org)} holds environment ${quoted(entry.name)} of org ${quoted(entry.org)}: ` +
          `an entry of another org is the service's fault, so envsync compares nothing and sends nothing to org ${quoted(org)}; ` +
          'run again, and if it stays, report it to the service',
      );
    }
    if (entry.name === '') unnamed++;
    else environments.push(toObserved(entry));
  }
  return { environments, unnamed };
}

/** A list of entries, bare or under `env`: in place when it can be, else by the schema. */
async function readEntries(
  list: unknown,
  org: string,
  shape: { bare: unknown } | { env: unknown },
): Promise<ListingPage> {
  const fast = acceptEntries(list, org);
  const listed = 'bare' in shape ? 'array' : 'env';
  if (fast !== undefined) return { environments: fast, unnamed: 0, shape: listed };
  const { entries, specListing, firstIssue } = await import('./listing-schema.ts');
  if ('bare' in shape) {
    const result = entries.safeParse(shape.bare);
    if (!result.success) throw new Error(`listing entry is malformed: ${firstIssue(result.error)}`);
    return { ...checkEntries(result.data, org), shape: listed };
  }
  const result = specListing.safeParse(shape.env);
  if (!result.success) throw new Error(`listing is malformed: ${firstIssue(result.error)}`);
  return { ...checkEntries(result.data.env, org), shape: listed };
}

/**
 * Reads a parsed JSON listing body of `org` in any of the three known shapes. Rejects with a
 * plain Error.
 */
export async function readListing(body: unknown, org: string): Promise<ListingPage> {
  if (Array.isArray(body)) return readEntries(body, org, { bare: body });
  if (body !== null && typeof body === 'object') {
    if (Object.hasOwn(body, 'env'))
      return readEntries((body as { env: unknown }).env, org, { env: body });
    if (Object.hasOwn(body, 'environments')) {
      const { pageEnvelope, firstIssue } = await import('./listing-schema.ts');
      const result = pageEnvelope.safeParse(body);
      if (!result.success)
        throw new Error(`listing page is malformed: ${firstIssue(result.error)}`);
      const page = result.data;
      return {
        ...checkEntries(page.environments, org),
        shape: 'envelope',
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
