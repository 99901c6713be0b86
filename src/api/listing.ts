import * as z from 'zod';
import {
  emptyValue,
  environmentOf,
  FIELD_LIST,
  type FieldSpec,
  isStringMap,
  normalizeListedSet,
  normalizeMap,
  type StringMap,
  type ValueKind,
} from '../core/fields.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import type { ListingShape } from '../core/dialect.ts';
import { quoted } from './response.ts';

/**
 * The tolerant reader of the listing: the spec's `{"env": [...]}`, the production service's bare
 * array, and its paginated envelope (docs/api-behaviour.md). Its zod schema, built from the field
 * registry (core/fields.ts), decides what a listing may hold: unknown fields are ignored and
 * unknown types accepted; anything else is an error, never a guess.
 *
 * A listing is checked before it is believed, in every shape and on every page: an entry whose
 * `org` is not the org asked for is refused (the service's fault: nothing of it is compared, and
 * the caller sends nothing to the org); an entry with an empty name is set aside and counted, for
 * the caller to warn about. An entry without `org` is read as the asked org's.
 */

/** A listed value of each kind: any string for a type (a listing may hold types envsync does not manage). */
const LISTED: Readonly<Record<ValueKind, () => z.ZodType>> = {
  enum: () => z.string(),
  text: () => z.string(),
  flag: () => z.boolean(),
  // Items are names, or objects with a name (production may list policies so).
  set: () => z.array(z.union([z.string(), z.looseObject({ name: z.string() })])),
  // Checked in place: z.record would copy the object and drop a key such as `__proto__`.
  map: () => z.custom<StringMap>(isStringMap, 'expected an object of strings'),
};

/** A listed field: of its kind (any string for a type), and null or absent where allowed. */
function listedField(spec: FieldSpec): z.ZodType {
  let schema = LISTED[spec.kind]();
  if (spec.listing.null !== 'error') schema = schema.nullable();
  if (spec.listing.absent !== 'error') schema = schema.optional();
  return schema;
}

// z.object strips what it does not know: unknown fields are ignored, and not copied. An empty
// name and another org are well-formed here: checkEntries sets the one aside and refuses the
// other, by the org it asked for.
const listedEnvironment = z.object({
  name: z.string(),
  org: z.string().optional(),
  ...Object.fromEntries(FIELD_LIST.map((spec) => [spec.wireName, listedField(spec)])),
});

/** One listing entry as the schema outputs it: the name, the org if shown, each field by wire name. */
type ListedEnvironment = z.infer<typeof listedEnvironment> & Record<string, unknown>;

const entries = z.array(listedEnvironment);

const specListing = z.looseObject({ env: entries });

const pageEnvelope = z.looseObject({
  environments: entries,
  page: z.number().int().min(1).optional(),
  per_page: z.number().int().min(1).optional(),
  total_pages: z.number().int().min(0).optional(),
  total_count: z.number().int().min(0).optional(),
});

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const where = issue.path.length === 0 ? '' : ` at ${issue.path.map(String).join('.')}`;
  return `${issue.message}${where}`;
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

/**
 * One listed entry as envsync compares it: undefined for a field the listing does not carry, the
 * field's empty value where its rule says so, sets and maps normalized.
 */
export function toObserved(entry: ListedEnvironment): ObservedEnvironment {
  return environmentOf(entry.name, entry, (listed, spec) => {
    const value = listed[spec.wireName];
    if (value === undefined || value === null) {
      return spec.listing[value === null ? 'null' : 'absent'] === 'empty'
        ? emptyValue(spec)
        : undefined;
    }
    if (spec.kind === 'set') return normalizeListedSet(value as readonly unknown[]);
    return spec.kind === 'map' ? normalizeMap(value as StringMap) : (value as string | boolean);
  }) as ObservedEnvironment;
}

/**
 * The checks on entries the schema read: refuses an entry of another org, sets aside (and
 * counts) those with an empty name.
 */
function checkEntries(
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

/** `schema`'s reading of `body`, or an error that says what is malformed (`what`) and where. */
function parsed<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const result = schema.safeParse(body);
  if (!result.success) throw new Error(`${what} is malformed: ${firstIssue(result.error)}`);
  return result.data;
}

/**
 * Reads a parsed JSON listing body of `org` in any of the three known shapes. Throws a plain
 * Error.
 */
export function readListing(body: unknown, org: string): ListingPage {
  if (Array.isArray(body)) {
    const listed = parsed(entries, body, 'listing entry') as ListedEnvironment[];
    return { ...checkEntries(listed, org), shape: 'array' };
  }
  if (body !== null && typeof body === 'object') {
    if (Object.hasOwn(body, 'env')) {
      const listed = parsed(specListing, body, 'listing').env as ListedEnvironment[];
      return { ...checkEntries(listed, org), shape: 'env' };
    }
    if (Object.hasOwn(body, 'environments')) {
      const page = parsed(pageEnvelope, body, 'listing page');
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
