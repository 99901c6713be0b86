/**
 * The daemon's memory and its pure steps (docs/architecture.md, "The daemon"): (memory, what
 * happened, now) in; the new memory, log lines, metric updates and notifications out.
 */
import type { ResolvedDialect } from '../core/dialect.ts';
import type { ChangeAction } from '../core/model.ts';
import { compareNames } from '../core/names.ts';
import { failuresSaidOnce, neverAboutTheOrg } from '../core/report.ts';
import type { ChangeResult, OrgReport, ProblemReport, RunReport } from '../core/report.ts';
import { shardOf } from '../core/shard.ts';
import { formatProblem } from '../core/validation.ts';
import * as notify from '../notify/events.ts';
import { healthLevel, orgHealthAndSync, orgState, orgStatusAfter, SYNC_STATES } from './status.ts';
import type { DaemonStatus, LastPass, OrgStatus, PassVerdict } from './status.ts';

/** An org backing off after failures, and what it failed with (its manifests and token). */
interface Backoff {
  readonly failures: number;
  readonly nextAttemptAt: number;
  readonly fingerprint: string;
}

export interface DaemonMemory {
  /** Each org owned and reconciled: its status and, while failing, its backoff. */
  readonly orgs: ReadonlyMap<string, { readonly status: OrgStatus; readonly backoff?: Backoff }>;
  readonly files: ReadonlyMap<string, ReadonlySet<string>>;
  readonly notify: notify.NotifyMemory;
  readonly passes: number;
  /** Whether a pass has ended without failing as a whole. */
  readonly firstPassDone: boolean;
  readonly lastPass: LastPass | null;
  readonly revision: string | undefined;
  /** Manifest problems of the last pass that belong to no org. */
  readonly unattributed: readonly ProblemReport[];
  readonly dialect?: ResolvedDialect | undefined;
}

export const EMPTY_DAEMON_MEMORY: DaemonMemory = {
  orgs: new Map(),
  files: new Map(),
  notify: notify.EMPTY_NOTIFY_MEMORY,
  passes: 0,
  firstPassDone: false,
  lastPass: null,
  revision: undefined,
  unattributed: [],
};

export interface LogEntry {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly fields: Readonly<Record<string, unknown>>;
  readonly message: string;
}

/** What the metrics learn of one org (the optional ones are unknown while it is invalid). */
export interface OrgCounters {
  readonly org: string;
  readonly manifestErrors: number;
  readonly changes: readonly { readonly action: ChangeAction; readonly result: ChangeResult }[];
  readonly driftHealed: number;
  readonly unmanaged?: number;
  readonly pending?: number;
  readonly suspended?: boolean;
  readonly driftPending?: number;
  readonly lastSuccessSeconds?: number;
}

/** What to change in the metrics: the orgs no longer owned, the revision when it changed, ... */
export interface MetricUpdates {
  readonly forget?: readonly string[];
  readonly revision?: { readonly value: string | undefined };
  readonly org?: OrgCounters;
  readonly pass?: { readonly result: PassVerdict; readonly durationSeconds: number };
}

/** What a step decides: the memory to keep, and what to carry out. */
export interface Step {
  readonly memory: DaemonMemory;
  readonly logs: readonly LogEntry[];
  readonly metrics: MetricUpdates;
}

export interface Surroundings {
  readonly now: number;
  readonly intervalMs: number;
  readonly stateWriteError: string | undefined;
}

/** An org this daemon owns, as a pass begins. */
export interface PassOrg {
  readonly org: string;
  readonly files: readonly string[];
  /** The org's manifests as text: the same manifests give the same text. */
  readonly manifestsKey: string;
  readonly types?: readonly (readonly [string, string])[];
}

/** Whether this replica reconciles `org`: its shard's, and among `--org` when given. */
export function ownsOrg(
  org: string,
  shard: { readonly index: number; readonly count: number } | undefined,
  only: readonly string[] | undefined,
): boolean {
  const ours = shard === undefined || shardOf(org, shard.count) === shard.index;
  return ours && (only === undefined || only.includes(org));
}

/**
 * The orgs a pass looks at: after file events or a new revision, those a changed file serves or
 * served, and those never seen; after any other trigger, every org (which heals drift).
 */
export function orgsToLook<T extends Pick<PassOrg, 'org' | 'files'>>(
  orgs: readonly T[],
  reasons: readonly string[],
  changed: ReadonlySet<string> | undefined,
  seenBefore: ReadonlyMap<string, ReadonlySet<string>>,
): T[] {
  const targeted = reasons.every((r) => r.startsWith('file ') || r.startsWith('revision '));
  if (!targeted || changed === undefined) return [...orgs];
  return orgs.filter((org) => {
    const before = seenBefore.get(org.org);
    return before === undefined || [...org.files, ...before].some((file) => changed.has(file));
  });
}

