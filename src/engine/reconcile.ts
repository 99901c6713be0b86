import { failureOf } from '../api/errors.ts';
import { isTransient } from '../api/retry-policy.ts';
import { dialectOf, type ResolvedDialect } from '../core/dialect.ts';
import { emptyMap } from '../core/fields.ts';
import type {
  AppliedRecord,
  DesiredEnvironment,
  ObservedEnvironment,
  OrgPlan,
} from '../core/model.ts';
import { archiveGuard, DEFAULT_MAX_ARCHIVE } from '../core/ownership.ts';
import { confirmedRecords, planOrg } from '../core/plan.ts';
import { withoutRetired } from '../core/requests.ts';
import type { ObservedPolicyDocument, PolicyDocumentPlan } from '../core/policy-documents.ts';
import {
  commonFailure,
  type FailureCause,
  failureCause,
  mergeOrgRounds,
  type OrgReport,
  orgReportFromPlan,
  type ProblemReport,
  REPORT_VERSION,
  type RunReport,
  summarize,
} from '../core/report.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';
import { errorMessage, NoTokenError } from '../runtime/errors.ts';
import { type ApplyDeps, applyOrgPlan, type Round } from './apply.ts';
import { withArchivedNames } from './archived-names.ts';
import {
  fieldWarnings,
  listingProblems,
  logWarnings,
  problemReport,
  unsendable,
} from './org-problems.ts';
import {
  applyWithPolicyDocuments,
  contractRefusal,
  policyDocumentsStep,
  type UploadDeps,
  withPolicyDocuments,
} from './policy-documents.ts';

export type { ApplyProgress } from './apply.ts';

type ReconcileOptions = ApplyDeps &
  UploadDeps & {
    readonly manifests: ManifestSet;
    /** Plan only: never a PUT, and no state write unless `recordSeen`. */
    readonly dryRun: boolean;
    /** Record the environments found as declared even when planning only (the daemon). */
    readonly recordSeen?: boolean | undefined;
    /** --strict: a retired key declared holds its org. */
    readonly strict?: boolean | undefined;
    /** Only these orgs (--org); all of them when undefined. */
    readonly orgs?: ReadonlySet<string> | undefined;
    /** Each org's listing and plan, and its policy documents' (for `plan --out`). */
    readonly onPlanned?:
      | ((
          org: string,
          observed: readonly ObservedEnvironment[],
          plan: OrgPlan,
          documents?: PlannedDocuments,
        ) => void)
      | undefined;
    /** `plan`: ask the service whether each name a change brings was archived (kosli). */
    readonly askArchived?: boolean | undefined;
    /** Stops further rounds (shutdown). */
    readonly signal?: AbortSignal | undefined;
    readonly onOrgDone?: ((report: OrgReport) => void) | undefined;
    /** An org's round failed and another follows (so the failure shows at once). */
    readonly onRoundFailed?: ((report: OrgReport, round: number) => void) | undefined;
    /**
     * The caller gives `manifests.orgs` over to the pass: each org's entry is emptied once it is
     * done, so that a large tree's memory goes down as the pass goes on.
     */
    readonly releaseDone?: boolean | undefined;
  };

/** An org's policy documents as the service held them, and what to upload. */
export interface PlannedDocuments {
  readonly observed: readonly ObservedPolicyDocument[];
  readonly plan: PolicyDocumentPlan;
}

/**
 * An org whose round fails only on transient errors (network, timeouts, 5xx, 429), even after each
 * request's own retries, runs again whole, so a flaky service still converges in one run.
 */
const MAX_ROUNDS = 3;

function emptyReport(org: string): OrgReport {
  return { org, status: 'ok', changes: [], unchanged: [], unmanaged: [], errors: [] };
}

/** The org held as invalid: no request is sent to it. */
function invalid(org: string, errors: ProblemReport[]): Round {
  return { report: { ...emptyReport(org), status: 'invalid', errors }, transient: false };
}

