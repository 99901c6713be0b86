import { appliedFingerprint, fingerprint } from './plan.ts';
import {
  emptyMap,
  FIELD_LIST,
  type FieldName,
  type FieldValue,
  normalizeValue,
  RECORDED_FIELDS,
  sameValue,
  showValue,
} from './fields.ts';
import type {
  AppliedRecord,
  Change,
  DesiredEnvironment,
  ObservedEnvironment,
  OrgPlan,
  OwnedBy,
  Records,
} from './model.ts';
import { ownerTagValue, withoutOwnerTag } from './ownership.ts';
import type { ChangeResult } from './report.ts';

/**
 * The decisions of an apply, as pure functions: which changes are not sent again, what the state
 * file records before and after the PUTs, which applied changes did not converge, and whether a
 * failed round is worth another. The engine (engine/apply.ts) carries them out.
 */

/** What became of one change. */
export interface ChangeOutcome {
  readonly result: ChangeResult;
  readonly error?: string | undefined;
  /** For a failure: another attempt may cure it (network, timeout, 408/409/425/429, most 5xx). */
  readonly transient?: boolean | undefined;
  /** False when the change was never sent (known not to take, or the org was stopped). */
  readonly sent?: boolean | undefined;
}

function recordOf(records: Readonly<Records>, name: string): AppliedRecord | undefined {
  return Object.hasOwn(records, name) ? records[name] : undefined;
}

/** What became of one archive, and why envsync owned it when it was sent (checked then). */
export type ArchiveOutcome = ChangeOutcome & { readonly ownedBy: readonly OwnedBy[] };

/** The outcome of a change that was sent before and did not take: it is not sent again. */
export const KNOWN_NOT_CONVERGED: ChangeOutcome = {
  result: 'not-converged',
  sent: false,
  error:
    'the same change was sent before and did not take; not sent again until the manifest or the service changes',
};

/** True when the record already says what `desired` sends, and nothing is marked not converged. */
function recordMatches(record: AppliedRecord, desired: DesiredEnvironment): boolean {
  if (record.notConverged !== undefined) return false;
  for (const spec of RECORDED_FIELDS) {
    const sent = desired[spec.name];
    if (sent === undefined) continue; // not sent: the record still says the truth
    const recorded: FieldValue | undefined = record[spec.name];
    if (recorded === undefined || !sameValue(spec, recorded, sent)) return false;
  }
  return true;
}

/**
 * Whether a record says the truth whatever becomes of a PUT of `desired`: its values are those
 * sent, and its fingerprint (drift.ts) is unknown or that of `desired`.
 */
function holdsAcrossPut(record: AppliedRecord, desired: DesiredEnvironment): boolean {
  return (
    recordMatches(record, desired) &&
    (record.fingerprint === undefined || record.fingerprint === appliedFingerprint(desired))
  );
}

/**
 * What a record still says for sure while a PUT of `desired` is in doubt (sent, and perhaps
 * landed): the values the PUT leaves as they are (not sent, or sent as they are), its fingerprint
 * only if it is `desired`'s, and no mark of a change that did not take. A value it drops reads as
 * not known (the listing's, or `unverified` where the listing does not show it), never as one
 * that hides a difference; the record itself stays, as the inventory `prune` reads, and a later
 * pass that finds the service as declared gives it its fingerprint back (drift.ts).
 */
function inDoubt(record: AppliedRecord, desired: DesiredEnvironment): AppliedRecord {
  const kept: Record<string, unknown> = {};
  for (const spec of RECORDED_FIELDS) {
    const value: FieldValue | undefined = record[spec.name];
    if (value === undefined) continue;
    const sent = desired[spec.name];
    if (sent === undefined || sameValue(spec, value, sent)) kept[spec.name] = value;
  }
  if (record.fingerprint !== undefined && record.fingerprint === appliedFingerprint(desired)) {
    kept['fingerprint'] = record.fingerprint;
  }
  return kept;
}

