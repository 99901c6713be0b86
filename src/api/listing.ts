import * as z from 'zod';
import type { ObservedEnvironment } from '../core/model.ts';
import { normalizePolicies } from '../core/plan.ts';

/**
 * The tolerant reader of the listing (issue 3; observed-behaviour.md "The listing"): the spec's
 * `{"env": [...]}`, the production service's bare array, and its paginated envelope. Unknown
 * fields are ignored and unknown types accepted; anything else is an error, never a guess.
 */

// z.object strips what it does not know: unknown fields are ignored, and not copied.
const listedEnvironment = z.object({
  name: z.string().min(1),
  type: z.string(),
  description: z.string().nullable().optional(),
  include_scaling: z.boolean().nullable().optional(),
  policies: z.array(z.string()).nullable().optional(),
});

const entries = z.array(listedEnvironment);

const specListing = z.looseObject({ env: entries });

const pageEnvelope = z.looseObject({
  environments: entries,
  page: z.number().int().min(1).optional(),
  per_page: z.number().int().min(1).optional(),
  total_pages: z.number().int().min(0).optional(),
  total_count: z.number().int().min(0).optional(),
});

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

function toObserved(entry: z.infer<typeof listedEnvironment>): ObservedEnvironment {
  return {
    name: entry.name,
    type: entry.type,
    description: entry.description ?? '',
    // Compared only when the listing carries them (issue 3, "Planning").
    includeScaling: entry.include_scaling ?? undefined,
    policies:
      entry.policies === undefined
        ? undefined
        : entry.policies === null
          ? []
          : normalizePolicies(entry.policies),
  };
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const where = issue.path.length === 0 ? '' : ` at ${issue.path.map(String).join('.')}`;
  return `${issue.message}${where}`;
}

/** Reads a parsed JSON listing body in any of the three known shapes. Throws a plain Error. */
export function readListing(body: unknown): ListingPage {
  if (Array.isArray(body)) {
    const result = entries.safeParse(body);
    if (!result.success) throw new Error(`listing entry is malformed: ${firstIssue(result.error)}`);
    return { environments: result.data.map(toObserved) };
  }
  if (body !== null && typeof body === 'object') {
    if (Object.hasOwn(body, 'env')) {
      const result = specListing.safeParse(body);
      if (!result.success) throw new Error(`listing is malformed: ${firstIssue(result.error)}`);
      return { environments: result.data.env.map(toObserved) };
    }
    if (Object.hasOwn(body, 'environments')) {
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
