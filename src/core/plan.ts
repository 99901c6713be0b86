import type {
  AppliedRecord,
  Change,
  DesiredEnvironment,
  FieldDiff,
  FieldName,
  ObservedEnvironment,
  OrgPlan,
} from './model.ts';

/** Compares two strings by code unit, so the order never depends on the locale. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isNormalized(policies: readonly string[]): boolean {
  for (let i = 1; i < policies.length; i++) {
    if (compareNames(policies[i - 1] as string, policies[i] as string) >= 0) return false;
  }
  return true;
}

/** Returns the policies sorted and without duplicates, the form envsync compares and records. */
export function normalizePolicies(policies: readonly string[]): string[] {
  return isNormalized(policies) ? [...policies] : [...new Set(policies)].sort(compareNames);
}

/** Compares as sets; without allocating when both sides are already normalized (the usual case). */
function samePolicies(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  const x = isNormalized(a) ? a : normalizePolicies(a);
  const y = isNormalized(b) ? b : normalizePolicies(b);
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** A stable text form of the fields envsync sends, to recognise "the same change" later. */
export function fingerprintDesired(env: DesiredEnvironment): string {
  return JSON.stringify([
    env.type,
    env.description,
    env.includeScaling,
    normalizePolicies(env.policies),
  ]);
}

/** A stable text form of what the listing shows; fields the listing does not carry are null. */
export function fingerprintObserved(env: ObservedEnvironment): string {
  return JSON.stringify([
    env.type,
    env.description,
    env.includeScaling ?? null,
    env.policies === undefined ? null : normalizePolicies(env.policies),
  ]);
}

/**
 * Compares one desired environment with what is known of it remotely: the listing first, the
 * last applied record for the fields the listing does not carry.
 */
function diffEnvironment(
  desired: DesiredEnvironment,
  observed: ObservedEnvironment,
  applied: AppliedRecord | undefined,
): { fields: Partial<Record<FieldName, FieldDiff>>; unknownFields: FieldName[] } {
  const fields: Partial<Record<FieldName, FieldDiff>> = {};
  const unknownFields: FieldName[] = [];
  if (observed.type !== desired.type) fields.type = { from: observed.type, to: desired.type };
  if (observed.description !== desired.description) {
    fields.description = { from: observed.description, to: desired.description };
  }
  const includeScaling = observed.includeScaling ?? applied?.includeScaling;
  if (includeScaling === undefined) unknownFields.push('include_scaling');
  else if (includeScaling !== desired.includeScaling) {
    fields.include_scaling = { from: includeScaling, to: desired.includeScaling };
  }
  const policies = observed.policies ?? applied?.policies;
  if (policies === undefined) unknownFields.push('policies');
  else if (!samePolicies(policies, desired.policies)) {
    fields.policies = {
      from: normalizePolicies(policies),
      to: normalizePolicies(desired.policies),
    };
  }
  return { fields, unknownFields };
}

/**
 * Plans one organization: for every desired environment exactly one of create, update,
 * unverified or unchanged; every listed environment the manifests do not name is unmanaged.
 * Pure: the same inputs in any order give the same plan.
 */
export function planOrg(
  org: string,
  desired: readonly DesiredEnvironment[],
  observed: readonly ObservedEnvironment[],
  applied: Readonly<Record<string, AppliedRecord>> = {},
): OrgPlan {
  const observedByName = new Map<string, ObservedEnvironment>();
  for (const env of observed) observedByName.set(env.name, env);
  const changes: Change[] = [];
  const unchanged: string[] = [];
  let matched = 0; // distinct listed names the manifests declare
  let previous: string | undefined;

  for (const env of sortedByName(desired)) {
    const remote = observedByName.get(env.name);
    if (remote !== undefined && env.name !== previous) matched++;
    previous = env.name;
    const record = Object.hasOwn(applied, env.name) ? applied[env.name] : undefined;
    if (remote === undefined) {
      changes.push({
        action: 'create',
        name: env.name,
        fields: {
          type: { from: null, to: env.type },
          description: { from: null, to: env.description },
          include_scaling: { from: null, to: env.includeScaling },
          policies: { from: null, to: normalizePolicies(env.policies) },
        },
        unknownFields: [],
        desired: env,
        knownNotConverged: false,
      });
      continue;
    }
    if (isUnchanged(env, remote, record)) {
      unchanged.push(env.name);
      continue;
    }
    const { fields, unknownFields } = diffEnvironment(env, remote, record);
    const differs = Object.keys(fields).length > 0;
    const stuck = record?.notConverged;
    changes.push({
      action: differs ? 'update' : 'unverified',
      name: env.name,
      fields,
      unknownFields,
      desired: env,
      knownNotConverged:
        stuck !== undefined &&
        stuck.desired === fingerprintDesired(env) &&
        stuck.observed === fingerprintObserved(remote),
    });
  }

  // Every listed name was matched (the usual case): nothing is unmanaged, no set needed.
  if (matched === observedByName.size) return { org, changes, unchanged, unmanaged: [] };
  const desiredNames = new Set(desired.map((env) => env.name));
  const unmanaged = [...observedByName.keys()].filter((name) => !desiredNames.has(name));
  return { org, changes, unchanged, unmanaged: unmanaged.sort(compareNames) };
}

/** `desired` in name order: itself when already sorted (the loader sorts), else a sorted copy. */
function sortedByName(desired: readonly DesiredEnvironment[]): readonly DesiredEnvironment[] {
  for (let i = 1; i < desired.length; i++) {
    if (
      compareNames(
        (desired[i - 1] as DesiredEnvironment).name,
        (desired[i] as DesiredEnvironment).name,
      ) > 0
    ) {
      return [...desired].sort((a, b) => compareNames(a.name, b.name));
    }
  }
  return desired;
}

/** The allocation-free check for the usual case: every field known and equal. */
function isUnchanged(
  desired: DesiredEnvironment,
  observed: ObservedEnvironment,
  applied: AppliedRecord | undefined,
): boolean {
  if (observed.type !== desired.type || observed.description !== desired.description) return false;
  const includeScaling = observed.includeScaling ?? applied?.includeScaling;
  if (includeScaling !== desired.includeScaling) return false;
  const policies = observed.policies ?? applied?.policies;
  return policies !== undefined && samePolicies(policies, desired.policies);
}
