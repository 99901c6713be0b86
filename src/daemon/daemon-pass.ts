/**
 * The steps of one daemon pass, as pure functions of the daemon's memory
 * (daemon/daemon-memory.ts): `beginPass` picks the orgs it reconciles, `afterOrg` records each
 * org as it ends (`afterFailedRound` a round that failed and will be tried again), and
 * `afterPass` gives its verdict, its log line, its counters and its notifications. Each returns
 * the new memory and what the shell (daemon/daemon.ts) is to carry out.
 */
import {
  type DaemonMemory,
  type LogEntry,
  type OrgCounters,
  orgOutcomes,
  type PassOrg,
  readinessOfMemory,
  type Step,
  type Surroundings,
  withOrg,
} from './daemon-memory.ts';
import {
  failuresSaidOnce,
  neverAboutTheOrg,
  type OrgReport,
  type ProblemReport,
  type RunReport,
} from '../core/report.ts';
import { isDue, nextBackoff, orgsToLook } from './daemon-policy.ts';
import { type LastPass, orgStatusAfter, type PassVerdict } from './daemon-status.ts';
import { type NotifyEvent, passEvents } from '../notify/notify-events.ts';

/** What a backing-off org failed with: its manifests and its token (a change to either retries it). */
function fingerprintOf(org: PassOrg, tokenKey: string): string {
  return `${tokenKey}:${org.manifestsKey}`;
}

/**
 * The start of a pass: forgets the orgs that are no longer owned, notes the revision and the
 * problems that belong to no org, and picks the orgs due: those the trigger looks at
 * (daemon-policy's `orgsToLook`) less those backing off whose time has not come, unless their
 * manifests or the token changed.
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
  around: Surroundings,
): Step & { readonly due: readonly PassOrg[]; readonly skipped: number } {
  const names = new Set(start.owned.map((org) => org.org));
  const forget = [...memory.orgs.keys()].filter((org) => !names.has(org));
  const orgs = new Map([...memory.orgs].filter(([org]) => names.has(org)));
  const candidates = orgsToLook(start.owned, start.reasons, start.changedFiles, memory.files);
  const due = candidates.filter((org) =>
    isDue(orgs.get(org.org)?.backoff, around.now, fingerprintOf(org, start.tokenKey(org.org))),
  );
  const revisionChanged = start.revision !== memory.revision || memory.passes === 0;
  const next: DaemonMemory = {
    ...memory,
    orgs,
    files: new Map(start.owned.map((org) => [org.org, new Set(org.files)])),
    revision: start.revision,
    unattributed: start.unattributed,
  };
  const logs = start.unattributed.map((problem): LogEntry => ({
    level: 'warn',
    fields: { file: problem.file, line: problem.line, column: problem.column, path: problem.path },
    message: `${problem.file}:${problem.line}:${problem.column} ${problem.path ? `${problem.path}: ` : ''}${problem.message} (belongs to no org)`,
  }));
  return {
    memory: next,
    due,
    skipped: candidates.length - due.length,
    logs,
    metrics: {
      ...(forget.length > 0 ? { forget } : {}),
      ...(revisionChanged ? { revision: { value: start.revision } } : {}),
      ready: readinessOfMemory(next, around).ready,
    },
  };
}

/**
 * An org's round failed and another follows: the org shows as failed at once, before the pass
 * decides whether it recovers (its backoff is decided when the org is done).
 */
export function afterFailedRound(
  memory: DaemonMemory,
  report: OrgReport,
  around: Surroundings,
): Step {
  const previous = memory.orgs.get(report.org);
  const status = orgStatusAfter(report, previous?.status, around.now, previous?.backoff);
  const next = withOrg(memory, report.org, {
    status: { ...status, status: 'failed' },
    backoff: previous?.backoff,
  });
  return { memory: next, logs: [], metrics: { ready: readinessOfMemory(next, around).ready } };
}

/**
 * An org's outcome: its status, and its backoff when it failed (doubling, capped at the interval;
 * daemon/daemon-policy.ts), with a log line for a failed or invalid org.
 */
export function afterOrg(
  memory: DaemonMemory,
  report: OrgReport,
  /** The org as the pass began with it (undefined: it was not among the pass's orgs). */
  org: PassOrg | undefined,
  /** The org's token, hashed (or, with none, why). */
  tokenKey: string,
  around: Surroundings,
): Step {
  const previous = memory.orgs.get(report.org);
  const backoff =
    report.status === 'failed' && org !== undefined
      ? nextBackoff(previous?.backoff, around.now, around.intervalMs, fingerprintOf(org, tokenKey))
      : undefined;
  const status = orgStatusAfter(report, previous?.status, around.now, backoff, org?.types);
  const next = withOrg(memory, report.org, { status, backoff });
  const message = status.lastError?.message;
  const logs: LogEntry[] = [];
  if (backoff !== undefined) {
    logs.push({
      // A cause never about the org (the address, an unknown token) is said once, by the pass.
      level: neverAboutTheOrg(report.cause) ? 'debug' : 'warn',
      fields: {
        org: report.org,
        failures: backoff.failures,
        retryInMs: backoff.nextAttemptAt - around.now,
      },
      message: `org ${report.org} failed: ${message ?? 'error'}`,
    });
  } else if (report.status === 'invalid') {
    logs.push({
      level: 'error',
      fields: { org: report.org, errors: report.errors },
      message: `org ${report.org} left alone: ${message ?? 'invalid manifests'}`,
    });
  }
  const invalid = report.status === 'invalid';
  const counters: OrgCounters = {
    org: report.org,
    manifestErrors: report.errors.length,
    changes: report.changes
      .filter((change) => change.result !== 'planned')
      .map(({ action, result }) => ({ action, result })),
    driftHealed: report.changes.filter((c) => c.cause === 'drift' && c.result === 'applied').length,
    ...(invalid
      ? {}
      : {
          unmanaged: report.unmanaged.length,
          pending: report.changes.filter((c) => c.result !== 'applied').length,
          suspended: report.suspended === true,
          driftPending: report.changes.filter((c) => c.cause === 'drift' && c.result === 'planned')
            .length,
        }),
    ...(report.status === 'ok' ? { lastSuccessSeconds: around.now / 1000 } : {}),
  };
  return {
    memory: next,
    logs,
    metrics: { org: counters, ready: readinessOfMemory(next, around).ready },
  };
}

