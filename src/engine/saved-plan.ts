/**
 * A saved plan (`plan --out`, docs/cli.md "Saved plans"): its format, one version, decided by its
 * zod schema alone; how it is made from a pass and read back. It is bound to the listing (and the
 * policy documents) it was computed from, and sealed with an integrity digest (plan-integrity.ts):
 * `sync --plan` (apply-saved.ts) applies exactly these changes, and only while the file is whole,
 * agrees with itself and with the manifests (saved-plan-check.ts), and the service has not moved.
 */
import * as z from 'zod';
import { API_DIALECTS } from '../core/dialect.ts';
import { keptValues } from '../core/diff.ts';
import { environmentOf, FIELD_LIST, type FieldSpec, type FieldValue } from '../core/fields.ts';
import type { Masker } from '../core/mask.ts';
import type {
  Change,
  ChangeRequests,
  DesiredEnvironment,
  ObservedEnvironment,
  OrgPlan,
} from '../core/model.ts';
import { compareNames } from '../core/names.ts';
import { isPlainObject } from '../core/plain-object.ts';
import type { ObservedPolicyDocument } from '../core/policy-documents.ts';
import type { RunReport } from '../core/report.ts';
import { normalizeValue } from '../core/value-kinds.ts';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { fileValue, stringMap } from '../state/format.ts';
import { integrityProblem } from './plan-integrity.ts';
import { textDigest } from './policy-documents.ts';
import type { PlannedDocuments } from './reconcile.ts';

export const SAVED_PLAN_VERSION = 5;

/** An object of one schema per field of the registry, each as `schema` makes it. */
const perField = (schema: (spec: FieldSpec) => z.ZodType) =>
  Object.fromEntries(FIELD_LIST.map((spec) => [spec.name, schema(spec)]));

/** What a change sends, or a listing entry: the name and each field by name. */
export type SavedEnvironment = { readonly name: string } & Record<string, unknown>;

/** A listing entry: every field, null where the listing does not carry it. */
const listed: z.ZodType<SavedEnvironment> = z.object({
  name: z.string(),
  ...perField((spec) =>
    spec.listing.absent === 'omitted' ? fileValue(spec).nullable() : fileValue(spec),
  ),
});

/** What a change sends: every field it manages. */
const desired: z.ZodType<SavedEnvironment> = z.object({
  name: z.string(),
  ...perField((spec) => (spec.managed === 'always' ? fileValue(spec) : fileValue(spec).optional())),
});

/** What a change shows of each field that differs (core/model.ts, FieldDiff). */
const fields = z.strictObject(
  perField((spec) =>
    z
      .object({
        from: fileValue(spec).nullable(),
        to: fileValue(spec),
        notShown: z.literal(true).optional(),
      })
      .optional(),
  ),
);

/** A list of names, read-only as the plan that is saved holds it. */
const names = z.array(z.string()).readonly();

/** The requests of a change (core/model.ts, ChangeRequests). */
const requests = z.strictObject({
  rename: z.string().optional(),
  put: z.boolean(),
  policies: z.strictObject({ attach: names, detach: names }).optional(),
  tags: z.strictObject({ set: stringMap, remove: names }).optional(),
});

const documentDiff = z.object({ from: z.string().nullable(), to: z.string() }).optional();

/**
 * An org's policy documents: the digest of those the service held, and each upload with the exact
 * text it sends (core/policy-documents.ts, PolicyDocumentPlan).
 */
const policyDocuments = z.object({
  digest: z.string(),
  changes: z
    .array(
      z.object({
        action: z.enum(['create', 'update']),
        name: z.string(),
        version: z.number().nullable(),
        fields: z.object({ content: documentDiff, description: documentDiff }),
        content: z.string(),
        description: z.string().optional(),
      }),
    )
    .readonly(),
  unchanged: names,
  notManaged: names,
});

const savedPlanSchema = z.object({
  kind: z.literal('envsync-plan'),
  version: z.literal(SAVED_PLAN_VERSION),
  integrity: z.string(),
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
          fields,
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
      policyDocuments: policyDocuments.optional(),
    }),
  ),
  report: z.unknown(),
});

