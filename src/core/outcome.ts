/**
 * The decisions of an apply, which engine/apply.ts carries out: what the state file records before
 * and after the requests, which applied changes did not converge, whether to try another round.
 */
import { appliedFingerprint, fingerprint } from './plan.ts';
import {
  emptyMap,
  FIELD_LIST,
  type FieldName,
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

/** What became of one change. */
export interface ChangeOutcome {
  readonly result: ChangeResult;
  readonly error?: string | undefined;
  /** For a failure: another attempt may cure it (network, timeout, 408/409/425/429, most 5xx). */
  readonly transient?: boolean | undefined;
  /** False when the change was never sent (known not to take, or the org was stopped). */
  readonly sent?: boolean | undefined;
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

function recordOf(records: Readonly<Records>, name: string): AppliedRecord | undefined {
  return Object.hasOwn(records, name) ? records[name] : undefined;
}

/**
 * What a record still says for sure while a PUT of `desired` is in doubt (sent, perhaps landed):
 * the values the PUT leaves as they are, its fingerprint only if it is `desired`'s (another
 * manifest's would call what a landed PUT left drift), no mark of a change that did not take. A
 * value dropped reads as not known, never as one that hides a difference; the record stays.
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

/** A record in one text: its values normalized, its fingerprint and its mark. */
function recordText(record: AppliedRecord): string {
  const { fingerprint: hash, notConverged } = record;
  return JSON.stringify([fingerprint(record), hash, notConverged?.desired, notConverged?.observed]);
}

/**
 * Write ahead: a crash, or a PUT that timed out but landed, must not leave a record that hides a
 * difference from the next plan. The records with those of the changes about to be sent cut down
 * to what they still say for sure (`inDoubt`), or undefined when none loses anything.
 */
export function recordsInDoubt(plan: OrgPlan, records: Readonly<Records>): Records | undefined {
  let kept: Records | undefined;
  for (const change of plan.changes) {
    if (change.knownNotConverged) continue;
    // A rename's record is under the name it is renamed from until it has landed.
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
 * The record of a change sent and landed: what was sent over the old record, and the fingerprint
 * of the last apply that took (a heal of drift that did not take is still drift).
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
 * After the requests and the listing that verifies them (`after`, undefined when it could not be
 * taken): the records to keep, and the outcomes with every applied change or archive that did not
 * take turned into `not-converged`. Unchanged environments, changes never sent and listed ones no
 * longer declared (the inventory `prune` reads) keep their record; changes sent that failed keep
 * what is sure (`inDoubt`); a rename's record moves to the new name once it has landed.
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
  const owner = plan.archives === undefined ? undefined : ownerTagValue(plan.org);
  for (const change of plan.changes) {
    const outcome = outcomes.get(change.name);
    const key = change.renamedFrom ?? change.name;
    const old = recordOf(records, key);
    if (outcome?.sent === false) keep(key);
    else if (outcome?.result !== 'applied') {
      // Sent and failed: perhaps landed. What the write ahead left in the file.
      if (old !== undefined) next[key] = inDoubt(old, change.desired);
    } else {
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
      const stuck =
        verification.converged || remote === undefined
          ? undefined
          : { desired: fingerprint(change.desired), observed: fingerprint(remote) };
      next[change.name] = appliedRecord(change.desired, old, verification.converged, stuck);
      if (!verification.converged) {
        settled.set(change.name, { result: 'not-converged', error: verification.reason });
        notConverged.push({ name: change.name, reason: verification.reason });
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

/** Whether a round failed only on errors another round may cure (changes and verify listing). */
export function isTransientRound(
  outcomes: Iterable<ChangeOutcome>,
  verify: { readonly failed: boolean; readonly transient: boolean },
): boolean {
  const failures = [...outcomes].filter((outcome) => outcome.result === 'failed');
  if (verify.failed ? !verify.transient : failures.length === 0) return false;
  return failures.every((outcome) => outcome.transient === true);
}

/**
 * Checks one applied change against the listing taken after the requests: every field sent that
 * the listing carries must equal what was sent, else the service ignored it (docs/api-behaviour.md).
 */
export function verifyChange(
  change: Change,
  after: ObservedEnvironment | undefined,
):
  | { readonly converged: true }
  | { readonly converged: false; readonly fields: readonly FieldName[]; readonly reason: string } {
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
  const fields: FieldName[] = [];
  const differences: string[] = [];
  for (const spec of FIELD_LIST) {
    const sent = change.desired[spec.name];
    const kept = after[spec.name];
    if (sent === undefined || kept === undefined || sameValue(spec, kept, sent)) continue;
    fields.push(spec.name);
    const [a, b] = [sent, kept].map((value) => showValue(normalizeValue(spec, value)));
    differences.push(`${spec.name} (sent ${a}, it keeps ${b})`);
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