/**
 * Write ahead: the records of the changes about to be sent are in doubt until their PUTs are
 * known to have landed, and a crash (or a PUT that timed out but landed) must not leave a record
 * that hides a difference from the next plan. Returns the records with each of those cut down to
 * what it still says for sure (`inDoubt`), or undefined when none is in doubt: only a record that
 * differs from what is about to be sent can hide anything (a change of type or description alone
 * leaves the recorded fields as they were). A fingerprint that is another manifest's goes: kept,
 * it would call what a landed PUT left drift from a manifest it never matched.
 */
export function recordsInDoubt(plan: OrgPlan, records: Readonly<Records>): Records | undefined {
  let kept: Records | undefined;
  for (const change of plan.changes) {
    if (change.knownNotConverged) continue;
    // A rename's record is under the name it is renamed from until it has landed.
    const key = change.renamedFrom ?? change.name;
    const old = recordOf(kept ?? records, key);
    if (old === undefined || holdsAcrossPut(old, change.desired)) continue;
    kept ??= Object.assign(emptyMap<AppliedRecord>(), records);
    kept[key] = inDoubt(old, change.desired);
  }
  return kept;
}

/**
 * The record of a change that was sent and landed: what was sent, merged over the old record, and
 * the fingerprint of the last apply that took (drift.ts): this one when it took; when it did not,
 * the old one only if it is this one's (a heal of drift that did not take is still drift).
 */
function appliedRecord(
  desired: DesiredEnvironment,
  old: AppliedRecord | undefined,
  took: boolean,
  notConverged: AppliedRecord['notConverged'],
): AppliedRecord {
  const record: Record<string, unknown> = {};
  for (const spec of RECORDED_FIELDS) {
    const value = desired[spec.name] ?? old?.[spec.name];
    if (value !== undefined) record[spec.name] = value;
  }
  const sent = appliedFingerprint(desired);
  if (took || old?.fingerprint === sent) record['fingerprint'] = sent;
  if (notConverged !== undefined) record['notConverged'] = notConverged;
  return record;
}

/** A change that was applied but that the listing after the PUTs shows did not take. */
export interface NotConverged {
  readonly name: string;
  readonly reason: string;
}

/**
 * After the requests and the listing that verifies them (`after`, undefined when it could not be
 * taken): the records to keep, and the outcomes with every applied change or archive that did
 * not take turned into `not-converged` (an archived environment still listed, a renamed one
 * still listed under its old name, a field that does not show what was sent). Unchanged
 * environments and changes never sent keep their old record; changes sent that failed are in
 * doubt and keep only what their record still says for sure (`inDoubt`: what the write ahead
 * left in the file). A rename's record moves to the new name once it has landed. The records of
 * listed environments the manifests no longer declare stay (the inventory `prune` reads:
 * ownership.ts) until they are archived.
 */
export function settleApply(
  plan: OrgPlan,
  records: Readonly<Records>,
  outcomes: ReadonlyMap<string, ChangeOutcome>,
  after: ReadonlyMap<string, ObservedEnvironment> | undefined,
  archived: ReadonlyMap<string, ArchiveOutcome> = new Map(),
): {
  records: Records;
  outcomes: Map<string, ChangeOutcome>;
  archives: Map<string, ArchiveOutcome>;
  notConverged: NotConverged[];
} {
  const next = emptyMap<AppliedRecord>();
  const settled = new Map(outcomes);
  const archives = new Map(archived);
  const notConverged: NotConverged[] = [];
  const stuck = (name: string, reason: string) => notConverged.push({ name, reason });
  const keep = (name: string) => {
    const old = recordOf(records, name);
    if (old !== undefined) next[name] = old;
  };
  for (const name of plan.unchanged) keep(name);
  for (const name of plan.unmanaged) keep(name);
  for (const { name } of plan.archives ?? []) {
    const outcome = archived.get(name);
    if (outcome?.result === 'applied' && after?.has(name) === true) {
      const reason = 'the service answered the archive, but its listing still has the environment';
      archives.set(name, { ...outcome, result: 'not-converged', error: reason });
      stuck(name, reason);
    }
    if (archives.get(name)?.result !== 'applied') keep(name);
  }
  const owner = plan.archives === undefined ? undefined : ownerTagValue(plan.org);
  for (const change of plan.changes) {
    const outcome = outcomes.get(change.name);
    const key = change.renamedFrom ?? change.name;
    const old = recordOf(records, key);
    if (outcome?.sent === false) {
      if (old !== undefined) next[key] = old;
      continue;
    }
    if (outcome?.result !== 'applied') {
      // Sent and failed: perhaps landed. What the write ahead left in the file.
      if (old !== undefined) {
        next[key] = holdsAcrossPut(old, change.desired) ? old : inDoubt(old, change.desired);
      }
      continue;
    }
    const listed = after?.get(change.name);
    // Under prune, the ownership tag envsync set is not a value the manifests declared.
    const remote =
      listed === undefined || owner === undefined ? listed : withoutOwnerTag(listed, owner);
    const verification =
      after === undefined
        ? { converged: true as const }
        : change.renamedFrom !== undefined && after.has(change.renamedFrom)
          ? {
              converged: false as const,
              reason: `the service answered the rename, but its listing still has it under its old name ${change.renamedFrom}`,
            }
          : verifyChange(change, remote);
    next[change.name] = appliedRecord(
      change.desired,
      old,
      verification.converged,
      verification.converged || remote === undefined
        ? undefined
        : { desired: fingerprint(change.desired), observed: fingerprint(remote) },
    );
    if (!verification.converged) {
      settled.set(change.name, { result: 'not-converged', error: verification.reason });
      stuck(change.name, verification.reason);
    }
  }
  return { records: next, outcomes: settled, archives, notConverged };
}

