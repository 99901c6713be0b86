/**
 * What the daemon says of itself and of each org (`/status`, the status page; docs/daemon.md says
 * what each field means), and how an org's report becomes its status. Pure.
 */
import type { ResolvedDialect } from '../core/dialect.ts';
import type { Compliance } from '../core/model.ts';
import { recentDrifts, type DriftSeen } from '../core/plan.ts';
import { formatProblem } from '../core/validation.ts';
import type { WindowReport } from '../core/windows.ts';
import type { NotifyStatus } from '../notify/delivery.ts';
import type {
  ArchiveReport,
  ChangeReport,
  ChangeResult,
  CommonFailure,
  OrgReport,
  PolicyDocumentReport,
  ProblemReport,
} from '../core/report.ts';

/** Per org, the most pending changes listed, unmanaged environments named, environments listed. */
export const MAX_PENDING_CHANGES = 50;
export const MAX_UNMANAGED_NAMES = 200;
export const MAX_ENVIRONMENT_ROWS = 500;

/** Where a managed environment stands after the last pass, in the order a card counts them. */
export const ROW_STATES = [
  'synced',
  'pending',
  'drifted',
  'failed',
  'not converged',
  'unknown',
] as const;

/** `unknown`: never compared (its org's listing failed, or it lists a placeholder for it). */
export interface EnvironmentRow {
  readonly name: string;
  readonly type: string;
  readonly state: (typeof ROW_STATES)[number];
  /** As the last listing showed it; absent when not shown. */
  readonly compliance?: Compliance;
}

/** What `/status` says of one org. */
export interface OrgStatus {
  status: 'ok' | 'invalid' | 'failed' | 'pending';
  lastSuccess: string | null;
  lastAttempt: string | null;
  lastError: { message: string; at: string; errors?: ProblemReport[] } | null;
  /** Changes not applied after the last pass; the first MAX_PENDING_CHANGES are listed. */
  pending: number;
  pendingChanges: ChangeReport[];
  /** Uploads and (under `prune`) archives the last pass did not carry out; absent when none. */
  pendingPolicyDocuments?: PolicyDocumentReport[];
  pendingArchives?: ArchiveReport[];
  recentDrift: DriftSeen[];
  unmanaged: number;
  unmanagedNames: string[];
  suspended: boolean;
  environments: EnvironmentRow[];
  /** Failed passes in a row, and while backing off the earliest next attempt. */
  failures: number;
  nextAttemptAt: string | null;
}

/** How a pass ended: every org reconciled, some or every org failed or invalid, or the pass itself. */
export type PassVerdict = 'success' | 'partial' | 'failed' | 'error';

export interface LastPass {
  startedAt: string;
  finishedAt: string;
  /** The pass's own work, without the time it waited for files to settle. */
  durationMs: number;
  settleWaitMs: number;
  result: PassVerdict;
  trigger: string[];
  error?: string;
  /** Every org of the pass failed for one cause: it, once. */
  failure?: Omit<CommonFailure, 'orgs'> & { orgs: number };
}

/** Can envsync read, plan and send (`healthLevel`, `orgHealthAndSync`); worst first. */
export const HEALTH_LEVELS = ['failing', 'degraded', 'healthy'] as const;
export type HealthLevel = (typeof HEALTH_LEVELS)[number];

/** Does the service hold what the manifests declare (`orgHealthAndSync`); worst first. */
export const SYNC_STATES = [
  'drifted',
  'out-of-sync',
  'unknown',
  'waiting',
  'suspended',
  'synced',
] as const;
export type SyncState = (typeof SYNC_STATES)[number];
export type Standing = { health: HealthLevel; sync: SyncState };

/** What an org's card says: one word that is true of it now (`orgState`). */
export type OrgState = (typeof ROW_STATES)[number] | 'suspended' | 'invalid' | 'waiting for window';

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
  stateFile: { path: string | null; writeError: string | null };
  dialect: ResolvedDialect | null;
  mode: 'normal' | 'observe';
  window: WindowReport | null;
  health: { level: HealthLevel; reason: string | null };
  /** The worst org's sync; unknown while there is no org. */
  sync: SyncState;
  /** Each org, with where its token came from (`token-dir:ORG`, `token-file`, ...; null: none). */
  orgs: Record<string, OrgStatus & Standing & { state: OrgState; tokenSource: string | null }>;
  notifications?: NotifyStatus;
}

