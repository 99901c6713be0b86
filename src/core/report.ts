/** The report of a run: what every output renders and `--output json` prints (docs/cli.md). */
import type { ResolvedDialect } from './dialect.ts';
import type { ArchivePlan, Change, ChangeRequests, FieldName, OrgPlan, OwnedBy } from './model.ts';
import type { PolicyDocumentChange } from './policy-documents.ts';
import type { WindowReport } from './windows.ts';
import { compareNames } from './names.ts';
import { type Failure, unreachable } from './request-failure.ts';

export const REPORT_VERSION = 1;

export const NOT_SHOWN = '(not shown by the service)';

export type ChangeResult = 'planned' | 'applied' | 'failed' | 'not-converged';

interface Outcome {
  readonly result: ChangeResult;
  readonly error?: string | undefined;
}

export interface ProblemReport {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly path: string;
  readonly message: string;
}

/** A change; `patch`, `policies` and `tags`: its requests beside the PUT. */
export interface ChangeReport
  extends
    Pick<Change, 'action' | 'cause' | 'name' | 'fields'>,
    Pick<ChangeRequests, 'patch' | 'policies' | 'tags'>,
    Outcome {
  /** The fields `notShown`. */
  readonly unknown?: readonly FieldName[];
  /** Sent before without taking, and neither side moved since: not a pending request. */
  readonly knownNotConverged?: true;
  readonly renamedFrom?: string;
  readonly renameNotFound?: string;
  /** `plan` asked the service about the new name (kosli): it was archived, or not asked. */
  readonly wasArchived?: true | 'not-checked';
  /** It detaches the environment's last policy. */
  readonly complianceBecomes?: 'unknown';
}

/** An archive, and why envsync owns it, as checked when it was planned or sent. */
export interface ArchiveReport extends ArchivePlan, Outcome {}

export interface PolicyDocumentReport
  extends Pick<PolicyDocumentChange, 'action' | 'name' | 'version' | 'fields'>, Outcome {}

export type OrgStatus = 'ok' | 'invalid' | 'failed';

export interface OrgReport extends Pick<OrgPlan, 'unknown' | 'compliance'> {
  readonly org: string;
  readonly status: OrgStatus;
  readonly changes: readonly ChangeReport[];
  readonly unchanged: readonly string[];
  readonly unmanaged: readonly string[];
  /** `suspend: true`: planned, nothing sent (its changes are not pending for an exit code). */
  readonly suspended?: true;
  /** Present under `prune: true`. */
  readonly archives?: readonly ArchiveReport[];
  readonly errors: readonly ProblemReport[];
  /** Declared keys the service retired or deprecated, when any. */
  readonly warnings?: readonly ProblemReport[];
  /** Why the org failed as a whole (listing refused, token refused, ...). */
  readonly error?: string;
  /** When `error` is about the API's address or the token, not the org. */
  readonly cause?: FailureCause;
  /** Time its requests waited because the service asked (Retry-After), when any. */
  readonly throttledMs?: number;
  /** When the manifests declare or attach policy documents. */
  readonly policyDocuments?: readonly PolicyDocumentReport[];
  readonly policyDocumentsUnchanged?: readonly string[];
  readonly policyDocumentsNotManaged?: readonly string[];
}

/** The summary's counts, in the order the JSON report shows them. */
const ZERO = {
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
  /** Changes that are drift, and of those, the ones applied. */
  drift: 0,
  driftHealed: 0,
};

export type Summary = { -readonly [K in keyof typeof ZERO]: number } & {
  throttledMs?: number;
  /** Requests answered 409 (a create of the same name in flight), each tried again. */
  conflicts?: number;
  /** When some org has an upload. */
  policyDocuments?: { create: number; update: number; applied: number; failed: number };
};

