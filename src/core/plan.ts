import { createdFields, diffEnvironment, fingerprint, keptValues } from './diff.ts';
import type { ApiDialect } from './dialect.ts';
import { changeCause } from './drift.ts';
import { changeRequests } from './requests.ts';
import type {
  AppliedLookup,
  AppliedRecord,
  Change,
  DesiredEnvironment,
  ObservedEnvironment,
  OrgPlan,
} from './model.ts';
import { compareNames } from './names.ts';

/**
 * Plans one organization: for every desired environment exactly one of create, update,
 * unverified or unchanged; every listed environment the manifests do not name is unmanaged.
 * `dialect` decides how each change is sent (requests.ts); a declared field the dialect cannot
 * send must be refused before (unsendableFields). Pure: the same inputs in any order give the
 * same plan.
 */
export function planOrg(
  org: string,
  desired: readonly DesiredEnvironment[],
  observed: readonly ObservedEnvironment[],
  applied: Readonly<Record<string, AppliedRecord>> | AppliedLookup = {},
  dialect: ApiDialect = 'contract',
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
        requests: changeRequests('create', fields, dialect),
        knownNotConverged: false,
      });
      continue;
    }
    const record = recordOf(env.name);
    const diff = diffEnvironment(env, remote, record);
    if (diff === undefined) {
      unchanged.push(env.name);
      continue;
    }
    const stuck = record?.notConverged;
    // Unverified: nothing is known to differ, but some declared value was never seen.
    const action = Object.values(diff.fields).some((field) => field.notShown !== true)
      ? 'update'
      : 'unverified';
    changes.push({
      action,
      cause: changeCause(action, env, record),
      name: env.name,
      fields: diff.fields,
      unknownFields: diff.unknownFields,
      desired: env,
      kept: keptValues(env, remote),
      requests: changeRequests(action, diff.fields, dialect),
      knownNotConverged:
        stuck !== undefined &&
        stuck.desired === fingerprint(env) &&
        stuck.observed === fingerprint(remote),
    });
  }
  for (; next < listed.length; next++) {
    const name = (listed[next] as ObservedEnvironment).name;
    if (name !== previous) notDeclared(name);
  }
  return { org, dialect, changes, unchanged, unmanaged };
}

/** `list` in name order: itself when already sorted (the usual case), else a sorted copy. */
function sortedByName<T extends { readonly name: string }>(list: readonly T[]): readonly T[] {
  for (let i = 1; i < list.length; i++) {
    if (compareNames((list[i - 1] as T).name, (list[i] as T).name) > 0) {
      return [...list].sort((a, b) => compareNames(a.name, b.name));
    }
  }
  return list;
}
