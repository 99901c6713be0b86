/**
 * The decisions of an apply (engine/apply.ts carries them out): what the state file records before
 * and after the requests, which changes did not converge, whether to try another round.
 */
import { appliedFingerprint, fingerprint } from './plan.ts';
import {
  emptyMap,
  FIELD_LIST,
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
import { withoutOwnerTag } from './ownership.ts';
import type { ChangeResult } from './report.ts';

export interface ChangeOutcome {
  readonly result: ChangeResult;
  readonly error?: string | undefined;
  /** For a failure: another attempt may cure it. */
  readonly transient?: boolean | undefined;
  /** False when the change was never sent. */
  readonly sent?: boolean | undefined;
}

/** With why envsync owned it when it was sent. */
export type ArchiveOutcome = ChangeOutcome & { readonly ownedBy: readonly OwnedBy[] };

export const KNOWN_NOT_CONVERGED: ChangeOutcome = {
  result: 'not-converged',
  sent: false,
  error:
    'the same change was sent before and did not take; not sent again until the manifest or the service changes',
};

function recordOf(records: Readonly<Records>, name: string): AppliedRecord | undefined {
  return Object.hasOwn(records, name) ? records[name] : undefined;
}

/**
 * What a record still says for sure while a PUT of `desired` is in doubt: the values it leaves as
 * they are, and its fingerprint only if it is `desired`'s (another manifest's would call what a
 * landed PUT left drift). A value dropped reads as not known, never hides a difference.
 */
function inDoubt(record: AppliedRecord, desired: DesiredEnvironment): AppliedRecord {
  const kept: Record<string, unknown> = {};
  for (const spec of RECORDED_FIELDS) {
    const value = record[spec.name];
    const sent = desired[spec.name];
    if (value !== undefined && (sent === undefined || sameValue(spec, value, sent))) {
      kept[spec.name] = value;
    }
  }
  if (record.fingerprint === appliedFingerprint(desired)) kept['fingerprint'] = record.fingerprint;
  return kept;
}

function recordText(record: AppliedRecord): string {
  const { fingerprint: hash, notConverged } = record;
  return JSON.stringify([fingerprint(record), hash, notConverged?.desired, notConverged?.observed]);
}

/**
 * Write ahead: a crash, or a PUT that timed out but landed, must not leave a record that hides a
 * difference. The records cut down to what they still say for sure, or undefined when none moves.
 */
export function recordsInDoubt(plan: OrgPlan, records: Readonly<Records>): Records | undefined {
  let kept: Records | undefined;
  for (const change of plan.changes) {
    if (change.knownNotConverged) continue;
    // A rename's record is under its old name until it has landed.
    const key = change.renamedFrom ?? change.name;
    const old = recordOf(kept ?? records, key);
    if (old === undefined) continue;
    const cut = inDoubt(old, change.desired);
    if (recordText(cut) === recordText(old)) continue;
    kept ??= Object.assign(emptyMap<AppliedRecord>(), records);
    kept[key] = cut;
  }
  return kept;
}

/**
 * What was sent over the old record, and the fingerprint of the last apply that took (a heal of
 * drift that did not take is still drift).
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

/**
 * After the requests and the listing that verifies them (`after`, undefined when it failed): the
 * records to keep, and the outcomes with every change or archive that did not take turned into
 * `not-converged`. Records not sent for stay (`prune` reads them); a failed change keeps what is
 * sure; a rename's record moves to the new name once it has landed.
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
  notConverged: { readonly name: string; readonly reason: string }[];
} {
  const next = emptyMap<AppliedRecord>();
  const settled = new Map(outcomes);
  const archives = new Map(archived);
  const notConverged: { name: string; reason: string }[] = [];
  const keep = (name: string) => {
    const record = recordOf(records, name);
    if (record !== undefined) next[name] = record;
  };
  for (const name of [...plan.unchanged, ...plan.unmanaged]) keep(name);
  for (const { name } of plan.archives ?? []) {
    const outcome = archived.get(name);
    if (outcome?.result === 'applied' && after?.has(name) === true) {
      const reason = 'the service answered the archive, but its listing still has the environment';
      archives.set(name, { ...outcome, result: 'not-converged', error: reason });
      notConverged.push({ name, reason });
    }
    if (archives.get(name)?.result !== 'applied') keep(name);
  }
  for (const change of plan.changes) {
    const outcome = outcomes.get(change.name);
    const key = change.renamedFrom ?? change.name;
    const old = recordOf(records, key);
    if (outcome?.sent === false) keep(key);
    else if (outcome?.result !== 'applied') {
      // Perhaps landed: what the write ahead left in the file.
      if (old !== undefined) next[key] = inDoubt(old, change.desired);
    } else {
      const listed = after?.get(change.name);
      const remote =
        listed === undefined ? listed : withoutOwnerTag(plan.org, listed, change.desired.tags);
      const reason =
        after === undefined
          ? undefined
          : change.renamedFrom !== undefined && after.has(change.renamedFrom)
            ? `the service answered the rename, but its listing still has it under its old name ${change.renamedFrom}`
            : verifyChange(change, remote);
      const stuck =
        reason === undefined || remote === undefined
          ? undefined
          : { desired: fingerprint(change.desired), observed: fingerprint(remote) };
      next[change.name] = appliedRecord(change.desired, old, reason === undefined, stuck);
      if (reason !== undefined) {
        settled.set(change.name, { result: 'not-converged', error: reason });
        notConverged.push({ name: change.name, reason });
      }
    }
  }
  return { records: next, outcomes: settled, archives, notConverged };
}

/** Whether two sets of records say the same (then the state file need not be written). */
export function sameRecords(a: Readonly<Records>, b: Readonly<Records>): boolean {
  const names = Object.keys(a);
  return (
    names.length === Object.keys(b).length &&
    names.every((name) => {
      const other = recordOf(b, name);
      return other !== undefined && recordText(other) === recordText(a[name] as AppliedRecord);
    })
  );
}

/** Whether a round failed only on errors another round may cure. */
export function isTransientRound(
  outcomes: Iterable<ChangeOutcome>,
  verify: { readonly failed: boolean; readonly transient: boolean },
): boolean {
  const failures = [...outcomes].filter((outcome) => outcome.result === 'failed');
  if (verify.failed ? !verify.transient : failures.length === 0) return false;
  return failures.every((outcome) => outcome.transient === true);
}

/**
 * Why an applied change did not take, or undefined: every field sent that the listing carries
 * must be what was sent, else the service ignored it (docs/api-behaviour.md).
 */
export function verifyChange(
  change: Change,
  after: ObservedEnvironment | undefined,
): string | undefined {
  if (after === undefined) {
    return change.renamedFrom === undefined
      ? 'the environment is not in the listing after a successful PUT'
      : 'the environment is not listed under its new name after a successful rename';
  }
  const differences = FIELD_LIST.flatMap((spec) => {
    const sent = change.desired[spec.name];
    const kept = after[spec.name];
    if (sent === undefined || kept === undefined || sameValue(spec, kept, sent)) return [];
    const [a, b] = [sent, kept].map((value) => showValue(normalizeValue(spec, value)));
    return [`${spec.name} (sent ${a}, it keeps ${b})`];
  });
  if (differences.length === 0) return undefined;
  return (
    `the service did not take ${differences.join(', ')}; ` +
    'it ignores some values on existing environments: make the manifest say what the service keeps'
  );
}