function failed(org: string, error: string, transient: boolean, cause?: FailureCause): Round {
  const report: OrgReport = { ...emptyReport(org), status: 'failed', error };
  return { report: cause === undefined ? report : { ...report, cause }, transient };
}

/** One org's pass: observe -> plan -> apply -> verify -> record. Never throws. */
async function reconcileOrg(manifest: OrgManifest, options: ReconcileOptions): Promise<Round> {
  const { org } = manifest;
  const { client, state } = options;
  if (manifest.problems.length > 0) return invalid(org, manifest.problems.map(problemReport));
  // What the dialect cannot send holds the org: before any request when --api-dialect names the
  // dialect, else once the first listing has told it.
  const named = client.dialect();
  if (named !== undefined) {
    const refused = [
      ...unsendable(manifest, named, options.manifests, options.strict),
      ...(contractRefusal(manifest, client) ?? []),
    ];
    if (refused.length > 0) return invalid(org, refused);
  }
  let observed: ObservedEnvironment[];
  let placeholders: string[];
  try {
    ({ environments: observed, placeholders } = await client.listEnvironments(org));
  } catch (error) {
    // No token for the org: that, as it is (no request was sent).
    const why =
      error instanceof NoTokenError ? error.message : `cannot list the org: ${errorMessage(error)}`;
    const failure = failureOf(error);
    return failed(org, why, isTransient(failure), failureCause(failure));
  }
  const dialect: ResolvedDialect = client.dialect() ?? { dialect: 'contract', from: 'setting' };
  if (named === undefined) {
    const refused = unsendable(manifest, dialect, options.manifests, options.strict);
    if (refused.length > 0) return invalid(org, refused);
  }
  const mismatched = listingProblems(manifest, observed, options.manifests);
  if (mismatched.length > 0) return invalid(org, mismatched);
  const documents = await policyDocumentsStep(manifest, client, options.manifests);
  if (documents.kind === 'invalid') return invalid(org, documents.errors);
  if (documents.kind === 'failed') return failed(org, documents.error, documents.transient);

  const environments = withoutRetired(manifest.environments, dialect.dialect);
  const plan = planOrg(org, environments, observed, state.lookup(org), dialect.dialect, {
    prune: manifest.prune?.value === true,
    placeholders,
  });
  const planned = documents.kind === 'plan' ? documents : undefined;
  options.onPlanned?.(org, observed, plan, planned);
  // A suspended org is read and planned like any other, and nothing is sent to it.
  const suspended = manifest.suspend?.value === true;
  if (!options.dryRun || options.recordSeen === true) {
    await recordConfirmed(org, environments, plan.unchanged, options);
  }
  const uploads = planned?.plan.changes.length ?? 0;
  const idle = plan.changes.length === 0 && uploads === 0 && (plan.archives?.length ?? 0) === 0;
  if (options.dryRun || suspended || idle) {
    const notes = orgReportFromPlan(plan, new Map(), undefined, guardNotes(plan, options));
    const ask = options.askArchived === true && dialect.dialect === 'kosli';
    const planReport = ask ? await withArchivedNames(notes, client) : notes;
    const report = suspended ? { ...planReport, suspended: true as const } : planReport;
    return {
      report: planned === undefined ? report : withPolicyDocuments(report, planned.plan),
      transient: false,
    };
  }
  const apply = (envPlan: OrgPlan) => applyOrgPlan(envPlan, options, observed);
  // Policy documents first: the environments that attach them follow.
  return planned === undefined
    ? apply(plan)
    : applyWithPolicyDocuments(plan, planned.plan, options, apply);
}

/** A plan's note on each archive a sync's guard would refuse (a reviewed saved plan may send it). */
function guardNotes(
  plan: OrgPlan,
  options: ReconcileOptions,
): Map<string, { result: 'planned'; error: string }> | undefined {
  const archives = plan.archives ?? [];
  const refused = archiveGuard(
    plan.org,
    archives.length,
    options.maxArchive ?? DEFAULT_MAX_ARCHIVE,
    options.manifests.unattributed.length,
  );
  if (refused === undefined) return undefined;
  const note = `a sync would refuse this: ${refused}`;
  return new Map(archives.map(({ name }) => [name, { result: 'planned' as const, error: note }]));
}

