import * as z from 'zod';
import { FIELD_LIST, type FieldSpec, type ValueKind } from '../core/fields.ts';
import { isStringMap, type StringMap } from '../core/string-maps.ts';

/**
 * The listing's schema, built from the field registry (core/fields.ts): the authority on what a
 * listing may hold, and the words of every error about one. listing.ts reads the usual listing
 * without it and loads it only for anything else. The three shapes a listing comes in are
 * described in docs/api-behaviour.md.
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
// name and another org are well-formed here: the reader (listing.ts) sets the one aside and
// refuses the other, by the org it asked for.
export const listedEnvironment = z.object({
  name: z.string(),
  org: z.string().optional(),
  ...Object.fromEntries(FIELD_LIST.map((spec) => [spec.wireName, listedField(spec)])),
});

export const entries = z.array(listedEnvironment);

export const specListing = z.looseObject({ env: entries });

export const pageEnvelope = z.looseObject({
  environments: entries,
  page: z.number().int().min(1).optional(),
  per_page: z.number().int().min(1).optional(),
  total_pages: z.number().int().min(0).optional(),
  total_count: z.number().int().min(0).optional(),
});

/** One listing entry as the schema outputs it: the name, the org if shown, each field by wire name. */
export type ListedEnvironment = {
  readonly name: string;
  readonly org?: string | undefined;
} & Record<string, unknown>;

export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const where = issue.path.length === 0 ? '' : ` at ${issue.path.map(String).join('.')}`;
  return `${issue.message}${where}`;
}
