import * as z from 'zod';
import { FIELD_LIST, type FieldSpec, type FieldValue, type ValueKind } from '../core/fields.ts';
import { keptValues } from '../core/diff.ts';
import { isStringMap, type StringMap } from '../core/string-maps.ts';
import { normalizeValue } from '../core/value-kinds.ts';
import { crypto } from '../runtime/builtins.ts';
import { INTEGRITY_PATTERN, integrityProblem } from './plan-integrity.ts';
import { environmentOf } from '../core/compiled.generated.ts';
import type { Change, DesiredEnvironment, ObservedEnvironment, OrgPlan } from '../core/model.ts';
import { compareNames } from '../core/names.ts';
import type { RunReport } from '../core/report.ts';

/**
 * A saved plan (`plan --out`), bound to the listing it was computed from and sealed with an
 * integrity digest (plan-integrity.ts): `sync --plan` applies exactly these changes, and only
 * while the file is whole, agrees with itself and with the manifests (saved-plan-check.ts), and
 * every org's live listing still has the same digest.
 */
/**
 * Version 3: the file carries `integrity`, the digest of everything else in it. Version 2 had
 * every field of the registry but no digest; version 1 had four fields. A plan is applied by the
 * envsync that made it, moments later; an older file is refused with its version, not misread,
 * and a file without a digest is never trusted.
 */
export const SAVED_PLAN_VERSION = 3;

/** A field's value in a saved plan, as JSON, by its kind. */
const VALUE_SCHEMAS: Readonly<Record<ValueKind, () => z.ZodType>> = {
  enum: () => z.string(),
  text: () => z.string(),
  flag: () => z.boolean(),
  set: () => z.array(z.string()),
  // Checked in place: z.record would copy the object and drop a key such as `__proto__`.
  map: () => z.custom<StringMap>(isStringMap, 'expected an object of strings'),
};
const valueSchema = (spec: FieldSpec) => VALUE_SCHEMAS[spec.kind]();

/** One listing entry, or what a change sends: the name and each field by name. */
type SavedEnvironment = { readonly name: string } & Record<string, unknown>;

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

const savedPlanSchema = z.object({
  kind: z.literal('envsync-plan'),
  version: z.literal(SAVED_PLAN_VERSION),
  integrity: z.string().regex(INTEGRITY_PATTERN),
  api: z.string(),
  createdAt: z.string(),
  orgs: z.array(
    z.object({
      org: z.string(),
      digest: z.string(),
      listing: z.array(listed),
      changes: z.array(
        z.object({
          action: z.enum(['create', 'update', 'unverified']),
          cause: z.enum(['drift', 'change']).optional(),
          name: z.string(),
          fields: z.record(z.string(), fieldDiff),
          unknownFields: z.array(z.enum(FIELD_LIST.map((spec) => spec.name))),
          knownNotConverged: z.boolean(),
          desired,
        }),
      ),
      unchanged: z.array(z.string()),
      unmanaged: z.array(z.string()),
    }),
  ),
  report: z.unknown(),
});

export type SavedPlan = z.infer<typeof savedPlanSchema>;
/** What `plan --out` writes before it is sealed (plan-integrity.ts, planFileText). */
export type PlanContent = Omit<SavedPlan, 'integrity'>;
type SavedListing = SavedEnvironment;

/** The listing in the canonical form that is saved and hashed. */
function canonicalListing(observed: readonly ObservedEnvironment[]): SavedListing[] {
  return [...observed]
    .sort((a, b) => compareNames(a.name, b.name))
    .map((env) => {
      const entry: Record<string, unknown> = { name: env.name };
      for (const spec of FIELD_LIST) {
        const value = env[spec.name];
        entry[spec.name] = value === undefined ? null : normalizeValue(spec, value);
      }
      return entry as SavedListing;
    });
}

/** What a change sends, as the plan file spells it. */
function desiredJson(env: DesiredEnvironment): SavedEnvironment {
  const json: Record<string, unknown> = { name: env.name };
  for (const spec of FIELD_LIST) {
    const value = env[spec.name];
    if (value !== undefined) json[spec.name] = Array.isArray(value) ? [...value] : value;
  }
  return json as SavedEnvironment;
}

/** A saved change's values, read back: sets normalized. */
export function savedValue(raw: Record<string, unknown>, spec: FieldSpec): FieldValue | undefined {
  const value = raw[spec.name] as FieldValue | undefined;
  return value === undefined ? undefined : normalizeValue(spec, value);
}

/** A saved listing entry's value: null where the listing did not carry the field. */
function listedValue(raw: Record<string, unknown>, spec: FieldSpec): FieldValue | undefined {
  const value = raw[spec.name] as FieldValue | null | undefined;
  return value === undefined || value === null ? undefined : normalizeValue(spec, value);
}

