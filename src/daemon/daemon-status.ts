/**
 * What the daemon says of itself and of each org (`/status`, the status page): the data types,
 * and how one org's report turns into its status. Pure.
 */
import type { ResolvedDialect } from '../core/dialect.ts';
import { type DriftSeen, recentDrifts } from '../core/plan.ts';
import type { HealthLevel, OrgState } from './daemon-health.ts';
import type { NotifyStatus } from '../notify/notify-policy.ts';
import type { WindowReport } from '../core/windows.ts';
import type {
  ArchiveReport,
  ChangeReport,
  OrgReport,
  PolicyDocumentReport,
  ProblemReport,
} from '../core/report.ts';

/** At most this many pending changes are listed per org; `pending` counts them all. */
export const MAX_PENDING_CHANGES = 50;

/** At most this many unmanaged environments are named per org; `unmanaged` counts them all. */
export const MAX_UNMANAGED_NAMES = 200;

/** At most this many managed environments are listed per org; `environmentCount` counts them all. */
export const MAX_ENVIRONMENT_ROWS = 500;

export type { HealthLevel, OrgState } from './daemon-health.ts';
export { healthLevel, orgState } from './daemon-health.ts';

/** A managed environment as the status shows it: where it stands after the last pass. */
export interface EnvironmentRow {
  readonly name: string;
  readonly type: string;
  readonly state: 'synced' | 'pending' | 'drifted' | 'failed' | 'not converged';
}

/** What `/status` says of one org. */
export interface OrgStatus {
  status: 'ok' | 'invalid' | 'failed' | 'pending';
  /** ISO time of the last pass that left the org without error. */
  lastSuccess: string | null;
  lastAttempt: string | null;
  lastError: { message: string; at: string; errors?: ProblemReport[] } | null;
  /** Changes still pending after the last pass (create, update, unverified not applied). */
  pending: number;
  /**
   * The first pending changes in name order (at most MAX_PENDING_CHANGES): environment, action,
   * the fields it changes, its result (planned, failed, not-converged) and error.
   */
  pendingChanges: ChangeReport[];
  /** Policy document uploads that did not go through in the last pass; absent when none. */
  pendingPolicyDocuments?: PolicyDocumentReport[];
  /**
   * The last drifts found (core/drift.ts), newest first, at most MAX_RECENT_DRIFTS: per field, the
   * environment, the value the service held, the one declared, and when the pass found it.
   */
  recentDrift: DriftSeen[];
  unmanaged: number;
  /** The unmanaged environments by name, in name order (at most MAX_UNMANAGED_NAMES). */
  unmanagedNames: string[];
  /**
   * Under `prune: true`: the archives the last pass did not carry out (planned, or failed with
   * why, the mass-archive guard's refusal included); absent when none.
   */
  pendingArchives?: ArchiveReport[];
  /** Its manifests say `suspend: true`: read and planned, nothing sent. */
  suspended: boolean;
  /** Its managed environments, in name order (the first MAX_ENVIRONMENT_ROWS), with their state. */
  environments: EnvironmentRow[];
  /** Failed passes in a row (apply or listing), driving the backoff. */
  failures: number;
  /** While backing off: the earliest time the org is tried again. */
  nextAttemptAt: string | null;
}

/** How a pass ended: every org reconciled, some failed or invalid, or the pass itself failed. */
export type PassVerdict = 'success' | 'partial' | 'error';

/** What `/status` says of the last pass. */
export interface LastPass {
  startedAt: string;
  finishedAt: string;
  /** The pass's own work, without `settleWaitMs`. */
  durationMs: number;
  /** Time the pass waited for files edited in place to settle. */
  settleWaitMs: number;
  result: PassVerdict;
  trigger: string[];
  error?: string;
  /**
   * Every org of the pass failed for one cause (core/common-failure.ts): it, once, with what to
   * check; each org's own error stays in `orgs`.
   */
  failure?: {
    kind: string;
    code: string;
    host?: string;
    orgs: number;
    message: string;
    hint: string;
  };
}

/** What `/status` answers. */
export interface DaemonStatus {
  revision: string | null;
  manifests: string;
  ready: boolean;
  passes: number;
  lastPass: LastPass | null;
  passRunning: boolean;
  shard: { index: number; count: number } | null;
  /** Manifest problems that belong to no org. */
  errors: ProblemReport[];
  /** The state file, and why its last write failed (null once a write succeeds). */
  stateFile: { path: string | null; writeError: string | null };
  /** The API dialect the last listing resolved (`--api-dialect`); null before any. */
  dialect: ResolvedDialect | null;
  /** `observe` (`--observe`: nothing is ever sent) or `normal`. */
  mode: 'normal' | 'observe';
  /** The sync windows' state now (`--sync-window`); null without windows. */
  window: WindowReport | null;
  /** How the daemon is doing, in one word (healthLevel), and why when it is not healthy. */
  health: { level: HealthLevel; reason: string | null };
  /**
   * Each org, with where its token came from (`tokenSource`): `token-dir:ORG` (its file in
   * `--token-dir`), `token-file`, `env ENVSYNC_TOKEN` or `emulator`; null when it has none.
   */
  orgs: Record<string, OrgStatus & { state: OrgState; tokenSource: string | null }>;
  /** With --notify-url: each receiver (scheme and host only) and how deliveries fared. */
  notifications?: NotifyStatus;
}

/**
 * The problem most likely to explain the others: a key written wrong (an unknown key with a
 * suggestion) before what it leaves missing (a required key absent), else the first.
 */
