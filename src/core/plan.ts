import type { ApiDialect } from './dialect.ts';
import { hash53 } from './hash.ts';
import { changeRequests, type RequestExtras } from './requests.ts';
import type {
  AppliedLookup,
  AppliedRecord,
  ArchivePlan,
  Change,
  ChangeAction,
  ChangeCause,
  DesiredEnvironment,
  FieldDiff,
  FieldDiffs,
  FieldSlotValues,
  ObservedEnvironment,
  OrgPlan,
  Records,
} from './model.ts';
import { compareNames, sortedByName } from './names.ts';
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
  type FieldName,
  type FieldSlots,
  type FieldSpec,
  type FieldValue,
  normalizeValue,
  sameValue,
  sendRoute,
} from './fields.ts';
import type { ChangeReport, OrgReport } from './report.ts';

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

/**
 * Field by field comparison of what the manifests want with what the service is known to hold,
 * for every field of the registry (fields.ts).
 */

/** The differences of one environment, and the fields that could not be compared. */
export interface EnvironmentDiff {
  readonly fields: FieldDiffs;
  readonly unknownFields: readonly FieldName[];
}

/**
 * What is known of a field remotely: the listing's value when it carries the field, else what
 * envsync last applied (the state file's record).
 */
function remoteValue(
  spec: FieldSpec,
  observed: ObservedEnvironment,
  applied: AppliedRecord | undefined,
): FieldValue | undefined {
  return observed[spec.name] ?? applied?.[spec.name];
}

/**
 * Compares one desired environment with what is known of it remotely. Undefined when every field
 * it manages is known and equal.
 */
export function diffEnvironment(
  desired: DesiredEnvironment,
  observed: ObservedEnvironment,
  applied: AppliedRecord | undefined,
): EnvironmentDiff | undefined {
  let fields: Record<string, FieldDiff> | undefined;
  let unknownFields: FieldName[] | undefined;
  for (const spec of FIELD_LIST) {
    const wanted = desired[spec.name];
    if (wanted === undefined) continue; // managed only when declared, and not declared
    const known = remoteValue(spec, observed, applied);
    if (known === undefined) {
      // Not shown and never sent: the plan still shows the value a sync will set.
      (unknownFields ??= []).push(spec.name);
      (fields ??= {})[spec.name] = { from: null, to: normalizeValue(spec, wanted), notShown: true };
    } else if (!sameValue(spec, known, wanted)) {
      (fields ??= {})[spec.name] = {
        from: normalizeValue(spec, known),
        to: normalizeValue(spec, wanted),
      };
    }
  }
  if (fields === undefined) return undefined;
  return { fields, unknownFields: unknownFields ?? [] };
}

/**
 * The values the listing shows for the fields a manifest leaves out: a PUT made for another field
 * carries them, so that it changes nothing the manifest does not declare. A field the listing does
 * not show is left out of the body.
 */
export function keptValues(
  desired: DesiredEnvironment,
  observed: FieldSlotValues,
): FieldSlotValues {
  let kept: Record<string, FieldValue> | undefined;
  for (const spec of FIELD_LIST) {
    if (desired[spec.name] !== undefined) continue;
    // A field the environment's type may not hold is never sent (a listing may show it anyway).
    if (spec.onlyForTypes !== undefined && !spec.onlyForTypes.includes(desired.type)) continue;
    const shown = observed[spec.name];
    if (shown !== undefined) (kept ??= {})[spec.name] = shown;
  }
  return kept ?? {};
}

/**
 * What the PUT of a change sends in `dialect`: the declared values, and those the listing showed
 * for the rest; only fields the dialect sends by the PUT (a field sent by an operation of its
 * own, requests.ts, is never in the body, declared or kept).
 */
export function sentEnvironment(
  change: { readonly desired: DesiredEnvironment; readonly kept: FieldSlotValues },
  dialect: ApiDialect,
): DesiredEnvironment {
  const sent: Record<string, unknown> = { name: change.desired.name };
  for (const spec of FIELD_LIST) {
    if (sendRoute(spec, dialect) !== 'put') continue;
    const value = change.desired[spec.name] ?? change.kept[spec.name];
    if (value !== undefined) sent[spec.name] = value;
  }
  return sent as unknown as DesiredEnvironment;
}

