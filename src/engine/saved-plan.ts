/**
 * A saved plan (`plan --out`, docs/cli.md "Saved plans"): its format, one version, decided by its
 * zod schema; how it is made from a pass, and read back for `sync --plan` (apply-saved.ts).
 */
import { stringify } from 'safe-stable-stringify';
import * as z from 'zod';
import { API_DIALECTS } from '../core/dialect.ts';
import { keptValues } from '../core/plan.ts';
import {
  environmentOf,
  FIELD_LIST,
  type FieldSpec,
  type FieldValue,
  isPlainObject,
  normalizeValue,
} from '../core/fields.ts';
import { type Mask, maskDeep, type Masker } from '../core/mask.ts';
import type {
  Change,
  ChangeRequests,
  DesiredEnvironment,
  ObservedEnvironment,
  OrgPlan,
} from '../core/model.ts';
import { escapeJson } from '../core/escape.ts';
import { compareNames, sortedByName } from '../core/names.ts';
import type { ObservedPolicyDocument } from '../core/policy-documents.ts';
import type { RunReport } from '../core/report.ts';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { fileValue, stringMap } from '../state/format.ts';
import { textDigest } from './policy-documents.ts';
import type { PlannedDocuments } from './reconcile.ts';

const SAVED_PLAN_VERSION = 6;

type SavedEnvironment = { readonly name: string } & Record<string, unknown>;

const environment = (schema: (spec: FieldSpec) => z.ZodType): z.ZodType<SavedEnvironment> =>
  z.object({
    name: z.string(),
    ...Object.fromEntries(FIELD_LIST.map((spec) => [spec.name, schema(spec)])),
  });

/** A listing entry: every field, null where the listing does not carry it. */
const listed = environment((spec) =>
  spec.listing.absent === 'omitted' ? fileValue(spec).nullable() : fileValue(spec),
);

const desiredSchema = environment((spec) =>
  spec.managed === 'always' ? fileValue(spec) : fileValue(spec).optional(),
);

const fields = z.strictObject(
  Object.fromEntries(
    FIELD_LIST.map((spec) => {
      const to = fileValue(spec);
      const diff = z.object({ from: to.nullable(), to, notShown: z.literal(true).optional() });
      return [spec.name, diff.optional()];
    }),
  ),
);

const names = z.array(z.string()).readonly();
const fieldNames = z.array(z.enum(FIELD_LIST.map((spec) => spec.name))).readonly();

const requestsSchema = z.strictObject({
  rename: z.string().optional(),
  put: z.boolean(),
  patch: fieldNames.optional(),
  policies: z.strictObject({ attach: names, detach: names }).optional(),
  tags: z.strictObject({ set: stringMap, remove: names }).optional(),
});

const documentDiff = z.object({ from: z.string().nullable(), to: z.string() }).optional();

/** The digest of the documents the service held, and each upload with the text it sends. */
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
          unknownFields: z.array(z.enum(FIELD_LIST.map((spec) => spec.name))).readonly(),
          knownNotConverged: z.boolean(),
          desired: desiredSchema,
          requests: requestsSchema,
          renamedFrom: z.string().optional(),
          renameNotFound: z.string().optional(),
        }),
      ),
      unchanged: names,
      unmanaged: names,
      archives: z
        .array(
          z.strictObject({
            name: z.string(),
            ownedBy: z.array(z.enum(['state', 'tag'])).readonly(),
          }),
        )
        .readonly()
        .optional(),
      policyDocuments: policyDocuments.optional(),
    }),
  ),
  report: z.unknown(),
});

export type SavedPlan = z.infer<typeof savedPlanSchema>;
export type SavedOrg = SavedPlan['orgs'][number];
/** What `plan --out` writes before it is sealed. */
type PlanContent = Omit<SavedPlan, 'integrity'>;

/** The listing as it is saved and hashed: sorted, every field, null where not listed. */
function canonicalListing(observed: readonly ObservedEnvironment[]): SavedEnvironment[] {
  return sortedByName(observed).map((env) => {
    const entry: Record<string, unknown> = { name: env.name };
    for (const spec of FIELD_LIST) {
      const value = env[spec.name];
      entry[spec.name] = value === undefined ? null : normalizeValue(spec, value);
    }
    return entry as SavedEnvironment;
  });
}

/** What `sync --plan` compares. */
export function listingDigest(observed: readonly ObservedEnvironment[]): string {
  return textDigest(JSON.stringify(canonicalListing(observed)));
}

/** Of each document: name, description, latest version and text. */
export function policyDocumentsDigest(observed: readonly ObservedPolicyDocument[]): string {
  const canonical = sortedByName(observed).map(({ name, description, latest }) => [
    name,
    description,
    latest?.version ?? null,
    latest === undefined ? null : textDigest(latest.content),
  ]);
  return textDigest(JSON.stringify(canonical));
}

export interface PlannedOrg {
  readonly observed: readonly ObservedEnvironment[];
  readonly plan: OrgPlan;
  readonly documents?: PlannedDocuments | undefined;
}

