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
import { fingerprint } from './diff.ts';
import { hash53 } from './hash.ts';
import type {
  AppliedLookup,
  AppliedRecord,
  ChangeAction,
  ChangeCause,
  DesiredEnvironment,
  FieldDiff,
  FieldValue,
  Records,
} from './model.ts';
import { sortedByName } from './names.ts';
import { emptyMap } from './fields.ts';
import type { ChangeReport, OrgReport } from './report.ts';

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
