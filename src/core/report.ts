import type { ResolvedDialect } from './dialect.ts';
import type {
  ChangeAction,
  ChangeCause,
  FieldDiffs,
  FieldName,
  OrgPlan,
  OwnedBy,
  PolicyRequests,
  TagRequests,
} from './model.ts';
import type { PolicyDocumentAction, PolicyDocumentFields } from './policy-documents.ts';
import type { WindowReport } from './windows.ts';
import { compareNames } from './names.ts';
import { type Failure, unreachable } from './request-failure.ts';

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

/**
 * Two rounds of one org's pass as one report: when an org's round fails only on transient errors
 * the pass runs it again (engine/reconcile.ts), and what the first round did stays done.
 */

/**
 * Merges two rounds of one org's pass: what the first round applied stays applied (the second
 * round then sees it unchanged); everything else is as the later round found it.
 */
export function mergeOrgRounds(earlier: OrgReport, later: OrgReport): OrgReport {
  const laterNames = new Set(later.changes.map((c) => c.name));
  const kept = earlier.changes.filter(
    (c) => (c.result === 'applied' || c.result === 'not-converged') && !laterNames.has(c.name),
  );
  const keptNames = new Set(kept.map((c) => c.name));
  const changes = [...kept, ...later.changes].sort((a, b) => compareNames(a.name, b.name));
  const documents = mergePolicyDocuments(earlier, later);
  const archives = mergeArchives(earlier, later);
  const failed =
    later.error !== undefined ||
    changes.some((c) => c.result === 'failed' || c.result === 'not-converged') ||
    (documents?.changes ?? []).some((d) => d.result === 'failed' || d.result === 'not-converged') ||
    (archives ?? []).some((a) => a.result === 'failed' || a.result === 'not-converged');
  return {
    ...later,
    status: later.status === 'invalid' ? 'invalid' : failed ? 'failed' : 'ok',
    changes,
    unchanged: later.unchanged.filter((name) => !keptNames.has(name)),
    ...(archives === undefined ? {} : { archives }),
    ...(documents === undefined
      ? {}
      : {
          policyDocuments: documents.changes,
          policyDocumentsUnchanged: documents.unchanged,
        }),
  };
}

/** The archives of two rounds: what the first archived stays archived (the later one no longer lists it). */
function mergeArchives(earlier: OrgReport, later: OrgReport): ArchiveReport[] | undefined {
  if (later.archives === undefined) return earlier.archives?.slice();
  const laterNames = new Set(later.archives.map((a) => a.name));
  const kept = (earlier.archives ?? []).filter(
    (a) => (a.result === 'applied' || a.result === 'not-converged') && !laterNames.has(a.name),
  );
  return [...kept, ...later.archives].sort((a, b) => compareNames(a.name, b.name));
}

/** The policy documents of two rounds: what the first uploaded stays uploaded. */
function mergePolicyDocuments(
  earlier: OrgReport,
  later: OrgReport,
): { changes: PolicyDocumentReport[]; unchanged: string[] } | undefined {
  if (earlier.policyDocuments === undefined || later.policyDocuments === undefined)
    return undefined;
  const laterNames = new Set(later.policyDocuments.map((d) => d.name));
  const kept = earlier.policyDocuments.filter(
    (d) => (d.result === 'applied' || d.result === 'not-converged') && !laterNames.has(d.name),
  );
  const keptNames = new Set(kept.map((d) => d.name));
  return {
    changes: [...kept, ...later.policyDocuments].sort((a, b) => compareNames(a.name, b.name)),
    unchanged: (later.policyDocumentsUnchanged ?? []).filter((name) => !keptNames.has(name)),
  };
}

/**
 * One reason for every org. When every org that was sent a request failed the same way, and that
 * way is about the API's address or the token rather than about any org (a refused connection, a
 * host name that does not resolve, a certificate that cannot be verified, the token refused), the
 * outputs say it once, with what to check, instead of once per org: a hundred identical lines
 * hide the one thing to fix. Pure.
 */

/** The reasons an org can fail for that are not the org's own. */
export type FailureCauseKind = 'refused' | 'dns' | 'tls' | 'unauthorized' | 'forbidden';

/** Why an org failed as a whole, when the reason is the API's address or the token. */
export interface FailureCause {
  readonly kind: FailureCauseKind;
  /** ECONNREFUSED, ENOTFOUND, EAI_AGAIN or a certificate's code; `401` or `403` for the token. */
  readonly code: string;
  /** The API's address (host:port) the connection was to; absent for the token. */
  readonly host?: string;
}

/** The cause of a request's failure, when it is one of those above. */
export function failureCause(
  failure: (Failure & { readonly host?: string | undefined }) | undefined,
): FailureCause | undefined {
  if (failure === undefined) return undefined;
  if (failure.kind === 'auth') {
    if (failure.status === 401) return { kind: 'unauthorized', code: '401' };
    if (failure.status === 403) return { kind: 'forbidden', code: '403' };
    return undefined;
  }
  const kind = unreachable(failure);
  if (kind === undefined || failure.code === undefined) return undefined;
  return {
    kind,
    code: failure.code,
    ...(failure.host === undefined ? {} : { host: failure.host }),
  };
}

