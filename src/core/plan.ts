import { createdFields, diffEnvironment, fingerprint, keptValues } from './diff.ts';
import type { ApiDialect } from './dialect.ts';
import { changeCause } from './drift.ts';
import { changeRequests, type RequestExtras } from './requests.ts';
import type {
  AppliedLookup,
  AppliedRecord,
  ArchivePlan,
  Change,
  DesiredEnvironment,
  ObservedEnvironment,
  OrgPlan,
} from './model.ts';
import { compareNames, sortedByName } from './names.ts';
import {
  hasOwnerTag,
  OWNER_TAG_KEY,
  ownedBy,
  ownerTagValue,
  withoutOwnerTag,
} from './ownership.ts';

/** What an org's plan takes beyond its environments. */
export interface PlanOptions {
  /**
   * The org's manifests say `prune: true`: every listed environment they do not declare that
   * envsync owns (ownership.ts) is archived, and every change sets the ownership tag.
   */
  readonly prune?: boolean | undefined;
}

/**
 * Plans one organization: for every desired environment exactly one of create, update, rename,
 * unverified or unchanged; every listed environment the manifests do not name (nor rename) is
 * unmanaged, or, under `prune`, archived when envsync owns it. `dialect` decides how each change
 * is sent (requests.ts); a declared field or key the dialect cannot send must be refused before
 * (unsendableFields), and so must a rename whose both names are listed (renameConflicts). Pure:
 * the same inputs in any order give the same plan.
 */
export function planOrg(
  org: string,
  desired: readonly DesiredEnvironment[],
  observed: readonly ObservedEnvironment[],
  applied: Readonly<Record<string, AppliedRecord>> | AppliedLookup = {},
  dialect: ApiDialect = 'contract',
  options: PlanOptions = {},
): OrgPlan {
  const recordOf: AppliedLookup =
    typeof applied === 'function'
      ? applied
      : (name) => (Object.hasOwn(applied, name) ? applied[name] : undefined);
  const prune = options.prune === true;
  const owner = prune ? { key: OWNER_TAG_KEY, value: ownerTagValue(org) } : undefined;
  // Both sides in name order (the loader sorts; the production service lists so), walked side
  // by side: no lookup table per org, unless some environment is renamed.
  const listed = sortedByName(observed);
  const renames = renameSources(desired, listed);
  const changes: Change[] = [];
  const unchanged: string[] = [];
  const unmanaged: string[] = [];
  const archives: ArchivePlan[] = [];
  let lastUndeclared: string | undefined;
  const notDeclared = (entry: ObservedEnvironment) => {
    const { name } = entry;
    if (lastUndeclared === name || renames?.consumed.has(name) === true) return;
    lastUndeclared = name;
    const why = prune ? ownedBy(org, entry, recordOf(name)) : [];
    if (why.length > 0) archives.push({ name, ownedBy: why });
    else unmanaged.push(name);
  };
  let next = 0; // the first listed entry not yet passed
  let previous: string | undefined;

  for (const env of sortedByName(desired)) {
    // Listed names before this one are not declared (those equal to the previous one are).
    for (; next < listed.length; next++) {
      const entry = listed[next] as ObservedEnvironment;
      if (compareNames(entry.name, env.name) >= 0) break;
      if (entry.name !== previous) notDeclared(entry);
    }
    previous = env.name;
    // The listed entry of this name (the last one, were it listed twice).
    let remote: ObservedEnvironment | undefined;
    for (let k = next; k < listed.length; k++) {
      const entry = listed[k] as ObservedEnvironment;
      if (entry.name !== env.name) break;
      remote = entry;
    }
    const renamedFrom = remote === undefined ? renames?.byNew.get(env.name) : undefined;
    if (renamedFrom !== undefined) remote = renamedFrom;
    if (remote === undefined) {
      const fields = createdFields(env);
      changes.push({
        action: 'create',
        cause: 'change',
        name: env.name,
        fields,
        unknownFields: [],
        desired: env,
        kept: {},
        requests: changeRequests('create', fields, dialect, { ownerTag: owner }),
        knownNotConverged: false,
        ...(env.renamedFrom === undefined ? {} : { renameNotFound: env.renamedFrom }),
      });
      continue;
    }
    const record = recordOf(remote.name);
    const compared = owner === undefined ? remote : withoutOwnerTag(remote, owner.value);
    const diff = diffEnvironment(env, compared, record);
    if (diff === undefined && renamedFrom === undefined) {
      unchanged.push(env.name);
      continue;
    }
    const fields = diff?.fields ?? {};
    const stuck = record?.notConverged;
    // Unverified: nothing is known to differ, but some declared value was never seen.
    const differs = Object.values(fields).some((field) => field.notShown !== true);
    const action =
      renamedFrom !== undefined ? 'rename' : differs ? 'update' : ('unverified' as const);
    const extras: RequestExtras = {
      renameFrom: renamedFrom?.name,
      ownerTag: owner !== undefined && !hasOwnerTag(org, remote) ? owner : undefined,
    };
    changes.push({
      action,
      cause: changeCause(action, env, record),
      name: env.name,
      fields,
      unknownFields: diff?.unknownFields ?? [],
      desired: env,
      kept: keptValues(env, remote),
      requests: changeRequests(action, fields, dialect, extras),
      knownNotConverged:
        renamedFrom === undefined &&
        stuck !== undefined &&
        stuck.desired === fingerprint(env) &&
        stuck.observed === fingerprint(compared),
      ...(renamedFrom === undefined ? {} : { renamedFrom: renamedFrom.name }),
    });
  }
  for (; next < listed.length; next++) {
    const entry = listed[next] as ObservedEnvironment;
    if (entry.name !== previous) notDeclared(entry);
  }
  return { org, dialect, changes, unchanged, unmanaged, ...(prune ? { archives } : {}) };
}

/**
 * The listed entries that declared environments are renamed from (by the new name), and the old
 * names so taken; undefined when no environment is renamed from a listed name. A rename whose new
 * name is listed too is not one (renameConflicts refuses it when the old one is also listed).
 */
function renameSources(
  desired: readonly DesiredEnvironment[],
  listed: readonly ObservedEnvironment[],
): { byNew: Map<string, ObservedEnvironment>; consumed: Set<string> } | undefined {
  if (!desired.some((env) => env.renamedFrom !== undefined)) return undefined;
  const byName = new Map(listed.map((entry) => [entry.name, entry]));
  const byNew = new Map<string, ObservedEnvironment>();
  const consumed = new Set<string>();
  for (const env of desired) {
    if (env.renamedFrom === undefined || byName.has(env.name)) continue;
    const old = byName.get(env.renamedFrom);
    if (old === undefined) continue;
    byNew.set(env.name, old);
    consumed.add(old.name);
  }
  return byNew.size === 0 ? undefined : { byNew, consumed };
}

/** A rename the service cannot carry out: both its names are listed. */
export interface RenameConflict {
  readonly env: DesiredEnvironment;
  readonly from: string;
}

/** The declared renames whose old and new names the listing both has. */
export function renameConflicts(
  desired: readonly DesiredEnvironment[],
  observed: readonly ObservedEnvironment[],
): RenameConflict[] {
  if (!desired.some((env) => env.renamedFrom !== undefined)) return [];
  const names = new Set(observed.map((entry) => entry.name));
  const conflicts: RenameConflict[] = [];
  for (const env of desired) {
    const from = env.renamedFrom;
    if (from !== undefined && names.has(from) && names.has(env.name)) conflicts.push({ env, from });
  }
  return conflicts;
}
