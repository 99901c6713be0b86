import type { CommonFailure, FailureCause } from './common-failure.ts';
import type { ResolvedDialect } from './dialect.ts';
import type { ChangeAction, ChangeCause, FieldDiffs, FieldName, OrgPlan } from './model.ts';
import type { PolicyDocumentAction, PolicyDocumentFields } from './policy-documents.ts';
import type { WindowReport } from './windows.ts';
import type { OwnedBy, PolicyRequests, TagRequests } from './model.ts';

/** The versioned report of one run: what `--output json` prints (documented in docs/cli.md). */
export const REPORT_VERSION = 1;

/** The words for a field the listing does not show and the state file has no record of. */
export const NOT_SHOWN = '(not shown by the service)';

export type ChangeResult = 'planned' | 'applied' | 'failed' | 'not-converged';

export interface ProblemReport {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly path: string;
  readonly message: string;
}

export interface ChangeReport {
  readonly action: ChangeAction;
  /** `drift`: the service moved while the manifest stayed as last applied (core/drift.ts). */
  readonly cause: ChangeCause;
  readonly name: string;
  readonly fields: FieldDiffs;
  /**
   * In the kosli dialect, the policies the change attaches and detaches through their endpoint
   * (`fields.policies` still shows the whole set, from and to); absent when it sends none.
   */
  readonly policies?: PolicyRequests;
  /** The tags the change sets and removes through their endpoint; absent when it sends none. */
  readonly tags?: TagRequests;
  /** Fields the service does not show and the state file has no record of (`notShown` in `fields`). */
  readonly unknown?: readonly FieldName[];
  /**
   * Sent before without taking, and neither side moved since: a sync does not send it again (it
   * reports it as not converged), so it is not a pending request.
   */
  readonly knownNotConverged?: true;
  /** A `rename`: the name the service had it under, renamed first (its history stays). */
  readonly renamedFrom?: string;
  /** A `create` declared `renamed_from` this name, which the service does not have either. */
  readonly renameNotFound?: string;
  readonly result: ChangeResult;
  readonly error?: string;
}

/**
 * One environment `prune` archives: one the org no longer declares and envsync owns (why in
 * `ownedBy`). `failed` with the guard's message when the org had more than `--max-archive`.
 */
export interface ArchiveReport {
  readonly name: string;
  /** Why envsync owns it, as checked when it was planned or sent; empty: it does not. */
  readonly ownedBy: readonly OwnedBy[];
  /** `not-converged`: the service answered the archive, and still lists the environment. */
  readonly result: 'planned' | 'applied' | 'failed' | 'not-converged';
  readonly error?: string;
}

/** One upload of a policy document (the `kosli` dialect): planned, applied or failed. */
export interface PolicyDocumentReport {
  readonly action: PolicyDocumentAction;
  readonly name: string;
  /** The latest version the service held when planned; null when it held none. */
  readonly version: number | null;
  /** What differs: `content` as sha256 digests, `description` as text. */
  readonly fields: PolicyDocumentFields;
  /** `not-converged`: the service answered the upload, and does not hold what was sent. */
  readonly result: 'planned' | 'applied' | 'failed' | 'not-converged';
  readonly error?: string;
}

export type OrgStatus = 'ok' | 'invalid' | 'failed';

export interface OrgReport {
  readonly org: string;
  readonly status: OrgStatus;
  readonly changes: readonly ChangeReport[];
  readonly unchanged: readonly string[];
  /** Listed environments the manifests do not declare, left alone (prune does not own them). */
  readonly unmanaged: readonly string[];
  /**
   * The org's manifests say `suspend: true`: it was read and planned, and nothing was sent to it
   * (its changes are `planned`, and they do not count as pending for `--detailed-exitcode`).
   */
  readonly suspended?: true;
  /** Present when the org's manifests say `prune: true`: what it archives, last. */
  readonly archives?: readonly ArchiveReport[];
  readonly errors: readonly ProblemReport[];
  /** Why the org failed as a whole (listing refused, token refused, ...). */
  readonly error?: string;
  /** When `error` is about the API's address or the token, not the org (core/common-failure.ts). */
  readonly cause?: FailureCause;
  /** Time its requests waited because the service throttled them (Retry-After), when any. */
  readonly throttledMs?: number;
  /**
   * The org's policy documents, when its manifests declare or attach any (the `kosli` dialect):
   * the uploads, the names unchanged, and those only the service has (never deleted: not managed).
   */
  readonly policyDocuments?: readonly PolicyDocumentReport[];
  readonly policyDocumentsUnchanged?: readonly string[];
  readonly policyDocumentsNotManaged?: readonly string[];
}

/** Counts of policy document uploads, in a summary that has any. */
export interface PolicyDocumentSummary {
  create: number;
  update: number;
  applied: number;
  failed: number;
}

export interface Summary {
  create: number;
  update: number;
  unverified: number;
  rename: number;
  /** Environments `prune` archives (planned, applied or failed). */
  archive: number;
  unchanged: number;
  unmanaged: number;
  applied: number;
  failed: number;
  notConverged: number;
  invalidOrgs: number;
  /** Orgs whose manifests say `suspend: true`: planned, nothing sent. */
  suspendedOrgs: number;
  /** Changes that are drift (core/drift.ts), and of those, the ones applied: set back. */
  drift: number;
  driftHealed: number;
  /** Time requests waited because the service throttled them (Retry-After), wall clock. */
  throttledMs?: number;
  /** Policy document uploads, when some org has one. */
  policyDocuments?: PolicyDocumentSummary;
}

