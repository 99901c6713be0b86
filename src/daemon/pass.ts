/**
 * What the daemon remembers between passes, and every decision about what a pass means, as pure
 * functions: (memory, what happened, now) in, (new memory, log lines, counters, notifications)
 * out, in four steps: `beginPass` picks the orgs a pass reconciles, `afterOrg` records each org
 * as it ends (`afterFailedRound` a round that will be tried again), and `afterPass` gives the
 * verdict. daemon/daemon.ts carries them out: files, engine, timers, logs, metrics, notifier.
 */
import { failuresSaidOnce, neverAboutTheOrg } from '../core/common-failure.ts';
import type { ResolvedDialect } from '../core/dialect.ts';
import type { ChangeAction } from '../core/model.ts';
import { compareNames } from '../core/names.ts';
import type { ChangeResult, OrgReport, ProblemReport, RunReport } from '../core/report.ts';
import { shardOf } from '../core/shard.ts';
import { formatProblem } from '../core/validation.ts';
import {
  EMPTY_NOTIFY_MEMORY,
  passEvents,
  type NotifyEvent,
  type NotifyMemory,
} from '../notify/events.ts';
import {
  healthLevel,
  orgState,
  orgStatusAfter,
  type DaemonStatus,
  type LastPass,
  type OrgStatus,
  type PassVerdict,
} from './status.ts';

/** An org backing off after failures. */
export interface Backoff {
  readonly failures: number;
  readonly nextAttemptAt: number;
  /** What it failed with (its manifests and its token): a change to it is tried at once. */
  readonly fingerprint: string;
}

export interface DaemonMemory {
  /** Every org reconciled since it became this daemon's: its status and, while failing, backoff. */
  readonly orgs: ReadonlyMap<string, { readonly status: OrgStatus; readonly backoff?: Backoff }>;
  /** The files that served each owned org at the last pass (a change to one touches the org). */
  readonly files: ReadonlyMap<string, ReadonlySet<string>>;
  readonly notify: NotifyMemory;
  readonly passes: number;
  /** Whether a pass has ended without failing as a whole. */
  readonly firstPassDone: boolean;
  readonly lastPass: LastPass | null;
  /** The manifests revision the last pass read. */
  readonly revision: string | undefined;
  /** Manifest problems of the last pass that belong to no org. */
  readonly unattributed: readonly ProblemReport[];
  /** The API dialect of the last pass that read a listing. */
  readonly dialect?: ResolvedDialect | undefined;
}

export const EMPTY_DAEMON_MEMORY: DaemonMemory = {
  orgs: new Map(),
  files: new Map(),
  notify: EMPTY_NOTIFY_MEMORY,
  passes: 0,
  firstPassDone: false,
  lastPass: null,
  revision: undefined,
  unattributed: [],
};

/** A log line to write. */
export interface LogEntry {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly fields: Readonly<Record<string, unknown>>;
  readonly message: string;
}

/** What the metrics learn of one org (the optional ones are unknown while it is invalid). */
export interface OrgCounters {
  readonly org: string;
  readonly manifestErrors: number;
  /** Changes sent, by action and result (planned changes were not sent). */
  readonly changes: readonly { readonly action: ChangeAction; readonly result: ChangeResult }[];
  /** Changes applied that were drift: the service set back to the manifests. */
  readonly driftHealed: number;
  readonly unmanaged?: number;
  readonly pending?: number;
  readonly suspended?: boolean;
  /** Planned changes that are drift (observe mode, a closed window, a suspended org). */
  readonly driftPending?: number;
  /** Set when the org ended without error (Unix seconds). */
  readonly lastSuccessSeconds?: number;
}

