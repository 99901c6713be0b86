/**
 * The format of a saved plan (`plan --out`), built from the field registry: what `sync --plan`
 * reads, once its integrity digest has vouched for it (plan-integrity.ts).
 */
import * as z from 'zod';
import { API_DIALECTS } from '../core/dialect.ts';
import {
  FIELD_LIST,
  type FieldSpec,
  isStringMap,
  type StringMap,
  type ValueKind,
} from '../core/fields.ts';
import { INTEGRITY_PATTERN } from './plan-integrity.ts';
import { savedDocumentsSchema } from './saved-plan-documents.ts';

/**
 * Version 5: a change may be a `rename` (with `renamedFrom`, and `requests.rename`), a create may
 * say the name it was renamed from was not found (`renameNotFound`), and an org whose manifests
 * say `prune: true` carries `archives`, the environments it archives. Version 4: each org carries the API dialect it was planned for, each change the requests that
 * send it (`requests`: whether a PUT, and the policies and tags sent through their own
 * operations), and an org may carry `policyDocuments`, the uploads of its policy documents with
 * the exact text each sends (saved-plan-documents.ts). Version 3 carried `integrity`, the digest of everything else in the file, without
 * them; version 2 had every field of the registry but no digest; version 1 had four fields. A
 * plan is applied by the envsync that made it, moments later; an older file is refused with its
 * version, not misread, and a file without a digest is never trusted.
 */
export const SAVED_PLAN_VERSION = 5;

/** A map, checked in place: z.record would copy it and drop a key such as `__proto__`. */
const stringMap = z.custom<StringMap>(isStringMap, 'expected an object of strings');

/** A field's value in a saved plan, as JSON, by its kind. */
const VALUE_SCHEMAS: Readonly<Record<ValueKind, () => z.ZodType>> = {
  enum: () => z.string(),
  text: () => z.string(),
  flag: () => z.boolean(),
  set: () => z.array(z.string()),
  map: () => stringMap,
};
const valueSchema = (spec: FieldSpec) => VALUE_SCHEMAS[spec.kind]();

/** One listing entry, or what a change sends: the name and each field by name. */
export type SavedEnvironment = { readonly name: string } & Record<string, unknown>;

/** A listing entry: every field, null where the listing does not carry it. */
const listed: z.ZodType<SavedEnvironment> = z.object({
  name: z.string(),
  ...Object.fromEntries(
    FIELD_LIST.map((spec) => [
      spec.name,
      spec.listing.absent === 'omitted' ? valueSchema(spec).nullable() : valueSchema(spec),
    ]),
  ),
});

/** What a change sends: every field it manages. */
const desired: z.ZodType<SavedEnvironment> = z.object({
  name: z.string(),
  ...Object.fromEntries(
    FIELD_LIST.map((spec) => [
      spec.name,
      spec.managed === 'always' ? valueSchema(spec) : valueSchema(spec).optional(),
    ]),
  ),
});

const fieldDiff = z.object({
  from: z.unknown(),
  to: z.unknown(),
  notShown: z.literal(true).optional(),
});

/** The requests of a change (core/requests.ts, ChangeRequests). */
const requests = z.strictObject({
  rename: z.string().optional(),
  put: z.boolean(),
  policies: z.strictObject({ attach: z.array(z.string()), detach: z.array(z.string()) }).optional(),
  tags: z.strictObject({ set: stringMap, remove: z.array(z.string()) }).optional(),
});

export const savedPlanSchema = z.object({
  kind: z.literal('envsync-plan'),
  version: z.literal(SAVED_PLAN_VERSION),
  integrity: z.string().regex(INTEGRITY_PATTERN),
  api: z.string(),
  createdAt: z.string(),
  orgs: z.array(
    z.object({
      org: z.string(),
      dialect: z.enum(API_DIALECTS),
      digest: z.string(),
      listing: z.array(listed),
      changes: z.array(
        z.object({
          action: z.enum(['create', 'update', 'unverified', 'rename']),
          cause: z.enum(['drift', 'change']).optional(),
          name: z.string(),
          fields: z.record(z.string(), fieldDiff),
          unknownFields: z.array(z.enum(FIELD_LIST.map((spec) => spec.name))),
          knownNotConverged: z.boolean(),
          desired,
          requests,
          renamedFrom: z.string().optional(),
          renameNotFound: z.string().optional(),
        }),
      ),
      unchanged: z.array(z.string()),
      unmanaged: z.array(z.string()),
      archives: z
        .array(z.strictObject({ name: z.string(), ownedBy: z.array(z.enum(['state', 'tag'])) }))
        .optional(),
      policyDocuments: savedDocumentsSchema.optional(),
    }),
  ),
  report: z.unknown(),
});

export type SavedPlan = z.infer<typeof savedPlanSchema>;
/** What `plan --out` writes before it is sealed (plan-integrity.ts, planFileText). */
export type PlanContent = Omit<SavedPlan, 'integrity'>;