/** The content of the file `plan --out` writes (planFileText seals it). */
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
        unknownFields: change.unknownFields,
        knownNotConverged: change.knownNotConverged,
        desired: environmentOf(change.desired.name, change.desired, (env, spec) => env[spec.name]),
        requests: change.requests,
        renamedFrom: change.renamedFrom,
        renameNotFound: change.renameNotFound,
      })),
      unchanged: plan.unchanged,
      unmanaged: plan.unmanaged,
      archives: plan.archives,
      policyDocuments: documents && {
        digest: policyDocumentsDigest(documents.observed),
        ...documents.plan,
      },
    }));
  // Undefined members are not written (planFileText goes through JSON).
  return { kind: 'envsync-plan', version: SAVED_PLAN_VERSION, api, createdAt, orgs, report };
}

/**
 * Where a plan sends a value that holds a secret: a file could hold it only masked, which
 * `sync --plan` would send, so such a plan is not saved. What it only shows is saved masked.
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

/**
 * SHA-256 of the canonical JSON (keys sorted by code unit) of all but the digest: it finds an edit
 * or a cut file; whoever can rewrite the whole file can compute it again (docs/security.md).
 */
export function integrityOf(plan: Readonly<Record<string, unknown>>): string {
  const { integrity: _integrity, ...content } = plan;
  return textDigest(stringify(content));
}

/**
 * `content` masked (what it sends holds no secret: `unsavable`), sealed with the digest of what the
 * file holds, unsafe characters \u-escaped (which the parsed content, and the digest, do not see).
 */
export function planFileText(content: object, mask: Mask): string {
  const masked = maskDeep(JSON.parse(JSON.stringify(content)) as Record<string, unknown>, mask);
  const { kind, version, ...rest } = masked;
  const sealed = { kind, version, integrity: integrityOf(masked), ...rest };
  return escapeJson(`${JSON.stringify(sealed, null, 2)}\n`);
}

/**
 * Whole JSON, of this version, sealed by its digest (checked before anything in it is believed),
 * of the schema; or a ConfigError says what is wrong and what to do.
 */
export function readSavedPlan(text: string, file: string): SavedPlan {
  const again = `make the plan again with "envsync plan --out ${file}" and review it`;
  const refuse = (why: string) => new ConfigError(`--plan ${file}: cannot be used: ${why}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw refuse(`it is not whole JSON (${errorMessage(error)}); ${again}`);
  }
  if (isPlainObject(json) && json['kind'] === 'envsync-plan') {
    const { version } = json;
    if (typeof version === 'number' && version !== SAVED_PLAN_VERSION) {
      throw refuse(
        `it has version ${version}, and this envsync reads only version ${SAVED_PLAN_VERSION}; ${again}`,
      );
    }
    const recorded = json['integrity'];
    const changed = `it was changed or damaged after "envsync plan --out" wrote it`;
    if (recorded === undefined)
      throw refuse(
        `it has no integrity digest, and a plan that is not sealed cannot be trusted; ${again}`,
      );
    if (typeof recorded !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(recorded))
      throw refuse(`its integrity digest is not a sha256 digest: ${changed}; ${again}`);
    const computed = integrityOf(json);
    if (recorded !== computed)
      throw refuse(
        `its integrity digest does not match its content (the file says ${recorded}, its content hashes to ${computed}): ${changed}, so it is not the plan that was reviewed; ${again}`,
      );
  }
  const result = savedPlanSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const at = issue?.path.join('.') || 'root';
    throw refuse(`it is not an envsync plan (${at}: ${issue?.message ?? 'invalid'})`);
  }
  return result.data;
}

/** A saved value, normalized; absent or null (not listed): undefined. */
export function savedValue(env: Record<string, unknown>, spec: FieldSpec): FieldValue | undefined {
  const value = env[spec.name] as FieldValue | null | undefined;
  return value === undefined || value === null ? undefined : normalizeValue(spec, value);
}

/** The plan a saved org describes, to apply exactly that. */
export function orgPlanFromSaved(saved: PlanContent['orgs'][number]): OrgPlan {
  const listedByName = new Map(saved.listing.map((env) => [env.name, env]));
  return {
    org: saved.org,
    dialect: saved.dialect,
    changes: saved.changes.map((change): Change => {
      const wanted = {
        ...environmentOf(change.desired.name, change.desired, savedValue),
        renamedFrom: change.renamedFrom,
      } as DesiredEnvironment;
      // A rename's environment is listed under the name it is renamed from.
      const entry = listedByName.get(change.renamedFrom ?? change.name);
      return {
        ...change,
        cause: change.cause ?? 'change',
        desired: wanted,
        // apply-saved.ts checks that they are what its fields call for.
        requests: change.requests as ChangeRequests,
        kept:
          entry === undefined
            ? {}
            : keptValues(wanted, environmentOf(entry.name, entry, savedValue)),
      };
    }),
    unchanged: saved.unchanged,
    unmanaged: saved.unmanaged,
    archives: saved.archives,
  };
}

/** How the live listing moved since the plan, in a few words per environment. */
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