function sameRecord(a: AppliedRecord, b: AppliedRecord): boolean {
  for (const spec of RECORDED_FIELDS) {
    const x = a[spec.name];
    const y = b[spec.name];
    if (x === undefined || y === undefined ? x !== y : !sameValue(spec, x, y)) return false;
  }
  return (
    a.fingerprint === b.fingerprint &&
    a.notConverged?.desired === b.notConverged?.desired &&
    a.notConverged?.observed === b.notConverged?.observed
  );
}

/** Whether two sets of records say the same (then the state file need not be written). */
export function sameRecords(a: Readonly<Records>, b: Readonly<Records>): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((name) => {
    const x = recordOf(a, name);
    const y = recordOf(b, name);
    return x !== undefined && y !== undefined && sameRecord(x, y);
  });
}

/**
 * Whether a round that did not succeed failed only on errors another round may cure: every failed
 * change, and the verify listing if it failed, failed on something transient.
 */
export function isTransientRound(
  outcomes: Iterable<ChangeOutcome>,
  verify: { readonly failed: boolean; readonly transient: boolean },
): boolean {
  const failures = [...outcomes].filter((outcome) => outcome.result === 'failed');
  if (verify.failed && !verify.transient) return false;
  if (!verify.failed && failures.length === 0) return false;
  return failures.every((outcome) => outcome.transient === true);
}

export type Verification =
  | { readonly converged: true }
  | { readonly converged: false; readonly fields: readonly FieldName[]; readonly reason: string };

/**
 * Checks one applied change against the listing taken after the PUTs: every field that was sent
 * and that the listing carries must now equal what was sent. A field that did not take means the
 * service ignored it (docs/api-behaviour.md: it keeps the old value of some fields on update).
 */
export function verifyChange(change: Change, after: ObservedEnvironment | undefined): Verification {
  if (after === undefined) {
    return {
      converged: false,
      fields: [],
      reason:
        change.renamedFrom === undefined
          ? 'the environment is not in the listing after a successful PUT'
          : 'the environment is not listed under its new name after a successful rename',
    };
  }
  const differences: string[] = [];
  const fields: FieldName[] = [];
  for (const spec of FIELD_LIST) {
    const sent = change.desired[spec.name];
    const kept = after[spec.name];
    if (sent === undefined || kept === undefined || sameValue(spec, kept, sent)) continue;
    fields.push(spec.name);
    differences.push(
      `${spec.name} (sent ${showValue(normalizeValue(spec, sent))}, it keeps ${showValue(normalizeValue(spec, kept))})`,
    );
  }
  if (fields.length === 0) return { converged: true };
  return {
    converged: false,
    fields,
    reason:
      `the service did not take ${differences.join(', ')}; ` +
      'it ignores some values on existing environments: make the manifest say what the service keeps',
  };
}