const notDone = (result: string) => result === 'failed' || result === 'not-converged';

/**
 * An org's report as the one-line reason it failed, if it did. An invalid org is summed up by the
 * problem most likely to explain the others: a key written wrong before what it leaves missing.
 */
export function orgErrorMessage(report: OrgReport): string | undefined {
  if (report.status === 'invalid') {
    const { errors } = report;
    const first = errors.find((p) => p.message.includes('(did you mean ')) ?? errors[0];
    const count = `${errors.length} problem${errors.length === 1 ? '' : 's'}`;
    return `invalid manifests (${count})${first ? `: ${formatProblem(first)}` : ''}`;
  }
  if (report.error !== undefined) return report.error;
  const why = (name: string, result: string, error?: string) =>
    `${name}: ${result}${error ? ` (${error})` : ''}`;
  const lines = [
    ...(report.policyDocuments ?? [])
      .filter((d) => notDone(d.result))
      .map((d) => why(`policy document ${d.name}`, d.result, d.error)),
    ...report.changes.filter((c) => notDone(c.result)).map((c) => why(c.name, c.result, c.error)),
    // The guard refuses every archive of the org with the same message: said once.
    ...new Set(
      (report.archives ?? [])
        .filter((a) => notDone(a.result))
        .map((a) =>
          a.error?.startsWith('not archived: ') === true
            ? a.error
            : why(a.name, `archive ${a.result}`, a.error),
        ),
    ),
  ];
  return lines.length === 0 ? undefined : lines.join('; ');
}

/** An org never reconciled yet. */
const NOTHING_YET = {
  pending: 0,
  pendingChanges: [],
  recentDrift: [],
  unmanaged: 0,
  suspended: false,
  environments: [],
  unmanagedNames: [],
} satisfies Partial<OrgStatus>;

/** What `/status` says of an org after a pass; `types`: its environments' names and types. */
export function orgStatusAfter(
  report: OrgReport,
  previous: OrgStatus | undefined,
  now: number,
  backoff: { readonly failures: number; readonly nextAttemptAt: number } | undefined,
  types?: readonly (readonly [string, string])[],
): OrgStatus {
  const at = new Date(now).toISOString();
  const message = orgErrorMessage(report);
  const head = {
    status: report.status,
    lastSuccess: report.status === 'ok' ? at : (previous?.lastSuccess ?? null),
    lastAttempt: at,
    lastError:
      message === undefined
        ? null
        : { message, at, ...(report.errors.length > 0 ? { errors: [...report.errors] } : {}) },
  };
  const tail = {
    failures: backoff?.failures ?? 0,
    nextAttemptAt: backoff === undefined ? null : new Date(backoff.nextAttemptAt).toISOString(),
  };
  // An invalid org is left alone: what was pending stays pending.
  if (report.status === 'invalid')
    return { ...head, ...NOTHING_YET, ...previous, ...head, ...tail };
  const left = report.changes.filter((c) => c.result !== 'applied');
  const uploads = (report.policyDocuments ?? []).filter((d) => d.result !== 'applied');
  const archives = (report.archives ?? []).filter((a) => a.result !== 'applied');
  const { recentDrift = [], pendingChanges = [] } = previous ?? {};
  return {
    ...head,
    pending: left.length,
    pendingChanges: left.slice(0, MAX_PENDING_CHANGES),
    ...(uploads.length === 0 ? {} : { pendingPolicyDocuments: uploads }),
    ...(archives.length === 0 ? {} : { pendingArchives: archives }),
    recentDrift: recentDrifts(recentDrift, pendingChanges, report, at),
    unmanaged: report.unmanaged.length,
    suspended: report.suspended === true,
    environments: types === undefined ? (previous?.environments ?? []) : rows(types, report),
    unmanagedNames: report.unmanaged.slice(0, MAX_UNMANAGED_NAMES),
    ...tail,
  };
}