/** The fields a create sends, each from null. */
export function createdFields(desired: DesiredEnvironment): FieldDiffs {
  const fields: Record<string, { from: null; to: FieldValue }> = {};
  for (const spec of FIELD_LIST) {
    const value = desired[spec.name];
    if (value !== undefined) fields[spec.name] = { from: null, to: normalizeValue(spec, value) };
  }
  return fields;
}

/**
 * A stable text form of an environment's values, to recognise "the same change" (what envsync
 * sent) and "the same listing" (what the service showed) later: the fields that hold a slot, in
 * order (null where there is no value: not declared, or not listed), then `[name, value]` for
 * each other field that has a value. State files hold these strings, so the form never changes.
 */
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

/**
 * Drift, told apart from change. A change is `drift` when the manifest did not change since
 * envsync last applied the environment, but the service's value did: someone set it by hand, and
 * applying the plan sets it back. Every other change is a `change`.
 *
 * The rule, per proposed change (`changeCause`):
 * - a create is never drift (nothing is there to have drifted);
 * - an unverified change is never drift (no field was seen to differ);
 * - an update is drift when the desired environment's fingerprint equals the one recorded at the
 *   environment's last successful apply (`AppliedRecord.fingerprint`). Then every field that
 *   differs was last set by envsync to exactly the declared value. An update where the manifest
 *   changed too, even in another field, is a `change`: part of it is the manifest's;
 * - no record, or a record without a fingerprint (a state file written before envsync kept
 *   them, or an apply in doubt: a crash or a failure after its PUT was sent), is unknown: a
 *   `change`.
 *
 * A fingerprint is recorded at each apply that took, and restored when a pass finds the service
 * as declared (`confirmedRecords`): an environment the plan finds unchanged, whose record has no
 * fingerprint or another manifest's, gets the fingerprint of what the manifest declares now. The
 * service holds every declared value as far as envsync can know (the listing's value, or for a
 * field the listing does not show, the record's: what envsync last sent), which is what an apply
 * that took would have recorded; so a later change on the service while the manifest stays is
 * drift. Only the fingerprint moves: nothing is sent, no value of the record changes, and an
 * environment without a record gets none (a record is also the inventory `prune` reads).
 *
 * Pure.
 */

/** What the state file records of a desired environment applied: its fingerprint, hashed. */
export function appliedFingerprint(desired: DesiredEnvironment): number {
  return hash53(fingerprint(desired));
}

/** Whether a proposed change is drift or a change (the rule above). */
export function changeCause(
  action: ChangeAction,
  desired: DesiredEnvironment,
  record: AppliedRecord | undefined,
): ChangeCause {
  const recorded = record?.fingerprint;
  if (action !== 'update' || recorded === undefined) return 'change';
  return recorded === appliedFingerprint(desired) ? 'drift' : 'change';
}

/**
 * The records to replace after a plan, so that each environment it found unchanged has the
 * fingerprint of what the manifest declares (the rule above); undefined when every one has it.
 * `unchanged` is the plan's (in name order, as planOrg walks `desired`). A record that marked a
 * change as not converged loses the mark: the service is seen holding that change.
 */
export function confirmedRecords(
  desired: readonly DesiredEnvironment[],
  unchanged: readonly string[],
  lookup: AppliedLookup,
): Records | undefined {
  if (unchanged.length === 0) return undefined;
  let confirmed: Records | undefined;
  let next = 0;
  for (const env of sortedByName(desired)) {
    if (next === unchanged.length) break;
    if (env.name !== unchanged[next]) continue;
    next++;
    const record = lookup(env.name);
    if (record === undefined) continue;
    const applied = appliedFingerprint(env);
    if (record.fingerprint === applied && record.notConverged === undefined) continue;
    const restored: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(record)) {
      if (key !== 'fingerprint' && key !== 'notConverged') restored[key] = value;
    }
    restored['fingerprint'] = applied;
    (confirmed ??= emptyMap<AppliedRecord>())[env.name] = restored;
  }
  return confirmed;
}