/** Ready after the first pass, while passes end, the state is written and an org reconciled. */
export function readiness(memory: DaemonMemory, around: Surroundings) {
  const { lastPass } = memory;
  const since = lastPass === null ? 0 : around.now - Date.parse(lastPass.finishedAt);
  const { total, failed, invalid } = outcomes(memory);
  const reason = !memory.firstPassDone
    ? 'the first pass has not finished yet'
    : around.intervalMs > 0 && since > 3 * around.intervalMs * 1.1 + 60_000
      ? `no pass has finished for ${Math.round(since / 1000)} s`
      : lastPass?.result === 'error'
        ? `the last pass failed: ${lastPass.error}`
        : around.stateWriteError !== undefined
          ? `the state file cannot be written: ${around.stateWriteError}`
          : total === 0 || failed + invalid < total
            ? undefined
            : invalid === 0
              ? `every org (${total}) failed its last attempt; see /status`
              : `no org is reconciled: ${failed} failed, ${invalid} with invalid manifests; see /status`;
  return reason === undefined ? { ready: true } : { ready: false, reason };
}

/** Live unless a pass has been running for far too long (the loop is wedged). */
export function liveness(passStartedAt: number | undefined, intervalMs: number, now: number) {
  const running = now - (passStartedAt ?? now);
  return running <= Math.max(15 * 60_000, 3 * intervalMs)
    ? { live: true }
    : { live: false, reason: `a pass has been running for ${Math.round(running / 1000)} s` };
}

function outcomes(memory: DaemonMemory): { total: number; failed: number; invalid: number } {
  const statuses = [...memory.orgs.values()].map((org) => org.status.status);
  const count = (status: string) => statuses.filter((s) => s === status).length;
  return { total: statuses.length, failed: count('failed'), invalid: count('invalid') };
}

/** When the first org backing off is due (ms since the epoch), if any is. */
export function nextAttemptAt(memory: DaemonMemory): number | undefined {
  const times = [...memory.orgs.values()].flatMap((org) => org.backoff?.nextAttemptAt ?? []);
  return times.length === 0 ? undefined : Math.min(...times);
}

/** Each org of `/status`, in name order, with its state, health, sync and token source. */
export function orgsStatus(
  memory: DaemonMemory,
  around: { readonly observe: boolean; readonly windowOpen: boolean },
  tokenSource: (org: string) => string | null,
): Pick<DaemonStatus, 'health' | 'sync' | 'orgs'> {
  const orgs = [...memory.orgs].sort(([a], [b]) => compareNames(a, b));
  const statuses = orgs.map(([name, org]) => [name, org.status] as const);
  const shown = statuses.map(([name, status]) => {
    const state = orgState(status, around);
    const both = orgHealthAndSync(status, state);
    return [name, { ...status, state, ...both, tokenSource: tokenSource(name) }] as const;
  });
  return {
    health: healthLevel(memory.lastPass, memory.unattributed.length, statuses),
    sync: SYNC_STATES.find((sync) => shown.some(([, org]) => org.sync === sync)) ?? 'unknown',
    orgs: Object.fromEntries(shown),
  };
}

function withOrg(memory: DaemonMemory, org: string, status: OrgStatus, backoff?: Backoff) {
  const entry = backoff === undefined ? { status } : { status, backoff };
  return { ...memory, orgs: new Map(memory.orgs).set(org, entry) };
}

/** What a backing-off org failed with: a change to its manifests or its token retries it. */
const fingerprintOf = (org: PassOrg, tokenKey: string) => `${tokenKey}:${org.manifestsKey}`;

/**
 * The start of a pass: forgets the orgs no longer owned, and picks the orgs due: those the trigger
 * looks at, less those backing off whose time has not come and whose manifests and token are the same.
 */
