import {
  environmentOf,
  FIELD_LIST,
  type FieldSpec,
  type FieldValue,
  normalizeValue,
} from '../core/fields.ts';
import { keptValues } from '../core/plan.ts';
import * as crypto from 'node:crypto';
import { integrityProblem } from './plan-integrity.ts';
import {
  type PlanContent,
  SAVED_PLAN_VERSION,
  type SavedEnvironment,
  type SavedPlan,
  savedPlanSchema,
} from './saved-plan-schema.ts';
import type {
  Change,
  ChangeRequests,
  DesiredEnvironment,
  ObservedEnvironment,
  OrgPlan,
} from '../core/model.ts';
import type { Masker } from '../core/mask.ts';
import { compareNames } from '../core/names.ts';
import type { RunReport } from '../core/report.ts';
import type { PlannedDocuments } from './reconcile.ts';
import { saveDocuments } from './saved-plan-documents.ts';

/**
 * A saved plan (`plan --out`), bound to the listing it was computed from and sealed with an
 * integrity digest (plan-integrity.ts): `sync --plan` applies exactly these changes, and only
 * while the file is whole, agrees with itself and with the manifests (saved-plan-check.ts), and
 * every org's live listing still has the same digest. Its format: saved-plan-schema.ts.
 */

export { SAVED_PLAN_VERSION, type PlanContent, type SavedPlan } from './saved-plan-schema.ts';
type SavedListing = SavedEnvironment;
type SavedChange = SavedPlan['orgs'][number]['changes'][number];
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

/** A change's requests, as the plan file spells them. */
function requestsJson(requests: ChangeRequests): SavedChange['requests'] {
  const { rename, put, policies, tags } = requests;
  return {
    ...(rename === undefined ? {} : { rename }),
    put,
    ...(policies === undefined
      ? {}
      : { policies: { attach: [...policies.attach], detach: [...policies.detach] } }),
    ...(tags === undefined ? {} : { tags: { set: tags.set, remove: [...tags.remove] } }),
  };
}

/** A saved change's requests, read back. */
export function requestsOf(saved: SavedChange['requests']): ChangeRequests {
  const { rename, put, policies, tags } = saved;
  return {
    ...(rename === undefined ? {} : { rename }),
    put,
    ...(policies === undefined ? {} : { policies }),
    ...(tags === undefined ? {} : { tags }),
  };
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
  return `sha256:${crypto
    .createHash('sha256')
    .update(JSON.stringify(canonicalListing(observed)))
    .digest('hex')}`;
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
        fields: change.fields as Record<string, { from: unknown; to: unknown }>,
        unknownFields: [...change.unknownFields],
        knownNotConverged: change.knownNotConverged,
        desired: desiredJson(change.desired),
        requests: requestsJson(change.requests),
        ...(change.renamedFrom === undefined ? {} : { renamedFrom: change.renamedFrom }),
        ...(change.renameNotFound === undefined ? {} : { renameNotFound: change.renameNotFound }),
      })),
      unchanged: [...plan.unchanged],
      unmanaged: [...plan.unmanaged],
      ...(plan.archives === undefined
        ? {}
        : {
            archives: plan.archives.map((a) => ({ name: a.name, ownedBy: [...a.ownedBy] })),
          }),
      ...(documents === undefined
        ? {}
        : { policyDocuments: saveDocuments(documents.observed, documents.plan) }),
    }));
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
 * Reads a saved plan: its kind, its version, its integrity digest (before anything in it is
 * believed), then its shape. A plain Error says what is wrong with it and what to do.
 */
export function readSavedPlan(json: unknown, file = 'FILE'): SavedPlan {
  const plan = (json !== null && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  const { kind, version } = plan;
  if (kind === 'envsync-plan' && typeof version === 'number' && version !== SAVED_PLAN_VERSION) {
    const older =
      version < 3
        ? 'written by an older envsync without an integrity digest, and a plan that is not sealed cannot be trusted'
        : version < 4
          ? 'written by an older envsync that did not record how each change is sent (its API dialect, and the requests beside the PUT)'
          : 'written by an older envsync that did not record renames and archives';
    throw new Error(
      version < SAVED_PLAN_VERSION
        ? `it has version ${version}, ${older}; ${makeAgain(file)}`
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
    dialect: saved.dialect,
    changes: saved.changes.map((change): Change => {
      const wanted = {
        ...environmentOf(change.desired.name, change.desired, savedValue),
        ...(change.renamedFrom === undefined ? {} : { renamedFrom: change.renamedFrom }),
      } as DesiredEnvironment;
      // A rename's environment is listed under the name it is renamed from.
      const listedEntry = listedByName.get(change.renamedFrom ?? change.name);
      return {
        action: change.action,
        cause: change.cause ?? 'change',
        name: change.name,
        fields: change.fields,
        unknownFields: change.unknownFields,
        knownNotConverged: change.knownNotConverged,
        desired: wanted,
        // As reviewed; saved-plan-check.ts has checked that they are what its fields call for.
        requests: requestsOf(change.requests),
        // The listing the plan was made from (its digest is checked before applying).
        kept:
          listedEntry === undefined
            ? {}
            : keptValues(wanted, environmentOf(listedEntry.name, listedEntry, listedValue)),
        ...(change.renamedFrom === undefined ? {} : { renamedFrom: change.renamedFrom }),
        ...(change.renameNotFound === undefined ? {} : { renameNotFound: change.renameNotFound }),
      };
    }),
    unchanged: saved.unchanged,
    unmanaged: saved.unmanaged,
    ...(saved.archives === undefined ? {} : { archives: saved.archives }),
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
