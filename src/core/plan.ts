/** The planner: what the manifests want against what the service is known to hold. */
import type { ApiDialect } from './dialect.ts';
import { hash53 } from './hash.ts';
import { changeRequests } from './requests.ts';
import type {
  AppliedLookup,
  AppliedRecord,
  ArchivePlan,
  Change,
  ChangeAction,
  ChangeCause,
  Compliance,
  DesiredEnvironment,
  FieldDiff,
  FieldDiffs,
  FieldSlotValues,
  ObservedEnvironment,
  OrgPlan,
  Records,
} from './model.ts';
import { sortedByName } from './names.ts';
import {
  hasOwnerTag,
  ownedBy,
  OWNER_TAG_KEY,
  ownerTagValue,
  withoutOwnerTag,
} from './ownership.ts';
import {
  emptyMap,
  FIELD_LIST,
  FIELDS,
  type FieldName,
  type FieldSlots,
  type FieldSpec,
  type FieldValue,
  normalizeValue,
  sameValue,
  sendRoute,
} from './fields.ts';
import type { ChangeReport, OrgReport } from './report.ts';

/**
 * Plans one org: each desired environment is a change or unchanged; each listed one not declared
 * (nor renamed) is unmanaged, or archived under `prune` when envsync owns it. Inputs in any order
 * give the same plan. A field the dialect cannot send, and a rename whose both names are listed,
 * must be refused before (unsendableFields, renameConflicts).
 */
export function planOrg(
  org: string,
  desired: readonly DesiredEnvironment[],
  observed: readonly ObservedEnvironment[],
  applied: Readonly<Records> | AppliedLookup = {},
  dialect: ApiDialect = 'contract',
  options: { readonly prune?: boolean | undefined; readonly placeholders?: readonly string[] } = {},
): OrgPlan {
  const recordOf: AppliedLookup =
    typeof applied === 'function'
      ? applied
      : (name) => (Object.hasOwn(applied, name) ? applied[name] : undefined);
  const prune = options.prune === true;
  const owner = prune ? { key: OWNER_TAG_KEY, value: ownerTagValue(org) } : undefined;
  // A name listed twice: its last entry.
  const listed = new Map(observed.map((entry) => [entry.name, entry]));
  // The listed entries renamed, by their new name: only while the new name is not listed.
  const renamed = new Map<string, ObservedEnvironment>();
  for (const env of desired) {
    const old = env.renamedFrom === undefined ? undefined : listed.get(env.renamedFrom);
    if (old !== undefined && !listed.has(env.name)) renamed.set(env.name, old);
  }
  const changes: Change[] = [];
  const unchanged: string[] = [];
  const placeholders = new Set(options.placeholders);
  const unknown: string[] = [];
  const compliance = emptyMap<Compliance>();
  for (const env of sortedByName(desired)) {
    if (placeholders.has(env.name) || placeholders.has(env.renamedFrom ?? '')) {
      unknown.push(env.name);
      continue;
    }
    const renamedFrom = renamed.get(env.name);
    const remote = listed.get(env.name) ?? renamedFrom;
    if (remote?.compliance !== undefined) compliance[env.name] = remote.compliance;
    const record = remote === undefined ? undefined : recordOf(remote.name);
    const compared = remote === undefined ? remote : withoutOwnerTag(org, remote, env.tags);
    const diff = diffEnvironment(env, compared, record);
    if (compared !== undefined && diff === undefined && renamedFrom === undefined) {
      unchanged.push(env.name);
      continue;
    }
    const fields = diff?.fields ?? {};
    const action =
      compared === undefined
        ? 'create'
        : renamedFrom !== undefined
          ? 'rename'
          : Object.values(fields).some((field) => field.notShown !== true)
            ? 'update'
            : 'unverified';
    const stuck = record?.notConverged;
    changes.push({
      action,
      cause: changeCause(action, env, record),
      name: env.name,
      fields,
      unknownFields: diff?.unknownFields ?? [],
      desired: env,
      kept: remote === undefined ? {} : keptValues(env, remote),
      requests: changeRequests(action, fields, dialect, {
        renameFrom: renamedFrom?.name,
        ownerTag: remote !== undefined && hasOwnerTag(org, remote) ? undefined : owner,
      }),
      knownNotConverged:
        renamedFrom === undefined &&
        stuck !== undefined &&
        stuck.desired === fingerprint(env) &&
        stuck.observed === fingerprint(compared ?? {}),
      ...(renamedFrom === undefined ? {} : { renamedFrom: renamedFrom.name }),
      ...(remote === undefined && env.renamedFrom !== undefined
        ? { renameNotFound: env.renamedFrom }
        : {}),
    });
  }
  const declared = new Set([...desired, ...renamed.values()].map((env) => env.name));
  const unmanaged: string[] = [];
  const archives: ArchivePlan[] = [];
  for (const entry of sortedByName([...listed.values()])) {
    if (declared.has(entry.name)) continue;
    const why = prune ? ownedBy(org, entry, recordOf(entry.name)) : [];
    if (why.length > 0) archives.push({ name: entry.name, ownedBy: why });
    else unmanaged.push(entry.name);
  }
  return {
    org,
    dialect,
    changes,
    unchanged,
    unmanaged,
    ...(unknown.length > 0 ? { unknown } : {}),
    ...(Object.keys(compliance).length > 0 ? { compliance } : {}),
    ...(prune ? { archives } : {}),
  };
}