export interface RunReport {
  readonly version: typeof REPORT_VERSION;
  readonly dryRun: boolean;
  /** Once a listing was read. */
  readonly dialect?: ResolvedDialect;
  readonly summary: Summary;
  /** Every org failed for one cause: the outputs say it once. */
  readonly failure?: CommonFailure;
  readonly orgs: readonly OrgReport[];
  /** Manifest problems that belong to no org. */
  readonly errors: readonly ProblemReport[];
  /** With `--sync-window`: whether changes could be sent at the start (else `dryRun`). */
  readonly window?: WindowReport;
}

function fails(item: { readonly result: string }): boolean {
  return item.result === 'failed' || item.result === 'not-converged';
}

/** The report of an org planned, and maybe applied. */
export function orgReportFromPlan(
  plan: OrgPlan,
  results: ReadonlyMap<string, Outcome>,
  error?: string,
  archived?: ReadonlyMap<string, Outcome & { readonly ownedBy?: readonly OwnedBy[] }>,
): OrgReport {
  const outcome = ({ result, error: why }: Outcome = { result: 'planned' }) => ({
    result,
    ...(why === undefined ? {} : { error: why }),
  });
  const changes = plan.changes.map((change): ChangeReport => ({
    action: change.action,
    cause: change.cause,
    name: change.name,
    fields: change.fields,
    ...(change.requests.patch === undefined ? {} : { patch: change.requests.patch }),
    ...(change.requests.policies === undefined ? {} : { policies: change.requests.policies }),
    ...(change.requests.tags === undefined ? {} : { tags: change.requests.tags }),
    ...(change.unknownFields.length > 0 ? { unknown: change.unknownFields } : {}),
    ...(change.knownNotConverged ? { knownNotConverged: true as const } : {}),
    ...(change.renamedFrom === undefined ? {} : { renamedFrom: change.renamedFrom }),
    ...(change.renameNotFound === undefined ? {} : { renameNotFound: change.renameNotFound }),
    ...(detachesLastPolicy(change) ? { complianceBecomes: 'unknown' as const } : {}),
    ...outcome(results.get(change.name)),
  }));
  const archives = plan.archives?.map((archive): ArchiveReport => ({
    name: archive.name,
    ownedBy: archived?.get(archive.name)?.ownedBy ?? archive.ownedBy,
    ...outcome(archived?.get(archive.name)),
  }));
  const failed = error !== undefined || [...changes, ...(archives ?? [])].some(fails);
  return {
    org: plan.org,
    status: failed ? 'failed' : 'ok',
    changes,
    unchanged: plan.unchanged,
    unmanaged: plan.unmanaged,
    ...(plan.unknown === undefined ? {} : { unknown: plan.unknown }),
    ...(plan.compliance === undefined ? {} : { compliance: plan.compliance }),
    ...(archives === undefined ? {} : { archives }),
    errors: [],
    ...(error === undefined ? {} : { error }),
  };
}

/** The most names `plan` asks the service about per org (kosli). */
export const MAX_ASKED_NAMES = 20;

/** What a plan says of a change's name the service may have archived, if anything. */
export function archivedWords({ name, wasArchived }: ChangeReport): string | undefined {
  if (wasArchived === true)
    return `${name} was archived on the service: this starts a new environment without its history`;
  return wasArchived === undefined
    ? undefined
    : `not checked for an archived environment of this name (plan asks about at most ${MAX_ASKED_NAMES} per org)`;
}

export const COMPLIANCE_WORDS = 'its last policy is detached: its compliance becomes unknown';
export const UNKNOWN_WORDS =
  'unknown (the service lists a placeholder, not an environment, for it; nothing is compared or sent)';

/** Known to hold a policy, it is sent none: the service makes its compliance unknown. */
function detachesLastPolicy({ fields: { policies } }: Pick<Change, 'fields'>): boolean {
  const count = (value: unknown) => (Array.isArray(value) ? value.length : 0);
  return policies !== undefined && count(policies.from) > 0 && count(policies.to) === 0;
}

