/**
 * What the daemon remembers between passes, and every decision about what a pass means, as pure
 * functions: (memory, what happened, now) in, (new memory, log lines, metric updates,
 * notifications) out. daemon/daemon.ts only carries them out: it reads the files, runs the
 * engine, sets timers, writes the logs and metrics, and hands the events to the notifier.
 * The steps of a pass are in daemon/daemon-pass.ts.
 */
import type { ResolvedDialect } from '../core/dialect.ts';
import { type Backoff, type OrgOutcomes, readinessOf } from './daemon-policy.ts';
import {
  type DaemonStatus,
  healthLevel,
  type LastPass,
  orgState,
  type OrgStatus,
  type PassVerdict,
} from './daemon-status.ts';
import type { ChangeAction } from '../core/model.ts';
import { compareNames } from '../core/names.ts';
import { EMPTY_NOTIFY_MEMORY, type NotifyMemory } from '../notify/notify-events.ts';
import type { ChangeResult, ProblemReport } from '../core/report.ts';

/** What the daemon remembers of one org. */
export interface OrgMemory {
  readonly status: OrgStatus;
  /** While the org fails: how often in a row, and when it is tried again. */
  readonly backoff: Backoff | undefined;
}

export interface DaemonMemory {
  /** Every org reconciled since it became this daemon's, by name. */
  readonly orgs: ReadonlyMap<string, OrgMemory>;
  /** The files that served each owned org at the last pass (a change to one touches the org). */
  readonly files: ReadonlyMap<string, ReadonlySet<string>>;
  /** What the notifications remember (notify/notify-events.ts). */
  readonly notify: NotifyMemory;
  readonly passes: number;
  /** Whether a pass has ended without failing as a whole. */
  readonly firstPassDone: boolean;
  /** When the last pass ended (ms since the epoch). */
  readonly lastPassEnd: number | undefined;
  readonly lastPass: LastPass | null;
  /** Why the last pass failed as a whole, when it did. */
  readonly lastPassError: string | undefined;
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
  lastPassEnd: undefined,
  lastPass: null,
  lastPassError: undefined,
  revision: undefined,
  unattributed: [],
};

/** A log line to write. */
export interface LogEntry {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly fields: Readonly<Record<string, unknown>>;
  readonly message: string;
}

/** What the metrics learn of one org. */
export interface OrgCounters {
  readonly org: string;
  readonly manifestErrors: number;
  /** Changes sent, by action and result (planned changes were not sent). */
  readonly changes: readonly { readonly action: ChangeAction; readonly result: ChangeResult }[];
  /** Changes applied that were drift (core/drift.ts): the service set back to the manifests. */
  readonly driftHealed: number;
  /** Unknown while the org's manifests are invalid: the last values stay. */
  readonly unmanaged?: number;
  readonly pending?: number;
  /** Whether its manifests say `suspend: true` (1) or not (0); unknown while invalid. */
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
  /** Whether /readyz answers 200 now. */
  readonly ready: boolean;
}

/** What a step decides: the memory to keep, and what to carry out. */
export interface Step {
  readonly memory: DaemonMemory;
  readonly logs: readonly LogEntry[];
  readonly metrics: MetricUpdates;
}

/** What readiness depends on besides the memory. */
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

/** How the orgs fared last: how many there are, failing, and invalid. */
export function orgOutcomes(memory: DaemonMemory): OrgOutcomes {
  let failed = 0;
  let invalid = 0;
  for (const { status } of memory.orgs.values()) {
    if (status.status === 'failed') failed++;
    else if (status.status === 'invalid') invalid++;
  }
  return { total: memory.orgs.size, failed, invalid };
}

/** Whether the daemon is ready (daemon/daemon-policy.ts's rule), and why not. */
export function readinessOfMemory(
  memory: DaemonMemory,
  around: Surroundings,
): { ready: boolean; reason?: string } {
  return readinessOf({
    firstPassDone: memory.firstPassDone,
    lastPassEnd: memory.lastPassEnd,
    lastPassError: memory.lastPassError,
    intervalMs: around.intervalMs,
    now: around.now,
    orgs: orgOutcomes(memory),
    stateWriteError: around.stateWriteError,
  });
}

/** When the first org backing off is due (ms since the epoch), if any is. */
export function nextAttemptAt(memory: DaemonMemory): number | undefined {
  let next: number | undefined;
  for (const { backoff } of memory.orgs.values()) {
    if (backoff !== undefined) next = Math.min(next ?? Infinity, backoff.nextAttemptAt);
  }
  return next;
}

/** `/status`: the memory, and what only the shell knows now. */
export function daemonStatus(
  memory: DaemonMemory,
  live: Pick<
    DaemonStatus,
    'manifests' | 'ready' | 'passRunning' | 'shard' | 'stateFile' | 'mode' | 'window'
  > &
    Partial<Pick<DaemonStatus, 'notifications'>> & {
      /** Where each org's token came from, or null when it has none (config/tokens.ts). */
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
    health: healthOfMemory(memory),
    orgs: Object.fromEntries(
      orgs.map(([name, org]) => [
        name,
        { ...org.status, state: orgState(org.status, around), tokenSource: live.tokenSource(name) },
      ]),
    ),
    ...(live.notifications === undefined ? {} : { notifications: live.notifications }),
  };
}

/** The daemon's health level (healthLevel) from what it remembers: for /status and /healthz. */
export function healthOfMemory(memory: DaemonMemory): DaemonStatus['health'] {
  return healthLevel({
    lastPass: memory.lastPass,
    errors: [...memory.unattributed],
    orgs: Object.fromEntries([...memory.orgs].map(([name, org]) => [name, org.status])),
  });
}

/** The memory with one org's entry replaced. */
export function withOrg(memory: DaemonMemory, org: string, value: OrgMemory): DaemonMemory {
  const orgs = new Map(memory.orgs);
  orgs.set(org, value);
  return { ...memory, orgs };
}