export function beginPass(
  memory: DaemonMemory,
  start: {
    readonly owned: readonly PassOrg[];
    readonly reasons: readonly string[];
    readonly changedFiles: ReadonlySet<string> | undefined;
    /** Each org's token, hashed (or, for an org with none, why). */
    readonly tokenKey: (org: string) => string;
    readonly revision: string | undefined;
    readonly unattributed: readonly ProblemReport[];
  },
  now: number,
): Step & { readonly due: readonly PassOrg[]; readonly skipped: number } {
  const names = new Set(start.owned.map((org) => org.org));
  const forget = [...memory.orgs.keys()].filter((org) => !names.has(org));
  const orgs = new Map([...memory.orgs].filter(([org]) => names.has(org)));
  const candidates = orgsToLook(start.owned, start.reasons, start.changedFiles, memory.files);
  const due = candidates.filter((org) => {
    const backoff = orgs.get(org.org)?.backoff;
    const failedWith = fingerprintOf(org, start.tokenKey(org.org));
    return !backoff || backoff.nextAttemptAt <= now || backoff.fingerprint !== failedWith;
  });
  const files = new Map(start.owned.map((org) => [org.org, new Set(org.files)]));
  const { revision, unattributed } = start;
  const newRevision = revision !== memory.revision || memory.passes === 0;
  return {
    memory: { ...memory, orgs, files, revision, unattributed },
    due,
    skipped: candidates.length - due.length,
    logs: unattributed.map((problem) => {
      const { file, line, column, path } = problem;
      const message = `${formatProblem(problem)} (belongs to no org)`;
      return { level: 'warn', fields: { file, line, column, path }, message };
    }),
    metrics: {
      ...(forget.length > 0 ? { forget } : {}),
      ...(newRevision ? { revision: { value: revision } } : {}),
    },
  };
}

/** An org's round failed and another follows: it shows failed at once (its backoff comes later). */
export function afterFailedRound(memory: DaemonMemory, report: OrgReport, now: number): Step {
  const previous = memory.orgs.get(report.org);
  const status = orgStatusAfter(report, previous?.status, now, previous?.backoff);
  const next = withOrg(memory, report.org, { ...status, status: 'failed' }, previous?.backoff);
  return { memory: next, logs: [], metrics: {} };
}

/** An org's outcome: its status, its backoff when it failed (5 s, doubling, up to the interval). */
export function afterOrg(
  memory: DaemonMemory,
  report: OrgReport,
  /** The org as the pass began with it (undefined: not among the pass's orgs). */
  org: PassOrg | undefined,
  tokenKey: string,
  around: Surroundings,
): Step {
  const { now, intervalMs } = around;
  const previous = memory.orgs.get(report.org);
  let backoff: Backoff | undefined;
  let delayMs = 0;
  if (report.status === 'failed' && org !== undefined) {
    const failures = (previous?.backoff?.failures ?? 0) + 1;
    delayMs = Math.min(intervalMs > 0 ? intervalMs : 300_000, 5_000 * 2 ** (failures - 1));
    backoff = { failures, nextAttemptAt: now + delayMs, fingerprint: fingerprintOf(org, tokenKey) };
  }
  const status = orgStatusAfter(report, previous?.status, now, backoff, org?.types);
  const message = status.lastError?.message;
  const logs: LogEntry[] = [];
  if (backoff !== undefined) {
    logs.push({
      // A cause never about the org (the address, an unknown token) is said once, by the pass.
      level: neverAboutTheOrg(report.cause) ? 'debug' : 'warn',
      fields: { org: report.org, failures: backoff.failures, retryInMs: delayMs },
      message: `org ${report.org} failed: ${message ?? 'error'}`,
    });
  } else if (report.status === 'invalid') {
    logs.push({
      level: 'error',
      fields: { org: report.org, errors: report.errors },
      message: `org ${report.org} left alone: ${message ?? 'invalid manifests'}`,
    });
  }
  const drift = (result: ChangeResult) =>
    report.changes.filter((c) => c.cause === 'drift' && c.result === result).length;
  const counters: OrgCounters = {
    org: report.org,
    manifestErrors: report.errors.length,
    changes: report.changes
      .filter((c) => c.result !== 'planned')
      .map(({ action, result }) => ({ action, result })),
    driftHealed: drift('applied'),
    ...(report.status === 'invalid'
      ? {}
      : {
          unmanaged: report.unmanaged.length,
          pending: report.changes.filter((c) => c.result !== 'applied').length,
          suspended: report.suspended === true,
          driftPending: drift('planned'),
        }),
    ...(report.status === 'ok' ? { lastSuccessSeconds: now / 1000 } : {}),
  };
  return { memory: withOrg(memory, report.org, status, backoff), logs, metrics: { org: counters } };
}