/** What a released entry of the manifests' orgs holds. */
const RELEASED: OrgManifest = Object.freeze({
  org: '',
  environments: Object.freeze([]),
  files: Object.freeze([]),
  problems: Object.freeze([]),
});

async function reconcileOrgInRounds(
  manifest: OrgManifest,
  options: ReconcileOptions,
): Promise<OrgReport> {
  let round = await reconcileOrg(manifest, options);
  let report = round.report;
  // No round after the deadline or shutdown: its requests would not be sent, and its report
  // would hide why the org failed.
  const again = () => options.signal?.aborted !== true && options.client.canSend();
  for (let n = 2; n <= MAX_ROUNDS && round.transient && again(); n++) {
    options.onRoundFailed?.(report, n - 1);
    options.logger.warn(
      { org: manifest.org, round: n },
      `org ${manifest.org} failed on transient errors; trying the org again (round ${n} of ${MAX_ROUNDS})`,
    );
    round = await reconcileOrg(manifest, options);
    report = mergeOrgRounds(report, round.report);
  }
  const dialect = options.client.dialect()?.dialect;
  const warnings =
    dialect === undefined
      ? []
      : fieldWarnings(manifest, dialect, options.manifests, options.strict);
  logWarnings(options.logger, manifest.org, warnings);
  if (warnings.length > 0) report = { ...report, warnings };
  const throttledMs = options.client.throttledMs(manifest.org);
  return throttledMs > 0 ? { ...report, throttledMs } : report;
}

/** One pass over every selected org, at once (the client's gate bounds the requests). */
export async function reconcile(options: ReconcileOptions): Promise<RunReport> {
  const all = options.manifests.orgs as OrgManifest[];
  const selected = [...all.keys()].filter(
    (at) => options.orgs?.has((all[at] as OrgManifest).org) ?? true,
  );
  const reports: OrgReport[] = [];
  let next = 0;
  const worker = async () => {
    while (next < selected.length) {
      const index = next++;
      const at = selected[index] as number;
      const report = await reconcileOrgInRounds(all[at] as OrgManifest, options);
      if (options.releaseDone === true) all[at] = RELEASED;
      options.onOrgDone?.(report);
      reports[index] = report;
    }
  };
  // A few orgs more than requests in flight keep the gate busy; thousands of orgs at once would
  // only hold their listings in memory while they wait for it.
  const width = Math.min(selected.length, Math.max(16, options.client.gate.limit * 4));
  await Promise.all(Array.from({ length: width }, worker));
  const failure = commonFailure(reports);
  return {
    version: REPORT_VERSION,
    dryRun: options.dryRun,
    summary: {
      ...summarize(reports),
      throttledMs: options.client.throttledMs(),
      conflicts: options.client.conflicts(),
    },
    ...(failure === undefined ? {} : { failure }),
    ...dialectOf(options.client),
    orgs: reports,
    errors: options.manifests.unattributed.map(problemReport),
  };
}

/**
 * Gives back their fingerprint to the records of the environments found as declared
 * (`confirmedRecords`), and saves them. Nothing is sent for them, so a save that fails is only
 * logged: the records stay pending, and the org's write ahead, if it sends anything, tries again.
 */
async function recordConfirmed(
  org: string,
  desired: readonly DesiredEnvironment[],
  unchanged: readonly string[],
  { state, logger }: ReconcileOptions,
): Promise<void> {
  const confirmed = confirmedRecords(desired, unchanged, state.lookup(org));
  if (confirmed === undefined) return;
  state.set(org, Object.assign(emptyMap<AppliedRecord>(), state.get(org), confirmed));
  logger.debug(
    { org, environments: Object.keys(confirmed) },
    `${org}: the service holds what the manifests declare; the state file records it`,
  );
  try {
    await state.save();
  } catch (error) {
    logger.error({ org, stateFile: state.file }, errorMessage(error));
  }
}