export function summarize(orgs: readonly OrgReport[]): Summary {
  const summary: Summary = { ...ZERO };
  const count = ({ result }: { readonly result: string }) => {
    if (result === 'applied') summary.applied++;
    else if (result === 'failed') summary.failed++;
    else if (result === 'not-converged') summary.notConverged++;
  };
  for (const org of orgs) {
    if (org.status === 'invalid') summary.invalidOrgs++;
    if (org.suspended === true) summary.suspendedOrgs++;
    summary.unchanged += org.unchanged.length;
    summary.unmanaged += org.unmanaged.length;
    for (const change of org.changes) {
      summary[change.action]++;
      count(change);
      if (change.cause === 'drift') {
        summary.drift++;
        if (change.result === 'applied') summary.driftHealed++;
      }
    }
    for (const archive of org.archives ?? []) {
      summary.archive++;
      count(archive);
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

/** True when a sync would send a request: a change not known not to take, an archive, an upload. */
export function hasPendingChanges(report: RunReport): boolean {
  return report.orgs.some(
    (org) =>
      org.suspended !== true &&
      (org.changes.some((change) => change.knownNotConverged !== true) ||
        (org.archives?.length ?? 0) > 0 ||
        (org.policyDocuments?.length ?? 0) > 0),
  );
}

/** 1 on an error; with `--detailed-exitcode`, 2 for a dry run after which a sync sends; else 0. */
export function exitCode(
  report: RunReport,
  { detailed }: { readonly detailed: boolean },
): 0 | 1 | 2 {
  if (hasErrors(report)) return 1;
  return detailed && report.dryRun && hasPendingChanges(report) ? 2 : 0;
}

/** What the first round did (applied, or sent without taking), merged into the later round's. */
function mergeDone<T extends { readonly name: string; readonly result: string }>(
  earlier: readonly T[],
  later: readonly T[],
): { merged: T[]; kept: Set<string> } {
  const again = new Set(later.map((item) => item.name));
  const done = earlier.filter((item) => item.result !== 'failed' && item.result !== 'planned');
  const kept = done.filter((item) => !again.has(item.name));
  const merged = [...kept, ...later].sort((a, b) => compareNames(a.name, b.name));
  return { merged, kept: new Set(kept.map((item) => item.name)) };
}

/** Two rounds of an org: what the first did stays done, the rest is as the later found it. */
export function mergeOrgRounds(earlier: OrgReport, later: OrgReport): OrgReport {
  const changes = mergeDone(earlier.changes, later.changes);
  const archives =
    later.archives === undefined
      ? earlier.archives?.slice()
      : mergeDone(earlier.archives ?? [], later.archives).merged;
  const documents =
    earlier.policyDocuments === undefined || later.policyDocuments === undefined
      ? undefined
      : mergeDone(earlier.policyDocuments, later.policyDocuments);
  const failed =
    later.error !== undefined ||
    [...changes.merged, ...(documents?.merged ?? []), ...(archives ?? [])].some(fails);
  return {
    ...later,
    status: later.status === 'invalid' ? 'invalid' : failed ? 'failed' : 'ok',
    changes: changes.merged,
    unchanged: later.unchanged.filter((name) => !changes.kept.has(name)),
    ...(archives === undefined ? {} : { archives }),
    ...(documents === undefined
      ? {}
      : {
          policyDocuments: documents.merged,
          policyDocumentsUnchanged: (later.policyDocumentsUnchanged ?? []).filter(
            (name) => !documents.kept.has(name),
          ),
        }),
  };
}

/**
 * Why an org failed when the reason is the API's address or the token rather than the org: when
 * every org fails so, the outputs say it once, with what to check (a hundred identical lines hide
 * the one thing to fix).
 */
export interface FailureCause {
  readonly kind: 'refused' | 'dns' | 'tls' | 'unauthorized' | 'forbidden';
  /** ECONNREFUSED, ENOTFOUND, EAI_AGAIN or a certificate's code; `401` or `403` for the token. */
  readonly code: string;
  /** host:port; absent for the token. */
  readonly host?: string;
}

export function failureCause(
  failure: (Failure & { readonly host?: string | undefined }) | undefined,
): FailureCause | undefined {
  const { kind, status, code, host } = failure ?? {};
  if (kind === 'auth' && (status === 401 || status === 403))
    return { kind: status === 401 ? 'unauthorized' : 'forbidden', code: String(status) };
  const unreached = unreachable(failure);
  if (unreached === undefined || code === undefined) return undefined;
  return { kind: unreached, code, ...(host === undefined ? {} : { host }) };
}

export interface CommonFailure extends FailureCause {
  readonly orgs: readonly string[];
  readonly message: string;
  readonly hint: string;
}

export interface OrgOutcome {
  readonly org: string;
  readonly status: OrgStatus;
  readonly cause?: FailureCause | undefined;
}

function sameCause(a: FailureCause | undefined, b: FailureCause): boolean {
  return a !== undefined && a.kind === b.kind && a.code === b.code && a.host === b.host;
}

/**
 * The cause every org sent a request (all but the invalid) failed for, if one. A 403 counts only
 * on two orgs or more: one org refused is most likely that org's permission.
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
  return { ...first, orgs: names, message: `${who}: ${reasonOf(first)}`, hint: HINTS[first.kind] };
}

function reasonOf({ kind, code, host = 'the --api-url address' }: FailureCause): string {
  // `host` of `host:port` (an IPv6 address keeps its brackets).
  const name = host.replace(/:\d+$/, '');
  if (kind === 'refused') return `the API at ${host} refused the connection (${code})`;
  if (kind === 'tls')
    return `the TLS certificate of the API at ${host} cannot be verified (${code})`;
  if (kind !== 'dns') return `the token was refused (${code})`;
  return code === 'ENOTFOUND'
    ? `the API's host name ${name} does not resolve (${code})`
    : `the API's host name ${name} could not be resolved (${code})`;
}

const HINTS: Record<FailureCause['kind'], string> = {
  refused:
    'Is --api-url right? Nothing accepts connections at that address: a wrong host or port, or the service is down.',
  dns: 'Is --api-url right? Check the host name, and that DNS resolves it where envsync runs.',
  tls: 'Is --api-url right? For a service behind a private CA, add the CA with --ca-file (verification cannot be turned off).',
  unauthorized:
    'Is the token for this API? Check ENVSYNC_TOKEN, --token-file or --token-dir, and --api-url.',
  forbidden: 'Is the token for this API? It is allowed none of these orgs.',
};

/** Whether a cause is never about one org (a 403 may be that org's permission, and is not). */
export function neverAboutTheOrg(cause: FailureCause | undefined): boolean {
  return cause !== undefined && cause.kind !== 'forbidden';
}

/**
 * For a pass some of whose orgs did not fail so: a line per cause never about the org, naming its
 * orgs, without a hint (the other orgs show the address and token can be right).
 */
export function failuresSaidOnce(orgs: readonly OrgOutcome[]): string[] {
  const groups: { cause: FailureCause; orgs: string[] }[] = [];
  for (const { org, status, cause } of orgs) {
    if (status !== 'failed' || cause === undefined || !neverAboutTheOrg(cause)) continue;
    const group = groups.find((g) => sameCause(cause, g.cause));
    if (group === undefined) groups.push({ cause, orgs: [org] });
    else group.orgs.push(org);
  }
  return groups.map(({ cause, orgs: names }) =>
    names.length === 1
      ? `org ${names[0]} failed: ${reasonOf(cause)}`
      : `${names.length} orgs failed: ${reasonOf(cause)} (${someNames(names)})`,
  );
}

/** `1 org`, `2 orgs`. */
export const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** All names up to `max`, then how many more. */
export function someNames(names: readonly string[], max = 20): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

/** An org `failure` names with nothing else to show has no section. */
export function saidOnce(
  failure: CommonFailure | undefined,
  org: Pick<OrgReport, 'org'> & {
    readonly [K in 'changes' | 'errors' | 'archives' | 'policyDocuments']?: readonly unknown[];
  },
): boolean {
  return (
    failure?.orgs.includes(org.org) === true &&
    [org.changes, org.errors, org.archives, org.policyDocuments].every(
      (list) => (list ?? []).length === 0,
    )
  );
}