/** The declared renames whose old and new names are both listed: the service cannot do them. */
export function renameConflicts(
  desired: readonly DesiredEnvironment[],
  observed: readonly ObservedEnvironment[],
): { readonly env: DesiredEnvironment; readonly from: string }[] {
  const names = new Set(observed.map((entry) => entry.name));
  return desired.flatMap((env) => {
    const from = env.renamedFrom;
    return from !== undefined && names.has(from) && names.has(env.name) ? [{ env, from }] : [];
  });
}

/**
 * Compares a desired environment with the listing's values, else what envsync last applied:
 * undefined when every declared field is known and equal; a field neither knows is `notShown`. Not
 * listed: every declared field, from null, as a create sends them.
 */
export function diffEnvironment(
  desired: DesiredEnvironment,
  observed: ObservedEnvironment | undefined,
  applied: AppliedRecord | undefined,
): { readonly fields: FieldDiffs; readonly unknownFields: readonly FieldName[] } | undefined {
  const fields: Record<string, FieldDiff> = {};
  const unknownFields: FieldName[] = [];
  for (const spec of FIELD_LIST) {
    const wanted = desired[spec.name];
    if (wanted === undefined) continue;
    const known = observed === undefined ? null : (observed[spec.name] ?? applied?.[spec.name]);
    const to = normalizeValue(spec, wanted);
    if (known === null) fields[spec.name] = { from: null, to };
    else if (known === undefined) {
      unknownFields.push(spec.name);
      fields[spec.name] = { from: null, to, notShown: true };
    } else if (!sameValue(spec, known, wanted)) {
      fields[spec.name] = { from: normalizeValue(spec, known), to };
    }
  }
  return Object.keys(fields).length === 0 ? undefined : { fields, unknownFields };
}

/**
 * The listed values of the fields a manifest leaves out, which a PUT carries so that it changes
 * nothing undeclared; one the environment's type may not hold is left out.
 */
export function keptValues(
  desired: DesiredEnvironment,
  observed: FieldSlotValues,
): FieldSlotValues {
  const kept: Record<string, FieldValue> = {};
  for (const spec of FIELD_LIST) {
    const shown = observed[spec.name];
    if (desired[spec.name] !== undefined || shown === undefined) continue;
    if (spec.onlyForTypes?.includes(desired.type) !== false) kept[spec.name] = shown;
  }
  return kept;
}

/** The PUT's body in `dialect`: the declared values, then the kept ones. */
export function sentEnvironment(
  change: { readonly desired: DesiredEnvironment; readonly kept: FieldSlotValues },
  dialect: ApiDialect,
): DesiredEnvironment {
  const sent: Record<string, unknown> = { name: change.desired.name };
  for (const spec of FIELD_LIST) {
    const value = change.desired[spec.name] ?? change.kept[spec.name];
    const route = sendRoute(spec, dialect);
    if (value !== undefined && (route === 'put' || route === 'patch')) sent[spec.name] = value;
  }
  return sent as unknown as DesiredEnvironment;
}

/** The PATCH's body: its fields' values as the plan shows them, by wire name. */
export function patchBody(change: Pick<Change, 'fields' | 'requests'>): Record<string, unknown> {
  const fields = change.requests.patch ?? [];
  return Object.fromEntries(fields.map((name) => [FIELDS[name].wireName, change.fields[name]?.to]));
}

/** A stable text of an environment's values, to know the same change later (state files hold it). */
export function fingerprint(env: Partial<FieldSlots>): string {
  const parts: unknown[] = [];
  for (const spec of FIELD_LIST) {
    const value = env[spec.name];
    const shown = value === undefined ? null : normalizeValue(spec, value);
    if (spec.fingerprintSlot === true) parts.push(shown);
    else if (shown !== null) parts.push([spec.name, shown]);
  }
  return JSON.stringify(parts);
}