export function likeliestCause(problems: readonly ProblemReport[]): ProblemReport | undefined {
  return problems.find((p) => p.message.includes('(did you mean ')) ?? problems[0];
}

/** Summarizes an org report as the one-line reason it failed, if it did. */
export function orgErrorMessage(report: OrgReport): string | undefined {
  if (report.status === 'invalid') {
    const first = likeliestCause(report.errors);
    return `invalid manifests (${report.errors.length} problem${report.errors.length === 1 ? '' : 's'})${first ? `: ${first.file}:${first.line}:${first.column} ${first.path ? `${first.path}: ` : ''}${first.message}` : ''}`;
  }
  if (report.error !== undefined) return report.error;
  const failed = report.changes.filter(
    (c) => c.result === 'failed' || c.result === 'not-converged',
  );
  const uploads = (report.policyDocuments ?? []).filter(
    (d) => d.result === 'failed' || d.result === 'not-converged',
  );
  const archives = (report.archives ?? []).filter(
    (a) => a.result === 'failed' || a.result === 'not-converged',
  );
  if (failed.length === 0 && uploads.length === 0 && archives.length === 0) return undefined;
  // The guard refuses every archive of the org with the same message: said once.
  const archiveErrors = [
    ...new Set(
      archives.map((a) =>
        a.error?.startsWith('not archived: ') === true
          ? a.error
          : `${a.name}: archive ${a.result}${a.error ? ` (${a.error})` : ''}`,
      ),
    ),
  ];
  return [
    ...uploads.map(
      (d) => `policy document ${d.name}: ${d.result}${d.error ? ` (${d.error})` : ''}`,
    ),
    ...failed.map((c) => `${c.name}: ${c.result}${c.error ? ` (${c.error})` : ''}`),
    ...archiveErrors,
  ].join('; ');
}

/**
 * What `/status` says of an org after a pass: its outcome, when it last succeeded, what is
 * pending, and its backoff. An invalid org is left alone, so what was pending stays pending.
 */
export function orgStatusAfter(
  report: OrgReport,
  previous: OrgStatus | undefined,
  now: number,
  backoff: { readonly failures: number; readonly nextAttemptAt: number } | undefined,
  /** The org's declared environments' names and types (the daemon's snapshot). */
  types?: readonly (readonly [string, string])[],
): OrgStatus {
  const at = new Date(now).toISOString();
  const message = orgErrorMessage(report);
  const invalid = report.status === 'invalid';
  const uploads = invalid
    ? (previous?.pendingPolicyDocuments ?? [])
    : (report.policyDocuments ?? []).filter((d) => d.result !== 'applied').map((d) => ({ ...d }));
  const archives = invalid
    ? (previous?.pendingArchives ?? [])
    : (report.archives ?? []).filter((a) => a.result !== 'applied').map((a) => ({ ...a }));
  return {
    status: report.status,
    lastSuccess: report.status === 'ok' ? at : (previous?.lastSuccess ?? null),
    lastAttempt: at,
    lastError:
      message === undefined
        ? null
        : { message, at, ...(report.errors.length > 0 ? { errors: [...report.errors] } : {}) },
    pending: invalid
      ? (previous?.pending ?? 0)
      : report.changes.filter((c) => c.result !== 'applied').length,
    pendingChanges: invalid
      ? (previous?.pendingChanges ?? [])
      : report.changes
          .filter((c) => c.result !== 'applied')
          .slice(0, MAX_PENDING_CHANGES)
          .map((c) => ({ ...c })),
    ...(uploads.length === 0 ? {} : { pendingPolicyDocuments: uploads }),
    ...(archives.length === 0 ? {} : { pendingArchives: archives }),
    recentDrift: invalid
      ? [...(previous?.recentDrift ?? [])]
      : recentDrifts(previous?.recentDrift ?? [], previous?.pendingChanges ?? [], report, at),
    unmanaged: invalid ? (previous?.unmanaged ?? 0) : report.unmanaged.length,
    suspended: invalid ? (previous?.suspended ?? false) : report.suspended === true,
    environments:
      invalid || types === undefined
        ? [...(previous?.environments ?? [])]
        : environmentRows(types, report),
    unmanagedNames: invalid
      ? [...(previous?.unmanagedNames ?? [])]
      : report.unmanaged.slice(0, MAX_UNMANAGED_NAMES),
    failures: backoff?.failures ?? 0,
    nextAttemptAt: backoff === undefined ? null : new Date(backoff.nextAttemptAt).toISOString(),
  };
}

/**
 * Each declared environment's state after a pass: its change's result, or synced. When the org
 * failed as a whole (its listing refused, say), an environment with no change and not seen
 * unchanged was never compared: failed, not synced.
 */
function environmentRows(
  types: readonly (readonly [string, string])[],
  report: OrgReport,
): EnvironmentRow[] {
  const changes = new Map(report.changes.map((change) => [change.name, change]));
  const unchanged = new Set(report.unchanged);
  return types.map(([name, type]) => {
    const change = changes.get(name);
    const state: EnvironmentRow['state'] =
      change === undefined && report.error !== undefined && !unchanged.has(name)
        ? 'failed'
        : change === undefined || change.result === 'applied'
          ? 'synced'
          : change.result === 'failed'
            ? 'failed'
            : change.result === 'not-converged'
              ? 'not converged'
              : change.cause === 'drift'
                ? 'drifted'
                : 'pending';
    return { name, type, state };
  });
}