export type SavedPlan = z.infer<typeof savedPlanSchema>;
export type SavedOrg = SavedPlan['orgs'][number];
/** What `plan --out` writes before it is sealed (plan-integrity.ts, planFileText). */
export type PlanContent = Omit<SavedPlan, 'integrity'>;

/** The listing in the canonical form that is saved and hashed. */
function canonicalListing(observed: readonly ObservedEnvironment[]): SavedEnvironment[] {
  return [...observed]
    .sort((a, b) => compareNames(a.name, b.name))
    .map((env) => {
      const entry: Record<string, unknown> = { name: env.name };
      for (const spec of FIELD_LIST) {
        const value = env[spec.name];
        entry[spec.name] = value === undefined ? null : normalizeValue(spec, value);
      }
      return entry as SavedEnvironment;
    });
}

/** sha256 of the canonical listing: what `sync --plan` compares. */
export function listingDigest(observed: readonly ObservedEnvironment[]): string {
  return textDigest(JSON.stringify(canonicalListing(observed)));
}

/** sha256 of the policy documents the service holds (name, description, latest version, text). */
export function policyDocumentsDigest(observed: readonly ObservedPolicyDocument[]): string {
  const canonical = [...observed]
    .sort((a, b) => compareNames(a.name, b.name))
    .map(({ name, description, latest }) => [
      name,
      description,
      latest?.version ?? null,
      latest === undefined ? null : textDigest(latest.content),
    ]);
  return textDigest(JSON.stringify(canonical));
}

/** One org as planned: its listing and plan, and its policy documents' when it has any. */
export interface PlannedOrg {
  readonly observed: readonly ObservedEnvironment[];
  readonly plan: OrgPlan;
  readonly documents?: PlannedDocuments | undefined;
}

/** Builds the content of the file `plan --out` writes (planFileText seals it). */
export function savePlan(
  api: string,
  createdAt: string,
  planned: ReadonlyMap<string, PlannedOrg>,
  report: RunReport,
): PlanContent {
  const orgs = [...planned.entries()]
    .sort(([a], [b]) => compareNames(a, b))
    .map(([org, { observed, plan, documents }]) => ({
      org,
      dialect: plan.dialect,
      digest: listingDigest(observed),
      listing: canonicalListing(observed),
      changes: plan.changes.map((change) => ({
        action: change.action,
        cause: change.cause,
        name: change.name,
        fields: change.fields,
        unknownFields: [...change.unknownFields],
        knownNotConverged: change.knownNotConverged,
        desired: environmentOf(change.desired.name, change.desired, (env, spec) => env[spec.name]),
        requests: change.requests,
        renamedFrom: change.renamedFrom,
        renameNotFound: change.renameNotFound,
      })),
      unchanged: [...plan.unchanged],
      unmanaged: [...plan.unmanaged],
      archives: plan.archives?.map((a) => ({ name: a.name, ownedBy: [...a.ownedBy] })),
      policyDocuments: documents && {
        digest: policyDocumentsDigest(documents.observed),
        ...documents.plan,
      },
    }));
  // Its undefined members are not written (planFileText goes through JSON).
  return { kind: 'envsync-plan', version: SAVED_PLAN_VERSION, api, createdAt, orgs, report };
}

/**
 * What a plan sends that holds a secret (a token in a manifest's value, or in a value of the
 * service a PUT keeps or a request names), for a message. A plan file could hold it only masked,
 * and `sync --plan` would send the masked value: such a plan is not saved. What the plan only
 * shows (the values the service holds now, the other environments of its listing) is saved
 * masked, as every file is.
 */
export function unsavable(content: PlanContent, secrets: Masker): string[] {
  const found: string[] = [];
  for (const org of content.orgs) {
    const where = `org ${org.org}`;
    for (const { name, desired, kept, requests } of orgPlanFromSaved(org).changes)
      if (secrets.holds(JSON.stringify([desired, kept, requests])))
        found.push(`${where}, environment ${secrets.mask(name)}`);
    for (const { name } of org.archives ?? [])
      if (secrets.holds(name)) found.push(`${where}, the archive of ${secrets.mask(name)}`);
    for (const { name, content: text, description } of org.policyDocuments?.changes ?? [])
      if (secrets.holds(JSON.stringify([name, text, description])))
        found.push(`${where}, policy document ${secrets.mask(name)}`);
  }
  return found;
}