/** What the state file records of a desired environment applied. */
export function appliedFingerprint(desired: DesiredEnvironment): number {
  return hash53(fingerprint(desired));
}

/**
 * An update is drift when the manifest is as recorded at its last successful apply, so the service
 * moved alone; anything else is a change (docs/how-a-pass-works.md, "Drift or change").
 */
export function changeCause(
  action: ChangeAction,
  desired: DesiredEnvironment,
  record: AppliedRecord | undefined,
): ChangeCause {
  const recorded = record?.fingerprint;
  return action === 'update' && recorded === appliedFingerprint(desired) ? 'drift' : 'change';
}

/**
 * The records to replace so that each environment found unchanged has the manifest's fingerprint,
 * as an apply that took would have recorded, and no mark of a change that did not take; undefined
 * when none moves. An environment without a record gets a `seen` one, which `prune` does not own.
 */
export function confirmedRecords(
  desired: readonly DesiredEnvironment[],
  unchanged: readonly string[],
  lookup: AppliedLookup,
): Records | undefined {
  const same = new Set(unchanged);
  let confirmed: Records | undefined;
  for (const env of desired) {
    if (!same.has(env.name)) continue;
    const record = lookup(env.name) ?? { seen: true };
    const applied = appliedFingerprint(env);
    if (record.fingerprint === applied && record.notConverged === undefined) continue;
    const { notConverged: _, ...values } = record;
    (confirmed ??= emptyMap<AppliedRecord>())[env.name] = { ...values, fingerprint: applied };
  }
  return confirmed;
}

/** One field found drifted, as the status page shows it (`at`: the pass, ISO). */
export interface DriftSeen {
  readonly environment: string;
  readonly field: string;
  readonly found: FieldValue | null;
  readonly declared: FieldValue;
  readonly at: string;
}

export const MAX_RECENT_DRIFTS = 5;

function driftsOf(changes: readonly ChangeReport[], at: string): DriftSeen[] {
  return changes.flatMap((change) =>
    change.cause !== 'drift'
      ? []
      : Object.entries(change.fields).flatMap(([field, diff]) =>
          diff === undefined
            ? []
            : [{ environment: change.name, field, found: diff.from, declared: diff.to, at }],
        ),
  );
}

/**
 * The drifts a pass found before those remembered, at most MAX_RECENT_DRIFTS; one still pending
 * from the previous pass is the same drift, not a new one.
 */
export function recentDrifts(
  remembered: readonly DriftSeen[],
  previousPending: readonly ChangeReport[],
  report: Pick<OrgReport, 'changes'>,
  at: string,
): DriftSeen[] {
  const key = (drift: DriftSeen) => JSON.stringify([drift.environment, drift.field, drift.found]);
  const pending = new Set(driftsOf(previousPending, at).map(key));
  const found = driftsOf(report.changes, at).filter((drift) => !pending.has(key(drift)));
  return found.length === 0
    ? [...remembered]
    : [...found, ...remembered].slice(0, MAX_RECENT_DRIFTS);
}

/** A logical environment's members. */
const MEMBER_FIELDS = FIELD_LIST.filter((spec) => spec.items === 'environments');

function membersOf(env: DesiredEnvironment, spec: FieldSpec): readonly string[] {
  return (env[spec.name] as readonly string[] | undefined) ?? [];
}

/** The members that are neither declared in the manifests nor shown by the listing. */
export function unknownMembers(
  desired: readonly DesiredEnvironment[],
  observed: readonly ObservedEnvironment[],
): { readonly env: DesiredEnvironment; readonly spec: FieldSpec; readonly member: string }[] {
  const known = new Set([...desired, ...observed].map((env) => env.name));
  return desired.flatMap((env) =>
    MEMBER_FIELDS.flatMap((spec) =>
      membersOf(env, spec)
        .filter((member) => !known.has(member))
        .map((member) => ({ env, spec, member })),
    ),
  );
}

/**
 * Waves sent one after another: a change naming another change's environment as a member waits
 * for it (a service may refuse a member that does not exist yet); a cycle goes last, together.
 */
export function changeWaves<T extends Pick<Change, 'name' | 'desired'>>(
  changes: readonly T[],
): T[][] {
  let pending = [...changes];
  const waves: T[][] = [];
  while (pending.length > 0) {
    const waiting = new Set(pending.map((change) => change.name));
    const waits = (change: T) =>
      MEMBER_FIELDS.some((spec) =>
        membersOf(change.desired, spec).some((m) => m !== change.name && waiting.has(m)),
      );
    const ready = pending.filter((change) => !waits(change));
    waves.push(ready.length === 0 ? pending : ready);
    pending = ready.length === 0 ? [] : pending.filter(waits);
  }
  return waves;
}