/** Every org failed for one cause: the orgs, and the cause said once with what to check. */
export interface CommonFailure extends FailureCause {
  /** The orgs that failed so (every org sent a request). */
  readonly orgs: readonly string[];
  readonly message: string;
  readonly hint: string;
}

/** What the decision reads of an org's outcome. */
export interface OrgOutcome {
  readonly org: string;
  readonly status: 'ok' | 'invalid' | 'failed';
  readonly cause?: FailureCause | undefined;
}

function sameCause(a: FailureCause | undefined, b: FailureCause): boolean {
  return a !== undefined && a.kind === b.kind && a.code === b.code && a.host === b.host;
}

/**
 * The cause every org failed for, when there is one: every org that was sent a request (invalid
 * ones are not) failed, and for the same cause. A 403 counts only on two orgs or more: one org
 * refused is most likely that org's permission, which its own error says.
 */
export function commonFailure(orgs: readonly OrgOutcome[]): CommonFailure | undefined {
  const sent = orgs.filter((o) => o.status !== 'invalid');
  const first = sent[0]?.cause;
  if (first === undefined) return undefined;
  if (!sent.every((o) => o.status === 'failed' && sameCause(o.cause, first))) return undefined;
  if (first.kind === 'forbidden' && sent.length < 2) return undefined;
  const names = sent.map((o) => o.org);
  const who =
    names.length === 1
      ? `org ${names[0]} failed`
      : `all ${names.length} orgs${sent.length < orgs.length ? ' with valid manifests' : ''} failed the same way`;
  return {
    ...first,
    orgs: names,
    message: `${who}: ${reasonOf(first)}`,
    hint: HINTS[first.kind],
  };
}

/** What went wrong, in the words a per-org error would use. */
const REASONS: Record<FailureCauseKind, (cause: FailureCause, host: string) => string> = {
  refused: (cause, host) => `the API at ${host} refused the connection (${cause.code})`,
  dns: (cause, host) =>
    cause.code === 'ENOTFOUND'
      ? `the API's host name ${hostName(host)} does not resolve (${cause.code})`
      : `the API's host name ${hostName(host)} could not be resolved (${cause.code})`,
  tls: (cause, host) =>
    `the TLS certificate of the API at ${host} cannot be verified (${cause.code})`,
  unauthorized: (cause) => `the token was refused (${cause.code})`,
  forbidden: (cause) => `the token was refused (${cause.code})`,
};

function reasonOf(cause: FailureCause): string {
  return REASONS[cause.kind](cause, cause.host ?? 'the --api-url address');
}

/** What to check. */
const HINTS: Record<FailureCauseKind, string> = {
  refused:
    'Is --api-url right? Nothing accepts connections at that address: a wrong host or port, or the service is down.',
  dns: 'Is --api-url right? Check the host name, and that DNS resolves it where envsync runs.',
  tls: 'Is --api-url right? For a service behind a private CA, add the CA with --ca-file (verification cannot be turned off).',
  unauthorized:
    'Is the token for this API? Check ENVSYNC_TOKEN, --token-file or --token-dir, and --api-url.',
  forbidden: 'Is the token for this API? It is allowed none of these orgs.',
};

/** `host` of `host:port` (an IPv6 address keeps its brackets). */
function hostName(address: string): string {
  return address.replace(/:\d+$/, '');
}

/**
 * Whether a cause is never about one org (the address, or a token the API does not know), so that
 * a log line per org would only repeat it: a 403 may be that org's permission, and is not.
 */
export function neverAboutTheOrg(cause: FailureCause | undefined): boolean {
  return cause !== undefined && cause.kind !== 'forbidden';
}

/**
 * The orgs that failed for a cause never about the org, one line per cause (there is one, unless
 * the address changed between two requests), for a pass some of whose orgs did not fail so; no
 * hint, as the other orgs show the address and token can be right.
 */
export function failuresSaidOnce(orgs: readonly OrgOutcome[]): string[] {
  const groups: { cause: FailureCause; orgs: string[] }[] = [];
  for (const { org, status, cause } of orgs) {
    if (status !== 'failed' || cause === undefined || !neverAboutTheOrg(cause)) continue;
    const group = groups.find((g) => sameCause(cause, g.cause));
    if (group === undefined) groups.push({ cause, orgs: [org] });
    else group.orgs.push(org);
  }
  return groups.map(
    ({ cause, orgs: names }) =>
      `${names.length === 1 ? `org ${names[0]}` : `${names.length} orgs`} failed: ${reasonOf(cause)}${names.length === 1 ? '' : ` (${someNames(names)})`}`,
  );
}

/** Names for a line of text: all of them up to `max`, then how many more. */
export function someNames(names: readonly string[], max = 20): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

/**
 * Whether an org's own section may be left out of an output that says `failure` once at its top:
 * the org is one of those it names, and has nothing else to show.
 */
export function saidOnce(
  failure: CommonFailure | undefined,
  org: {
    readonly org: string;
    readonly changes: readonly unknown[];
    readonly errors: readonly unknown[];
    readonly archives?: readonly unknown[] | undefined;
    readonly policyDocuments?: readonly unknown[] | undefined;
  },
): boolean {
  return (
    failure !== undefined &&
    failure.orgs.includes(org.org) &&
    org.changes.length === 0 &&
    org.errors.length === 0 &&
    (org.archives ?? []).length === 0 &&
    (org.policyDocuments ?? []).length === 0
  );
}
