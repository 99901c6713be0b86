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
  applied: Readonly<Record<string, AppliedRecord>> | AppliedLookup = {},
): OrgPlan {
  const recordOf: AppliedLookup =
    typeof applied === 'function'
      ? applied
      : (name) => (Object.hasOwn(applied, name) ? applied[name] : undefined);
  // Both sides in name order (the loader sorts; the production service lists so), walked side
  // by side: no lookup table per org.
  const listed = sortedByName(observed);
  const changes: Change[] = [];
  const unchanged: string[] = [];
  const unmanaged: string[] = [];
  const notDeclared = (name: string) => {
    if (unmanaged[unmanaged.length - 1] !== name) unmanaged.push(name);
  };
  let next = 0; // the first listed entry not yet passed
  let previous: string | undefined;

  for (const env of sortedByName(desired)) {
    // Listed names before this one are not declared (those equal to the previous one are).
    for (; next < listed.length; next++) {
      const name = (listed[next] as ObservedEnvironment).name;
      if (compareNames(name, env.name) >= 0) break;
      if (name !== previous) notDeclared(name);
    }
    previous = env.name;
    // The listed entry of this name (the last one, were it listed twice).
    let remote: ObservedEnvironment | undefined;
    for (let k = next; k < listed.length; k++) {
      const entry = listed[k] as ObservedEnvironment;
      if (entry.name !== env.name) break;
      remote = entry;
    }
    const record = recordOf(env.name);
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
  for (; next < listed.length; next++) {
    const name = (listed[next] as ObservedEnvironment).name;
    if (name !== previous) notDeclared(name);
  }
  return { org, changes, unchanged, unmanaged };
}

/** The last applied record of an environment, by name (the state file's, see engine/state.ts). */
export type AppliedLookup = (name: string) => AppliedRecord | undefined;

/** `list` in name order: itself when already sorted (the usual case), else a sorted copy. */
function sortedByName<T extends { readonly name: string }>(list: readonly T[]): readonly T[] {
  for (let i = 1; i < list.length; i++) {
    if (compareNames((list[i - 1] as T).name, (list[i] as T).name) > 0) {
      return [...list].sort((a, b) => compareNames(a.name, b.name));
    }
  }
  return list;
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