const ROW_STATE: Record<ChangeResult, EnvironmentRow['state']> = {
  applied: 'synced',
  planned: 'pending',
  failed: 'failed',
  'not-converged': 'not converged',
};

/**
 * Each declared environment's state: its change's result, or synced; unknown when the org failed
 * as a whole and the environment was never compared.
 */
function rows(types: readonly (readonly [string, string])[], report: OrgReport): EnvironmentRow[] {
  const changes = new Map(report.changes.map((change) => [change.name, change]));
  const unchanged = new Set(report.unchanged);
  const { unknown = [], compliance = {} } = report;
  return types.map(([name, type]) => {
    const change = changes.get(name);
    const state =
      change === undefined
        ? report.error !== undefined && !unchanged.has(name)
          ? 'unknown'
          : 'synced'
        : change.result === 'planned' && change.cause === 'drift'
          ? 'drifted'
          : ROW_STATE[change.result];
    const shown = Object.hasOwn(compliance, name) ? compliance[name] : undefined;
    const row = { name, type, state: unknown.includes(name) ? ('unknown' as const) : state };
    return shown === undefined ? row : { ...row, compliance: shown };
  });
}

/** The daemon's health level, and why when not healthy (docs/status-page.md, "Health levels"). */
export function healthLevel(
  lastPass: LastPass | null,
  unattributed: number,
  orgs: readonly (readonly [string, Pick<OrgStatus, 'status'>])[],
): DaemonStatus['health'] {
  const troubled = orgs.filter(([, org]) => org.status === 'invalid' || org.status === 'failed');
  if (lastPass?.result === 'error')
    return { level: 'failing', reason: `the last pass failed: ${lastPass.error ?? 'error'}` };
  if (orgs.length > 0 && troubled.length === orgs.length)
    return { level: 'failing', reason: `every org (${orgs.length}) is invalid or failed` };
  if (troubled.length > 0) {
    const names = troubled.map(([name]) => name);
    const some = `${names.slice(0, 5).join(', ')}${names.length > 5 ? ', ...' : ''}`;
    return {
      level: 'degraded',
      reason: `${troubled.length} of ${orgs.length} org(s) invalid or failed: ${some}`,
    };
  }
  if (unattributed > 0)
    return { level: 'degraded', reason: `${unattributed} manifest problem(s) belong to no org` };
  return { level: 'healthy', reason: null };
}

/** An org's state, given the daemon's mode and whether a sync window is open. */
export function orgState(
  org: OrgStatus,
  around: { readonly observe: boolean; readonly windowOpen: boolean },
): OrgState {
  if (org.status === 'invalid') return 'invalid';
  if (org.status === 'failed') {
    // Not converged when every change, archive and upload left was sent and did not take.
    const left = [
      ...org.pendingChanges,
      ...(org.pendingArchives ?? []),
      ...(org.pendingPolicyDocuments ?? []),
    ];
    const stuck = left.length > 0 && left.every((item) => item.result === 'not-converged');
    return stuck ? 'not converged' : 'failed';
  }
  if (org.pendingChanges.some((c) => c.cause === 'drift')) return 'drifted';
  if (org.suspended) return 'suspended';
  if (org.pending === 0) return 'synced';
  return around.observe || around.windowOpen ? 'pending' : 'waiting for window';
}

/**
 * An org's health (failing when nothing of the service could be read or planned, degraded when
 * some of what was sent failed) and sync, from its status and state (docs/status-page.md).
 */
export function orgHealthAndSync(org: OrgStatus, state: OrgState): Standing {
  const { pending, pendingArchives = [], pendingPolicyDocuments = [] } = org;
  const total = pending + pendingArchives.length + pendingPolicyDocuments.length;
  if (state === 'invalid' || (org.status === 'failed' && total === 0))
    return { health: 'failing', sync: 'unknown' };
  const health = org.status === 'failed' ? 'degraded' : 'healthy';
  const stays = state === 'drifted' || state === 'suspended' ? state : undefined;
  const waits = state === 'waiting for window' ? 'waiting' : undefined;
  return { health, sync: stays ?? waits ?? (total === 0 ? 'synced' : 'out-of-sync') };
}