/** What to change in the metrics. */
export interface MetricUpdates {
  /** Orgs that are no longer this daemon's: their series go. */
  readonly forget?: readonly string[];
  /** The revision read, when it changed. */
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

/** What the steps need to know besides the memory. */
export interface Surroundings {
  readonly now: number;
  readonly intervalMs: number;
  /** Why the state file could not be written last time, if it could not. */
  readonly stateWriteError: string | undefined;
}

/** An org this daemon owns, as a pass begins. */
export interface PassOrg {
  readonly org: string;
  readonly files: readonly string[];
  /** The org's manifests as text: the same manifests give the same text. */
  readonly manifestsKey: string;
  /** Its declared environments' names and types, in name order (the first MAX_ENVIRONMENT_ROWS). */
  readonly types?: readonly (readonly [string, string])[];
}

/** Whether this replica reconciles `org`: its shard's, and among `--org` when given. */
export function ownsOrg(
  org: string,
  shard: { readonly index: number; readonly count: number } | undefined,
  only: readonly string[] | undefined,
): boolean {
  return (
    (shard === undefined || shardOf(org, shard.count) === shard.index) &&
    (only === undefined || only.includes(org))
  );
}

/**
 * The orgs a pass looks at. A pass started only by file events or a new revision looks at the
 * orgs touched by a changed file (one that serves them now or served them at the last pass), or
 * never seen before; any other trigger (start, interval, webhook, SIGHUP, backoff) looks at every
 * org, which is what heals drift made in the service by hand. Without a list of changed files
 * (`changed` undefined), anything may have changed.
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

/** How long an org waits after its first failure; it doubles with each failure in a row. */
export const BASE_BACKOFF_MS = 5_000;
/** The backoff cap when the periodic resync is off. */
export const BACKOFF_CAP_WITHOUT_INTERVAL_MS = 300_000;

/**
 * The backoff after one more failure: 5 s, 10 s, 20 s, ... doubling, capped at the interval (or
 * at 5 minutes when the interval is off), never on every event.
 */
export function nextBackoff(
  previous: Backoff | undefined,
  now: number,
  intervalMs: number,
  fingerprint: string,
): Backoff {
  const failures = (previous?.failures ?? 0) + 1;
  const cap = intervalMs > 0 ? intervalMs : BACKOFF_CAP_WITHOUT_INTERVAL_MS;
  return {
    failures,
    nextAttemptAt: now + Math.min(cap, BASE_BACKOFF_MS * 2 ** (failures - 1)),
    fingerprint,
  };
}

/** How the orgs fared last: how many there are, failing, and invalid. */
function orgOutcomes(memory: DaemonMemory): { total: number; failed: number; invalid: number } {
  const statuses = [...memory.orgs.values()].map((org) => org.status.status);
  return {
    total: statuses.length,
    failed: statuses.filter((s) => s === 'failed').length,
    invalid: statuses.filter((s) => s === 'invalid').length,
  };
}

/**
 * Ready once the first pass finished, while passes keep ending (the last one within about three
 * intervals plus a minute), while the last pass could read the manifests, while the state file
 * can be written (it serves every org: nothing is sent while it cannot), and while at least one
 * org is reconciled without error: when every org is failing or invalid (the API is down, the
 * token refused, every manifest broken), the replica is not ready until one succeeds again.
 */
export function readiness(
  memory: DaemonMemory,
  around: Surroundings,
): { ready: boolean; reason?: string } {
  const { now, intervalMs } = around;
  const { lastPass } = memory;
  const since = lastPass === null ? 0 : now - Date.parse(lastPass.finishedAt);
  const { total, failed, invalid } = orgOutcomes(memory);
  const reason = !memory.firstPassDone
    ? 'the first pass has not finished yet'
    : intervalMs > 0 && since > 3 * intervalMs * 1.1 + 60_000
      ? `no pass has finished for ${Math.round(since / 1000)} s`
      : lastPass?.result === 'error'
        ? `the last pass failed: ${lastPass.error}`
        : around.stateWriteError !== undefined
          ? `the state file cannot be written: ${around.stateWriteError}`
          : total > 0 && failed + invalid >= total
            ? invalid === 0
              ? `every org (${total}) failed its last attempt; see /status`
              : `no org is reconciled: ${failed} failed, ${invalid} with invalid manifests; see /status`
            : undefined;
  return reason === undefined ? { ready: true } : { ready: false, reason };
}

/** Live unless a pass has been running for far too long (the loop is wedged). */
export function liveness(
  passStartedAt: number | undefined,
  intervalMs: number,
  now: number,
): { live: boolean; reason?: string } {
  if (passStartedAt === undefined || now - passStartedAt <= Math.max(15 * 60_000, 3 * intervalMs)) {
    return { live: true };
  }
  return {
    live: false,
    reason: `a pass has been running for ${Math.round((now - passStartedAt) / 1000)} s`,
  };
}

/** When the first org backing off is due (ms since the epoch), if any is. */
export function nextAttemptAt(memory: DaemonMemory): number | undefined {
  const times = [...memory.orgs.values()].flatMap((org) => org.backoff?.nextAttemptAt ?? []);
  return times.length === 0 ? undefined : Math.min(...times);
}

/** `/status`: the memory, and what only the shell knows now. */
export function daemonStatus(
  memory: DaemonMemory,
  live: Pick<
    DaemonStatus,
    'manifests' | 'ready' | 'passRunning' | 'shard' | 'stateFile' | 'mode' | 'window'
  > &
    Partial<Pick<DaemonStatus, 'notifications'>> & {
      /** Where each org's token came from, or null when it has none. */
      readonly tokenSource: (org: string) => string | null;
    },
): DaemonStatus {
  const orgs = [...memory.orgs].sort(([a], [b]) => compareNames(a, b));
  const around = { observe: live.mode === 'observe', windowOpen: live.window?.open ?? true };
  return {
    revision: memory.revision ?? null,
    manifests: live.manifests,
    ready: live.ready,
    passes: memory.passes,
    lastPass: memory.lastPass,
    passRunning: live.passRunning,
    shard: live.shard,
    errors: [...memory.unattributed],
    stateFile: live.stateFile,
    dialect: memory.dialect ?? null,
    mode: live.mode,
    window: live.window,
    health: healthLevel(
      memory.lastPass,
      memory.unattributed.length,
      orgs.map(([name, org]) => [name, org.status]),
    ),
    orgs: Object.fromEntries(
      orgs.map(([name, { status }]) => [
        name,
        { ...status, state: orgState(status, around), tokenSource: live.tokenSource(name) },
      ]),
    ),
    ...(live.notifications === undefined ? {} : { notifications: live.notifications }),
  };
}

/** The memory with one org's entry replaced. */
function withOrg(memory: DaemonMemory, org: string, status: OrgStatus, backoff?: Backoff) {
  const orgs = new Map(memory.orgs).set(
    org,
    backoff === undefined ? { status } : { status, backoff },
  );
  return { ...memory, orgs };
}

/** What a backing-off org failed with: its manifests and its token (a change to either retries it). */
const fingerprintOf = (org: PassOrg, tokenKey: string) => `${tokenKey}:${org.manifestsKey}`;

/**
 * The start of a pass: forgets the orgs that are no longer owned, notes the revision and the
 * problems that belong to no org, and picks the orgs due: those the trigger looks at less those
 * backing off whose time has not come, unless their manifests or their token changed.
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
  const due = candidates.filter((org) => {
    const backoff = orgs.get(org.org)?.backoff;
    return (
      backoff === undefined ||
      backoff.nextAttemptAt <= around.now ||
      backoff.fingerprint !== fingerprintOf(org, start.tokenKey(org.org))
    );
  });
  const next: DaemonMemory = {
    ...memory,
    orgs,
    files: new Map(start.owned.map((org) => [org.org, new Set(org.files)])),
    revision: start.revision,
    unattributed: start.unattributed,
  };
  const revisionChanged = start.revision !== memory.revision || memory.passes === 0;
  return {
    memory: next,
    due,
    skipped: candidates.length - due.length,
    logs: start.unattributed.map(({ file, line, column, path, ...problem }) => ({
      level: 'warn',
      fields: { file, line, column, path },
      message: `${formatProblem({ file, line, column, path, ...problem })} (belongs to no org)`,
    })),
    metrics: {
      ...(forget.length > 0 ? { forget } : {}),
      ...(revisionChanged ? { revision: { value: start.revision } } : {}),
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
  const next = withOrg(memory, report.org, { ...status, status: 'failed' }, previous?.backoff);
  return { memory: next, logs: [], metrics: {} };
}

/**
 * An org's outcome: its status, and its backoff when it failed, with a log line for a failed or
 * invalid org and what the metrics learn of it.
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
  const { now, intervalMs } = around;
  const previous = memory.orgs.get(report.org);
  const backoff =
    report.status === 'failed' && org !== undefined
      ? nextBackoff(previous?.backoff, now, intervalMs, fingerprintOf(org, tokenKey))
      : undefined;
  const status = orgStatusAfter(report, previous?.status, now, backoff, org?.types);
  const next = withOrg(memory, report.org, status, backoff);
  const message = status.lastError?.message;
  const logs: LogEntry[] = [];
  if (backoff !== undefined) {
    logs.push({
      // A cause never about the org (the address, an unknown token) is said once, by the pass.
      level: neverAboutTheOrg(report.cause) ? 'debug' : 'warn',
      fields: {
        org: report.org,
        failures: backoff.failures,
        retryInMs: backoff.nextAttemptAt - now,
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
  const count = (cause: 'drift', result: ChangeResult) =>
    report.changes.filter((c) => c.cause === cause && c.result === result).length;
  const counters: OrgCounters = {
    org: report.org,
    manifestErrors: report.errors.length,
    changes: report.changes
      .filter((change) => change.result !== 'planned')
      .map(({ action, result }) => ({ action, result })),
    driftHealed: count('drift', 'applied'),
    ...(report.status === 'invalid'
      ? {}
      : {
          unmanaged: report.unmanaged.length,
          pending: report.changes.filter((c) => c.result !== 'applied').length,
          suspended: report.suspended === true,
          driftPending: count('drift', 'planned'),
        }),
    ...(report.status === 'ok' ? { lastSuccessSeconds: now / 1000 } : {}),
  };
  return { memory: next, logs, metrics: { org: counters } };
}

/** How a pass ended, as the shell saw it. */
export interface PassEnd {
  readonly startedAt: number;
  /** Time spent waiting for files to settle: not part of the pass's own duration. */
  readonly settleWaitMs: number;
  readonly reasons: readonly string[];
  /** The orgs this daemon owned, and how many of those it looked at were not due. */
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

/**
 * The end of a pass: its verdict (success: every org reconciled; partial: an org failed, is
 * invalid, or a problem belongs to no org; error: the pass itself failed), the log line that sums
 * it up, its counters, and the notifications it makes (notify/events.ts decides which).
 */
export function afterPass(
  memory: DaemonMemory,
  end: PassEnd,
  around: Surroundings,
): Step & { readonly verdict: PassVerdict; readonly events: readonly NotifyEvent[] } {
  const { outcome } = end;
  const done = outcome.kind === 'done' ? outcome.report : undefined;
  const error = outcome.kind === 'error' ? outcome.message : undefined;
  const { failed, invalid } = orgOutcomes(memory);
  const verdict: PassVerdict =
    done === undefined
      ? 'error'
      : done.orgs.some((o) => o.status !== 'ok') || done.errors.length > 0 || failed + invalid > 0
        ? 'partial'
        : 'success';
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
  const announced =
    outcome.kind === 'done' && !outcome.cutShort
      ? passEvents(memory.notify, {
          owned: end.owned.map((org) => org.org),
          reports: outcome.report.orgs,
          unattributed: outcome.report.errors,
          revision: memory.revision ?? null,
          time: new Date(around.now).toISOString(),
        })
      : { events: [], memory: memory.notify };
  const next: DaemonMemory = {
    ...memory,
    notify: announced.memory,
    passes: memory.passes + 1,
    firstPassDone: memory.firstPassDone || verdict !== 'error',
    lastPass,
    // The dialect the last listing said, kept while a pass reads none.
    dialect: done?.dialect ?? memory.dialect,
  };
  const counts = {
    orgs: end.owned.length,
    skipped: end.skipped,
    applied: done?.summary.applied ?? 0,
    driftHealed: done?.summary.driftHealed ?? 0,
    failed: done === undefined ? 0 : failed,
    failedChanges: done === undefined ? 0 : done.summary.failed + done.summary.notConverged,
    pending:
      done === undefined
        ? 0
        : [...memory.orgs.values()].reduce((n, org) => n + org.status.pending, 0),
    invalid: done === undefined ? 0 : invalid,
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
      `, ${counts.failed} org(s) failed, ${counts.invalid} invalid org(s), ${counts.pending} pending, of ${counts.orgs} org(s)` +
      (counts.unattributed > 0 ? `; ${counts.unattributed} problem(s) belong to no org` : '') +
      (failure === undefined ? '' : `; ${failure.message}. ${failure.hint}`),
  });
  return {
    memory: next,
    verdict,
    events: announced.events,
    logs,
    metrics: { pass: { result: verdict, durationSeconds: durationMs / 1000 } },
  };
}