/** How a pass ended, as the shell saw it. */
export interface PassEnd {
  readonly startedAt: number;
  /** Time spent waiting for files to settle: not part of the pass's own duration. */
  readonly settleWaitMs: number;
  readonly reasons: readonly string[];
  /** The orgs this daemon owned, and how many of those it looked at were not due. */
  readonly owned: readonly PassOrg[];
  readonly due: readonly PassOrg[];
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

/**
 * The end of a pass: its verdict (success: every org reconciled; partial: an org failed, is
 * invalid, or a problem belongs to no org; error: the pass itself failed), the log line that sums
 * it up, its counters, and the notifications it makes (notify/notify-events.ts decides which).
 */
export function afterPass(
  memory: DaemonMemory,
  end: PassEnd,
  around: Surroundings,
): Step & { readonly verdict: PassVerdict; readonly events: readonly NotifyEvent[] } {
  const { outcome } = end;
  const outcomes = orgOutcomes(memory);
  const pending = [...memory.orgs.values()].reduce((n, org) => n + org.status.pending, 0);
  const done = outcome.kind === 'done' ? outcome.report : undefined;
  const verdict: PassVerdict =
    done === undefined
      ? 'error'
      : done.orgs.some((o) => o.status !== 'ok') ||
          done.errors.length > 0 ||
          outcomes.failed + outcomes.invalid > 0
        ? 'partial'
        : 'success';
  const error = outcome.kind === 'error' ? outcome.message : undefined;
  const failure = done?.failure;
  const durationMs = around.now - end.startedAt - end.settleWaitMs;
  const lastPass: LastPass = {
    startedAt: new Date(end.startedAt).toISOString(),
    finishedAt: new Date(around.now).toISOString(),
    durationMs,
    settleWaitMs: end.settleWaitMs,
    result: verdict,
    trigger: end.reasons.slice(0, 20),
    ...(error === undefined ? {} : { error }),
    ...(failure === undefined ? {} : { failure: { ...failure, orgs: failure.orgs.length } }),
  };
  let notify = memory.notify;
  let events: readonly NotifyEvent[] = [];
  if (outcome.kind === 'done' && !outcome.cutShort) {
    ({ events, memory: notify } = passEvents(memory.notify, {
      owned: end.owned.map((org) => org.org),
      reports: outcome.report.orgs,
      unattributed: outcome.report.errors,
      revision: memory.revision ?? null,
      time: new Date(around.now).toISOString(),
    }));
  }
  const next: DaemonMemory = {
    ...memory,
    notify,
    passes: memory.passes + 1,
    firstPassDone: memory.firstPassDone || verdict !== 'error',
    lastPassError: error,
    lastPassEnd: around.now,
    lastPass,
    // The dialect the last listing said, kept while a pass reads none.
    dialect: done?.dialect ?? memory.dialect,
  };
  const counts = {
    orgs: end.owned.length,
    skipped: end.skipped,
    applied: done?.summary.applied ?? 0,
    driftHealed: done?.summary.driftHealed ?? 0,
    failed: done === undefined ? 0 : outcomes.failed,
    failedChanges: done === undefined ? 0 : done.summary.failed + done.summary.notConverged,
    pending: done === undefined ? 0 : pending,
    invalid: done === undefined ? 0 : outcomes.invalid,
    unattributed: done?.errors.length ?? 0,
  };
  const logs: LogEntry[] = [];
  if (error !== undefined) {
    logs.push({ level: 'error', fields: { err: error }, message: `pass failed: ${error}` });
  }
  // Orgs that failed for a cause never about the org, their lines at debug: once for them all.
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
      `, ${counts.failed} org(s) failed, ` +
      `${counts.invalid} invalid org(s), ${counts.pending} pending, of ${counts.orgs} org(s)` +
      (counts.unattributed > 0 ? `; ${counts.unattributed} problem(s) belong to no org` : '') +
      (failure === undefined ? '' : `; ${failure.message}. ${failure.hint}`),
  });
  return {
    memory: next,
    verdict,
    events,
    logs,
    metrics: {
      pass: { result: verdict, durationSeconds: durationMs / 1000 },
      ready: readinessOfMemory(next, around).ready,
    },
  };
}