/** One field found drifted, as the daemon remembers it for the status page. */
export interface DriftSeen {
  readonly environment: string;
  readonly field: string;
  /** The value the service held (null: none). */
  readonly found: FieldValue | null;
  /** What the manifest declares, which envsync set it back to (or tried to). */
  readonly declared: FieldValue;
  /** ISO time of the pass that found it. */
  readonly at: string;
}

/** At most this many drifts are remembered per org, the newest first. */
export const MAX_RECENT_DRIFTS = 5;

function fieldEntries(change: ChangeReport): [string, FieldDiff][] {
  return Object.entries(change.fields).filter(
    (entry): entry is [string, FieldDiff] => entry[1] !== undefined,
  );
}

/**
 * The drifts an org's pass found, before those remembered (newest first, at most
 * MAX_RECENT_DRIFTS). A drift still pending from the previous pass (the same environment, field
 * and value found, not set back then) is the same drift, not a new one.
 */
export function recentDrifts(
  remembered: readonly DriftSeen[],
  previousPending: readonly ChangeReport[],
  report: Pick<OrgReport, 'changes'>,
  at: string,
): DriftSeen[] {
  const stillPending = new Set<string>();
  for (const change of previousPending) {
    if (change.cause !== 'drift') continue;
    for (const [field, diff] of fieldEntries(change)) {
      stillPending.add(JSON.stringify([change.name, field, diff.from]));
    }
  }
  const found: DriftSeen[] = [];
  for (const change of report.changes) {
    if (change.cause !== 'drift') continue;
    for (const [field, diff] of fieldEntries(change)) {
      if (stillPending.has(JSON.stringify([change.name, field, diff.from]))) continue;
      found.push({ environment: change.name, field, found: diff.from, declared: diff.to, at });
    }
  }
  if (found.length === 0) return [...remembered];
  return [...found, ...remembered].slice(0, MAX_RECENT_DRIFTS);
}

/**
 * Fields whose items are other environments of the same org (a logical environment's members):
 * each must be one the manifests declare or the listing shows, and members are sent before the
 * environments that name them.
 */

/** The fields whose items name environments of the same org. */
export const MEMBER_FIELDS: readonly FieldSpec[] = FIELD_LIST.filter(
  (spec) => spec.items === 'environments',
);

/** A member that names no environment of the org. */
export interface UnknownMember {
  readonly env: DesiredEnvironment;
  readonly spec: FieldSpec;
  readonly member: string;
}

function membersOf(env: DesiredEnvironment, spec: FieldSpec): readonly string[] {
  return (env[spec.name] as readonly string[] | undefined) ?? [];
}

/** The members that are neither declared in the manifests nor shown by the listing. */
export function unknownMembers(
  desired: readonly DesiredEnvironment[],
  observed: readonly ObservedEnvironment[],
): UnknownMember[] {
  const naming = desired.filter((env) =>
    MEMBER_FIELDS.some((spec) => env[spec.name] !== undefined),
  );
  if (naming.length === 0) return [];
  const known = new Set([...desired.map((env) => env.name), ...observed.map((env) => env.name)]);
  const unknown: UnknownMember[] = [];
  for (const env of naming) {
    for (const spec of MEMBER_FIELDS) {
      for (const member of membersOf(env, spec)) {
        if (!known.has(member)) unknown.push({ env, spec, member });
      }
    }
  }
  return unknown;
}

/**
 * The changes in waves to send one after another: a change that names another change's
 * environment as a member waits for it (a service may refuse a member that does not exist yet).
 * Within a wave, order does not matter. A cycle of members cannot be ordered: its changes go
 * in the last wave, together.
 */
export function changeWaves<T extends Pick<Change, 'name' | 'desired'>>(
  changes: readonly T[],
): T[][] {
  let pending = [...changes];
  const waves: T[][] = [];
  while (pending.length > 0) {
    const waiting = new Set(pending.map((change) => change.name));
    const ready = pending.filter((change) =>
      MEMBER_FIELDS.every((spec) =>
        membersOf(change.desired, spec).every(
          (member) => member === change.name || !waiting.has(member),
        ),
      ),
    );
    if (ready.length === 0) {
      waves.push(pending);
      break;
    }
    waves.push(ready);
    const sent = new Set(ready);
    pending = pending.filter((change) => !sent.has(change));
  }
  return waves;
}