/** sha256 of the canonical listing: what `sync --plan` compares. */
export function listingDigest(observed: readonly ObservedEnvironment[]): string {
  return `sha256:${crypto()
    .createHash('sha256')
    .update(JSON.stringify(canonicalListing(observed)))
    .digest('hex')}`;
}

/** Builds the content of the file `plan --out` writes (planFileText seals it). */
export function savePlan(
  api: string,
  createdAt: string,
  planned: ReadonlyMap<string, { observed: readonly ObservedEnvironment[]; plan: OrgPlan }>,
  report: RunReport,
): PlanContent {
  const orgs = [...planned.entries()]
    .sort(([a], [b]) => compareNames(a, b))
    .map(([org, { observed, plan }]) => ({
      org,
      digest: listingDigest(observed),
      listing: canonicalListing(observed),
      changes: plan.changes.map((change) => ({
        action: change.action,
        cause: change.cause,
        name: change.name,
        fields: change.fields as Record<string, { from: unknown; to: unknown }>,
        unknownFields: [...change.unknownFields],
        knownNotConverged: change.knownNotConverged,
        desired: desiredJson(change.desired),
      })),
      unchanged: [...plan.unchanged],
      unmanaged: [...plan.unmanaged],
    }));
  return { kind: 'envsync-plan', version: SAVED_PLAN_VERSION, api, createdAt, orgs, report };
}

/** How to make a plan file envsync can trust again. */
export const makeAgain = (file: string) =>
  `make the plan again with "envsync plan --out ${file}" and review it`;

/**
 * Reads a saved plan: its kind, its version, its integrity digest (before anything in it is
 * believed), then its shape. A plain Error says what is wrong with it and what to do.
 */
export function readSavedPlan(json: unknown, file = 'FILE'): SavedPlan {
  const plan = (json !== null && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  const { kind, version } = plan;
  if (kind === 'envsync-plan' && typeof version === 'number' && version !== SAVED_PLAN_VERSION) {
    throw new Error(
      version < SAVED_PLAN_VERSION
        ? `it has version ${version}, written by an older envsync without an integrity digest, and a plan that is not sealed cannot be trusted; ${makeAgain(file)}`
        : `it has version ${version}; this envsync reads version ${SAVED_PLAN_VERSION}`,
    );
  }
  if (kind === 'envsync-plan' && version === SAVED_PLAN_VERSION) {
    const problem = integrityProblem(plan);
    if (problem !== undefined) {
      throw new Error(`${problem}; ${makeAgain(file)}`);
    }
  }
  const result = savedPlanSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(
      `it is not an envsync plan (${issue?.path.join('.') || 'root'}: ${issue?.message ?? 'invalid'})`,
    );
  }
  return result.data;
}

/** The OrgPlan a saved org describes, to apply exactly that. */
export function orgPlanFromSaved(saved: SavedPlan['orgs'][number]): OrgPlan {
  const listedByName = new Map(saved.listing.map((env) => [env.name, env]));
  return {
    org: saved.org,
    changes: saved.changes.map((change): Change => {
      const wanted = environmentOf(
        change.desired.name,
        change.desired,
        savedValue,
      ) as DesiredEnvironment;
      const listedEntry = listedByName.get(change.name);
      return {
        action: change.action,
        cause: change.cause ?? 'change',
        name: change.name,
        fields: change.fields,
        unknownFields: change.unknownFields,
        knownNotConverged: change.knownNotConverged,
        desired: wanted,
        // The listing the plan was made from (its digest is checked before applying).
        kept:
          listedEntry === undefined
            ? {}
            : keptValues(wanted, environmentOf(listedEntry.name, listedEntry, listedValue)),
      };
    }),
    unchanged: saved.unchanged,
    unmanaged: saved.unmanaged,
  };
}

/** Says, in a few words per environment, how the live listing moved since the plan. */
export function describeMove(
  saved: SavedPlan['orgs'][number],
  live: readonly ObservedEnvironment[],
): string[] {
  const before = new Map(saved.listing.map((env) => [env.name, env]));
  const after = new Map(canonicalListing(live).map((env) => [env.name, env]));
  const moves: string[] = [];
  for (const [name, env] of after) {
    const old = before.get(name);
    if (old === undefined) moves.push(`${name} appeared`);
    else {
      const fields = Object.keys(env).filter(
        (key) => JSON.stringify(env[key]) !== JSON.stringify(old[key]),
      );
      if (fields.length > 0) moves.push(`${name} changed (${fields.join(', ')})`);
    }
  }
  for (const name of before.keys()) if (!after.has(name)) moves.push(`${name} disappeared`);
  return moves.sort(compareNames);
}