export interface RunReport {
  readonly version: typeof REPORT_VERSION;
  readonly dryRun: boolean;
  /** The API dialect the run used, once a listing was read (`--api-dialect`). */
  readonly dialect?: ResolvedDialect;
  readonly summary: Summary;
  /** Every org failed for one cause (core/common-failure.ts): the outputs say it once. */
  readonly failure?: CommonFailure;
  readonly orgs: readonly OrgReport[];
  /** Manifest problems that belong to no org (unreadable files, documents without an org). */
  readonly errors: readonly ProblemReport[];
  /**
   * With sync windows (`--sync-window`): whether changes could be sent when the run started, and
   * when that changes (ISO 8601 UTC). A sync outside them plans only (`dryRun` is true).
   */
  readonly window?: WindowReport;
}

/** The report of an org that was planned (and maybe applied): plan plus per-change results. */
export function orgReportFromPlan(
  plan: OrgPlan,
  results: ReadonlyMap<
    string,
    { readonly result: ChangeResult; readonly error?: string | undefined }
  >,
  error?: string,
  /** The archives' outcomes, each with the ownership checked when it was sent. */
  archived?: ReadonlyMap<
    string,
    {
      readonly result: ChangeResult;
      readonly error?: string | undefined;
      readonly ownedBy?: readonly OwnedBy[];
    }
  >,
): OrgReport {
  const changes = plan.changes.map((change): ChangeReport => {
    const outcome = results.get(change.name) ?? { result: 'planned' as const };
    return {
      action: change.action,
      cause: change.cause,
      name: change.name,
      fields: change.fields,
      ...(change.requests.policies === undefined ? {} : { policies: change.requests.policies }),
      ...(change.requests.tags === undefined ? {} : { tags: change.requests.tags }),
      ...(change.unknownFields.length > 0 ? { unknown: change.unknownFields } : {}),
      ...(change.knownNotConverged ? { knownNotConverged: true as const } : {}),
      ...(change.renamedFrom === undefined ? {} : { renamedFrom: change.renamedFrom }),
      ...(change.renameNotFound === undefined ? {} : { renameNotFound: change.renameNotFound }),
      result: outcome.result,
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    };
  });
  const archives = plan.archives?.map((archive): ArchiveReport => {
    const outcome = archived?.get(archive.name) ?? { result: 'planned' as const };
    return {
      name: archive.name,
      ownedBy: archived?.get(archive.name)?.ownedBy ?? archive.ownedBy,
      result: outcome.result,
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    };
  });
  const failed =
    error !== undefined ||
    changes.some((c) => c.result === 'failed' || c.result === 'not-converged') ||
    (archives ?? []).some((a) => a.result === 'failed' || a.result === 'not-converged');
  return {
    org: plan.org,
    status: failed ? 'failed' : 'ok',
    changes,
    unchanged: plan.unchanged,
    unmanaged: plan.unmanaged,
    ...(archives === undefined ? {} : { archives }),
    errors: [],
    ...(error === undefined ? {} : { error }),
  };
}

/** Adds up a run's orgs. */
export function summarize(orgs: readonly OrgReport[]): Summary {
  const summary: Summary = {
    create: 0,
    update: 0,
    unverified: 0,
    rename: 0,
    archive: 0,
    unchanged: 0,
    unmanaged: 0,
    applied: 0,
    failed: 0,
    notConverged: 0,
    invalidOrgs: 0,
    suspendedOrgs: 0,
    drift: 0,
    driftHealed: 0,
  };
  for (const org of orgs) {
    if (org.status === 'invalid') summary.invalidOrgs++;
    if (org.suspended === true) summary.suspendedOrgs++;
    summary.unchanged += org.unchanged.length;
    summary.unmanaged += org.unmanaged.length;
    for (const change of org.changes) {
      summary[change.action]++;
      if (change.result === 'applied') summary.applied++;
      else if (change.result === 'failed') summary.failed++;
      else if (change.result === 'not-converged') summary.notConverged++;
      if (change.cause === 'drift') {
        summary.drift++;
        if (change.result === 'applied') summary.driftHealed++;
      }
    }
    for (const archive of org.archives ?? []) {
      summary.archive++;
      if (archive.result === 'applied') summary.applied++;
      else if (archive.result === 'failed') summary.failed++;
      else if (archive.result === 'not-converged') summary.notConverged++;
    }
    for (const upload of org.policyDocuments ?? []) {
      const counts = (summary.policyDocuments ??= { create: 0, update: 0, applied: 0, failed: 0 });
      counts[upload.action]++;
      if (upload.result === 'applied') counts.applied++;
      else if (upload.result === 'failed') counts.failed++;
      else if (upload.result === 'not-converged') summary.notConverged++;
    }
  }
  return summary;
}

/** True when the run found or met an error: the exit code is then 1. */
export function hasErrors(report: RunReport): boolean {
  return report.errors.length > 0 || report.orgs.some((org) => org.status !== 'ok');
}

/**
 * True when a sync would send a request: a change pending (create, update, rename or unverified)
 * that is not one known not to take, an archive, or an upload of a policy document.
 */
export function hasPendingChanges(report: RunReport): boolean {
  return report.orgs.some(
    (org) =>
      org.suspended !== true &&
      (org.changes.some((change) => change.knownNotConverged !== true) ||
        (org.archives?.length ?? 0) > 0 ||
        (org.policyDocuments?.length ?? 0) > 0),
  );
}

/**
 * The exit code of a plan or sync: 1 when the run found or met an error; with
 * `--detailed-exitcode` (`detailed`), 2 for a dry run after which a sync would send a request;
 * else 0.
 */
export function exitCode(
  report: RunReport,
  { detailed }: { readonly detailed: boolean },
): 0 | 1 | 2 {
  if (hasErrors(report)) return 1;
  if (detailed && report.dryRun && hasPendingChanges(report)) return 2;
  return 0;
}