/** How to make a plan file envsync can trust again. */
export const makeAgain = (file: string) =>
  `make the plan again with "envsync plan --out ${file}" and review it`;

/**
 * Reads the text of the plan file `file`: whole JSON, of this version, sealed by its digest
 * (checked before anything in it is believed), then of the schema. A ConfigError says what is
 * wrong with it and what to do.
 */
export function readSavedPlan(text: string, file: string): SavedPlan {
  const refuse = (why: string) => new ConfigError(`--plan ${file}: cannot be used: ${why}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw refuse(`it is not whole JSON (${errorMessage(error)}); ${makeAgain(file)}`);
  }
  if (isPlainObject(json) && json['kind'] === 'envsync-plan') {
    const { version } = json;
    if (typeof version === 'number' && version !== SAVED_PLAN_VERSION) {
      throw refuse(
        `it has version ${version}, and this envsync reads only version ${SAVED_PLAN_VERSION}; ${makeAgain(file)}`,
      );
    }
    const problem = integrityProblem(json);
    if (problem !== undefined) throw refuse(`${problem}; ${makeAgain(file)}`);
  }
  const result = savedPlanSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const at = issue?.path.join('.') || 'root';
    throw refuse(`it is not an envsync plan (${at}: ${issue?.message ?? 'invalid'})`);
  }
  return result.data;
}

/** A saved change's value of a field: sets normalized; absent (or null: not listed) undefined. */
export function savedValue(env: Record<string, unknown>, spec: FieldSpec): FieldValue | undefined {
  const value = env[spec.name] as FieldValue | null | undefined;
  return value === undefined || value === null ? undefined : normalizeValue(spec, value);
}

/** The OrgPlan a saved org describes, to apply exactly that. */
export function orgPlanFromSaved(saved: PlanContent['orgs'][number]): OrgPlan {
  const listedByName = new Map(saved.listing.map((env) => [env.name, env]));
  return {
    org: saved.org,
    dialect: saved.dialect,
    changes: saved.changes.map((change): Change => {
      const wanted = {
        ...environmentOf(change.desired.name, change.desired, savedValue),
        ...(change.renamedFrom === undefined ? {} : { renamedFrom: change.renamedFrom }),
      } as DesiredEnvironment;
      // A rename's environment is listed under the name it is renamed from.
      const entry = listedByName.get(change.renamedFrom ?? change.name);
      return {
        ...change,
        cause: change.cause ?? 'change',
        fields: change.fields as Change['fields'],
        desired: wanted,
        // As reviewed: saved-plan-check.ts checks that they are what its fields call for.
        requests: change.requests as ChangeRequests,
        // The listing the plan was made from (its digest is checked before applying).
        kept:
          entry === undefined
            ? {}
            : keptValues(wanted, environmentOf(entry.name, entry, savedValue)),
      };
    }),
    unchanged: saved.unchanged,
    unmanaged: saved.unmanaged,
    ...(saved.archives === undefined ? {} : { archives: saved.archives }),
  };
}

/** Says, in a few words per environment, how the live listing moved since the plan. */
export function describeMove(saved: SavedOrg, live: readonly ObservedEnvironment[]): string[] {
  const before = new Map(saved.listing.map((env) => [env.name, env]));
  const after = new Map(canonicalListing(live).map((env) => [env.name, env]));
  const moves: string[] = [];
  for (const [name, env] of after) {
    const old = before.get(name);
    const changed = Object.keys(env).filter(
      (key) => JSON.stringify(env[key]) !== JSON.stringify(old?.[key]),
    );
    if (old === undefined) moves.push(`${name} appeared`);
    else if (changed.length > 0) moves.push(`${name} changed (${changed.join(', ')})`);
  }
  for (const name of before.keys()) if (!after.has(name)) moves.push(`${name} disappeared`);
  return moves.sort(compareNames);
}
