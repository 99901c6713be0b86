/**
 * An org's listing, in the three shapes of docs/api-behaviour.md, every page followed and checked
 * before it is believed. The zod schema, built from the field registry, decides what it may hold.
 */
import * as z from 'zod';
import type { ListingShape } from '../core/dialect.ts';
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
import type { Mask } from '../core/mask.ts';
import type { Compliance, ObservedEnvironment } from '../core/model.ts';
import { ApiError } from './errors.ts';
import { excerpt, quoted, type RawResponse } from './response.ts';

/** A listed value of each kind (any string for a type: envsync does not manage every type). */
const LISTED: Readonly<Record<ValueKind, () => z.ZodType>> = {
  enum: () => z.string(),
  text: () => z.string(),
  flag: () => z.boolean(),
  // Names, or objects with a name (production may list policies so).
  set: () => z.array(z.union([z.string(), z.looseObject({ name: z.string() })])),
  // Checked in place: z.record would copy the object and drop a key such as `__proto__`.
  map: () => z.custom<StringMap>(isStringMap, 'expected an object of strings'),
};

function listedField(spec: FieldSpec): z.ZodType {
  const schema = LISTED[spec.kind]();
  const nullable = spec.listing.null === 'error' ? schema : schema.nullable();
  return spec.listing.absent === 'error' ? nullable : nullable.optional();
}

// z.object strips (and does not copy) the fields it does not know; a `state` of another kind too.
const environmentEntry = z.object({
  name: z.string(),
  state: z.boolean().nullable().optional().catch(undefined),
  ...Object.fromEntries(FIELD_LIST.map((spec) => [spec.wireName, listedField(spec)])),
});
// What every entry must be; one that is not an environment entry is the service's placeholder.
const entries = z.array(z.looseObject({ name: z.string(), org: z.string().optional() }));
type Listed = z.infer<typeof entries>[number];
const COMPLIANCE = new Map<unknown, Compliance>([
  [true, 'compliant'],
  [false, 'non-compliant'],
]);
const SHAPES = {
  array: entries,
  env: z.looseObject({ env: entries }),
  envelope: z.looseObject({
    environments: entries,
    page: z.number().int().min(1).optional(),
    per_page: z.number().int().min(1).optional(),
    total_pages: z.number().int().min(0).optional(),
    total_count: z.number().int().min(0).optional(),
  }),
};

/** An entry as envsync compares it: a field not listed is undefined, or empty by its rule. */
function toObserved(entry: Listed & z.infer<typeof environmentEntry>): ObservedEnvironment {
  const compliance = entry.state === null ? 'unknown' : COMPLIANCE.get(entry.state);
  const observed = environmentOf(entry.name, entry, (listed, spec) => {
    const value = listed[spec.wireName];
    if (value === undefined || value === null) {
      const rule = spec.listing[value === null ? 'null' : 'absent'];
      return rule === 'empty' ? emptyValue(spec) : undefined;
    }
    if (spec.kind === 'set') return normalizeListedSet(value as readonly unknown[]);
    return spec.kind === 'map' ? normalizeMap(value as StringMap) : (value as string | boolean);
  }) as ObservedEnvironment;
  return compliance === undefined ? observed : { ...observed, compliance };
}

function shapeOf(body: unknown): ListingShape | undefined {
  if (Array.isArray(body)) return 'array';
  if (typeof body !== 'object' || body === null) return undefined;
  if (Object.hasOwn(body, 'env')) return 'env';
  return Object.hasOwn(body, 'environments') ? 'envelope' : undefined;
}

/** Reads one parsed page (or the whole) of `org`'s listing, in any shape; throws an Error. */
export function readListing(body: unknown, org: string) {
  const shape = shapeOf(body);
  if (shape === undefined) {
    const object = typeof body === 'object' && body !== null;
    const keys = object ? ` with keys ${Object.keys(body).slice(0, 5).join(', ') || 'none'}` : '';
    throw new Error(
      `listing has an unexpected shape (${body === null ? 'null' : typeof body}${keys}); expected {"env": [...]}, a list, or a paginated envelope`,
    );
  }
  const parsed = SHAPES[shape].safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join('.')}` : '';
    throw new Error(`listing is malformed: ${issue?.message ?? 'invalid'}${where}`);
  }
  const data = parsed.data as z.infer<(typeof SHAPES)['envelope']> & { env: Listed[] };
  const listed = (Array.isArray(data) ? data : (data.env ?? data.environments)) as Listed[];
  const environments: ObservedEnvironment[] = [];
  const placeholders: string[] = [];
  let unnamed = 0;
  for (const entry of listed) {
    if (entry.org !== undefined && entry.org !== org) {
      const [asked, other, name] = [quoted(org), quoted(entry.org), quoted(entry.name)];
      throw new Error(
        `the listing of org ${asked} holds environment ${name} of org ${other}: an entry of another org is the service's fault, so envsync compares nothing and sends nothing to org ${asked}; run again, and if it stays, report it to the service`,
      );
    }
    const read = entry.name === '' ? undefined : environmentEntry.safeParse(entry);
    if (read === undefined) unnamed++;
    else if (read.success) environments.push(toObserved(read.data));
    else placeholders.push(entry.name);
  }
  if (shape !== 'envelope') return { environments, placeholders, unnamed, shape };
  const paging = {
    page: data.page ?? 1,
    perPage: data.per_page ?? Math.max(1, listed.length),
    totalPages: data.total_pages ?? 1,
    totalCount: data.total_count,
  };
  return { environments, placeholders, unnamed, shape, paging };
}

/** A listing is never followed past this many pages. */
const MAX_PAGES = 10_000;

/** Every environment of `org`'s listing at `path` (its pages fetched with `get`), checked. */
export async function readAllPages(
  org: string,
  path: string,
  get: (url: string) => Promise<RawResponse>,
  mask: Mask,
) {
  const read = async (url: string) => {
    const { status, headers, text } = await get(url);
    const fail = (why: string) =>
      new ApiError('invalid-response', `GET ${url}: ${why}`, { method: 'GET', path: url, status });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      const said = excerpt(text, mask, 120) || '(empty body)';
      const given = headers['content-type'];
      const type =
        given === undefined ? 'none' : excerpt([given].flat().join(', '), mask) || '(empty)';
      throw fail(`the listing is not JSON (${status}, content-type ${type}): ${said}`);
    }
    try {
      return readListing(body, org);
    } catch (error) {
      throw fail((error as Error).message);
    }
  };
  const refuse = (why: string) =>
    new ApiError('invalid-response', `GET ${path}: ${why}; run again`, { method: 'GET', path });
  const { environments, placeholders, unnamed, shape, paging } = await read(path);
  let skipped = unnamed;
  if (paging !== undefined) {
    for (let next = paging.page + 1; next <= Math.min(paging.totalPages, MAX_PAGES); next++) {
      const page = await read(`${path}?page=${next}&per_page=${paging.perPage}`);
      environments.push(...page.environments);
      placeholders.push(...page.placeholders);
      skipped += page.unnamed;
    }
    const held = environments.length + placeholders.length + skipped;
    if (paging.totalCount !== undefined && held !== paging.totalCount) {
      throw refuse(
        `the paginated listing announced ${paging.totalCount} environments but its pages held ${held} (it changed while envsync read it)`,
      );
    }
  }
  const names = new Set<string>();
  for (const { name } of environments) {
    if (names.has(name)) throw refuse(`the listing shows environment ${quoted(name)} twice`);
    names.add(name);
  }
  return { environments, placeholders, unnamed: skipped, shape };
}