/** How a pass ended, as the shell saw it. */
export interface PassEnd {
  readonly startedAt: number;
  /** Time spent waiting for files to settle: not part of the pass's own duration. */
  readonly settleWaitMs: number;
  readonly reasons: readonly string[];
  /** The orgs owned, and how many of those looked at were not due. */
  readonly owned: readonly PassOrg[];
  readonly skipped: number;
  readonly outcome:
    | { readonly kind: 'error'; readonly message: string }
    | {
        readonly kind: 'done';
        readonly report: Pick<RunReport, 'orgs' | 'errors' | 'summary' | 'dialect' | 'failure'>;
        /** The daemon began to stop during the pass: its requests were cut, so it says nothing. */
        readonly cutShort: boolean;
      };
}

/** The end of a pass: its verdict, the line that sums it up, its counters, its notifications. */
export function afterPass(
  memory: DaemonMemory,
  end: PassEnd,
  now: number,
): Step & { readonly verdict: PassVerdict; readonly events: readonly notify.NotifyEvent[] } {
  const { outcome } = end;
  const done = outcome.kind === 'done' ? outcome.report : undefined;
  const error = outcome.kind === 'error' ? outcome.message : undefined;
  const { failed, invalid } = outcomes(memory);
  const verdict: PassVerdict =
    done === undefined
      ? 'error'
      : failed + invalid > 0 && failed + invalid === memory.orgs.size
        ? 'failed'
        : done.orgs.some((o) => o.status !== 'ok') || done.errors.length > 0 || failed + invalid > 0
          ? 'partial'
          : 'success';
  const failure = done?.failure;
  const durationMs = now - end.startedAt - end.settleWaitMs;
  const time = new Date(now).toISOString();
  const lastPass: LastPass = {
    startedAt: new Date(end.startedAt).toISOString(),
    finishedAt: time,
    durationMs,
    settleWaitMs: end.settleWaitMs,
    result: verdict,
    trigger: end.reasons.slice(0, 20),
    ...(error === undefined ? {} : { error }),
    ...(failure === undefined ? {} : { failure: { ...failure, orgs: failure.orgs.length } }),
  };
  const announced =
    outcome.kind === 'done' && !outcome.cutShort
      ? notify.passEvents(memory.notify, {
          owned: end.owned.map((org) => org.org),
          reports: outcome.report.orgs,
          unattributed: outcome.report.errors,
          revision: memory.revision ?? null,
          time,
        })
      : { events: [], memory: memory.notify };
  const pending = [...memory.orgs.values()].reduce((n, org) => n + org.status.pending, 0);
  const counts = {
    orgs: end.owned.length,
    skipped: end.skipped,
    applied: done?.summary.applied ?? 0,
    driftHealed: done?.summary.driftHealed ?? 0,
    failed: done === undefined ? 0 : failed,
    failedChanges: done === undefined ? 0 : done.summary.failed + done.summary.notConverged,
    pending: done === undefined ? 0 : pending,
    invalid: done === undefined ? 0 : invalid,
    unattributed: done?.errors.length ?? 0,
  };
  const logs: LogEntry[] = [];
  if (error !== undefined)
    logs.push({ level: 'error', fields: { err: error }, message: `pass failed: ${error}` });
  // Orgs that failed for a cause never about the org (their own lines at debug): once for all.
  if (done !== undefined && failure === undefined) {
    for (const line of failuresSaidOnce(done.orgs))
      logs.push({ level: 'warn', fields: {}, message: line });
  }
  logs.push({
    level: verdict === 'success' ? 'info' : 'warn',
    fields: {
      result: verdict,
      durationMs,
      revision: memory.revision ?? null,
      trigger: end.reasons.slice(0, 5),
      settleWaitMs: end.settleWaitMs,
      ...counts,
      ...(failure === undefined ? {} : { cause: failure.kind }),
    },
    message:
      `pass ${verdict}: ${counts.applied} applied` +
      (counts.driftHealed > 0 ? ` (${counts.driftHealed} drift healed)` : '') +
      `, ${counts.failed} org(s) failed, ${counts.invalid} invalid org(s), ${counts.pending} pending, of ${counts.orgs} org(s)` +
      (counts.unattributed > 0 ? `; ${counts.unattributed} problem(s) belong to no org` : '') +
      (failure === undefined ? '' : `; ${failure.message}. ${failure.hint}`),
  });
  return {
    memory: {
      ...memory,
      notify: announced.memory,
      passes: memory.passes + 1,
      firstPassDone: memory.firstPassDone || verdict !== 'error',
      lastPass,
      // The dialect the last listing said, kept while a pass reads none.
      dialect: done?.dialect ?? memory.dialect,
    },
    verdict,
    events: announced.events,
    logs,
    metrics: { pass: { result: verdict, durationSeconds: durationMs / 1000 } },
  };
}
