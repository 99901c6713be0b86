import type { Logger } from 'pino';
import type { EnvironmentsClient } from '../api/client.ts';
import { failureOf } from '../api/errors.ts';
import {
  commonFailure,
  failureCause,
  mergeOrgRounds,
  type OrgReport,
  orgReportFromPlan,
  type ProblemReport,
  REPORT_VERSION,
  type RunReport,
  summarize,
} from '../core/report.ts';
import type {
  AppliedRecord,
  DesiredEnvironment,
  ObservedEnvironment,
  OrgPlan,
} from '../core/model.ts';
import { dialectOf, type ResolvedDialect } from '../core/dialect.ts';
import { archiveGuard, DEFAULT_MAX_ARCHIVE } from '../core/ownership.ts';
import { confirmedRecords, planOrg } from '../core/plan.ts';
import { isTransient } from '../api/retry-policy.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';
import { applyOrgPlan, type ApplyProgress, type Round } from './apply.ts';
import { listingProblems, problemReport, unsendable } from './org-problems.ts';
import { errorMessage, NoTokenError } from '../runtime/errors.ts';
import type { ObservedPolicyDocument, PolicyDocumentPlan } from '../core/policy-documents.ts';
import {
  applyWithPolicyDocuments,
  contractRefusal,
  policyDocumentsStep,
  withPolicyDocuments,
} from './policy-documents.ts';
import type { StateStore } from '../state/store.ts';
import { emptyMap } from '../core/fields.ts';

export type { ApplyProgress, Round } from './apply.ts';

export interface ReconcileOptions {
  readonly manifests: ManifestSet;
  readonly client: EnvironmentsClient;
  readonly state: StateStore;
  readonly logger: Logger;
  /** Plan only: never a PUT, never a state write. */
  readonly dryRun: boolean;
  /** Only these orgs (from --org); all orgs of the manifests when undefined. */
  readonly orgs?: ReadonlySet<string> | undefined;
  /** Called with each org's listing and plan, and its policy documents' (for `plan --out`). */
  readonly onPlanned?:
    | ((
        org: string,
        observed: readonly ObservedEnvironment[],
        plan: OrgPlan,
        documents?: PlannedDocuments,
      ) => void)
    | undefined;
  /** The git revision of the manifests, when known: policy document uploads name it. */
  readonly revision?: string | undefined;
  /** The most archives one org may send in one pass (`--max-archive`; engine/apply.ts). */
  readonly maxArchive?: number | undefined;
  /** The caller prints a report of every change: each is logged at debug, not info. */
  readonly changesReported?: boolean | undefined;
  /** Progress of the changes being applied (for a terminal display). */
  readonly progress?: ApplyProgress | undefined;
  /** Stops further rounds (shutdown). */
  readonly signal?: AbortSignal | undefined;
  /** Called as each org finishes, for logs and metrics. */
  readonly onOrgDone?: ((report: OrgReport) => void) | undefined;
  /** Called when an org's round fails and another round follows (so a failure shows at once). */
  readonly onRoundFailed?: ((report: OrgReport, round: number) => void) | undefined;
  /**
   * The caller gives `manifests.orgs` over to the pass (a one-shot plan or sync that reads it no
   * more): each org's entry is emptied once the org is done, so that a large tree's memory goes
   * down as the pass goes on instead of staying to its end.
   */
  readonly releaseDone?: boolean | undefined;
}

/** An org's policy documents as the service held them, and what to upload. */
export interface PlannedDocuments {
  readonly observed: readonly ObservedPolicyDocument[];
  readonly plan: PolicyDocumentPlan;
}

/**
 * Rounds per org: when an org's pass fails only on transient errors (network, timeouts, 5xx, 429)
 * even after each request's own retries, the whole pass (observe -> plan -> apply -> verify) runs
 * again, so a flaky service still converges in one run; what the first round applied stays.
 */
const MAX_ROUNDS = 3;

/** The org held as invalid, with these problems: no request is sent to it. */
function invalid(org: string, errors: ProblemReport[]): Round {
  return {
    report: { org, status: 'invalid', changes: [], unchanged: [], unmanaged: [], errors },
    transient: false,
  };
}

/** One org's pass: observe -> plan -> apply -> verify -> record. Never throws. */
async function reconcileOrg(manifest: OrgManifest, options: ReconcileOptions): Promise<Round> {
  const { org } = manifest;
  const { client, state } = options;
  // An org with any problem is left alone entirely: no request at all.
  if (manifest.problems.length > 0) return invalid(org, manifest.problems.map(problemReport));
  // A field the dialect cannot send holds the org: before any request when --api-dialect names
  // the dialect, else once the first listing has told it (below). So do policy documents under
  // the contract dialect (policyDocumentsStep says so after the listing).
  const named = client.dialect();
  if (named !== undefined) {
    const refused = [
      ...unsendable(manifest, named, options.manifests),
      ...(contractRefusal(manifest, client) ?? []),
    ];
    if (refused.length > 0) return invalid(org, refused);
  }

  // Observe.
  let observed: ObservedEnvironment[];
  try {
    observed = await client.listEnvironments(org);
  } catch (error) {
    const cause = failureCause(failureOf(error));
    return {
      report: {
        org,
        status: 'failed',
        changes: [],
        unchanged: [],
        unmanaged: [],
        errors: [],
        // No token for the org: that, as it is (no request was sent).
        error:
          error instanceof NoTokenError
            ? error.message
            : `cannot list the org: ${errorMessage(error)}`,
        ...(cause === undefined ? {} : { cause }),
      },
      transient: isTransient(failureOf(error)),
    };
  }
  // Known once a listing was read (the client resolves `auto` from the first one's shape).
  const dialect: ResolvedDialect = client.dialect() ?? { dialect: 'contract', from: 'setting' };
  if (named === undefined) {
    const refused = unsendable(manifest, dialect, options.manifests);
    if (refused.length > 0) return invalid(org, refused);
  }

  // Renames the service cannot carry out; members that name no environment of the org.
  const mismatched = listingProblems(manifest, observed, options.manifests);
  if (mismatched.length > 0) return invalid(org, mismatched);

  // Policy documents (the kosli dialect): read, checked against what is attached, planned.
  const documents = await policyDocumentsStep(manifest, client, options.manifests);
  if (documents.kind === 'invalid') return invalid(org, documents.errors);
  if (documents.kind === 'failed') {
    return {
      report: { ...emptyReport(org), status: 'failed', error: documents.error },
      transient: documents.transient,
    };
  }

  // Plan (pure), for the dialect: it decides how each change is sent.
  const plan = planOrg(org, manifest.environments, observed, state.lookup(org), dialect.dialect, {
    prune: manifest.prune?.value === true,
  });
  const planned = documents.kind === 'plan' ? documents : undefined;
  options.onPlanned?.(org, observed, plan, planned);
  const uploads = planned?.plan.changes.length ?? 0;
  const archives = plan.archives?.length ?? 0;
  // A suspended org is read and planned like any other, and nothing is sent to it.
  const suspended = manifest.suspend?.value === true;
  if (!options.dryRun && !suspended) {
    await recordConfirmed(org, manifest.environments, plan.unchanged, options);
  }
  if (
    options.dryRun ||
    suspended ||
    (plan.changes.length === 0 && uploads === 0 && archives === 0)
  ) {
    const planReport = orgReportFromPlan(plan, new Map(), undefined, guardNotes(plan, options));
    const report = suspended ? { ...planReport, suspended: true as const } : planReport;
    return {
      report: planned === undefined ? report : withPolicyDocuments(report, planned.plan),
      transient: false,
    };
  }
  if (planned === undefined || uploads === 0) {
    const round = await applyOrgPlan(plan, options, observed);
    return planned === undefined
      ? round
      : { ...round, report: withPolicyDocuments(round.report, planned.plan) };
  }
  // Policy documents first: the environments that attach them follow.
  return applyWithPolicyDocuments(plan, planned.plan, options, async (envPlan) =>
    applyOrgPlan(envPlan, options, observed),
  );
}

/**
 * A plan's note on each archive the guard would refuse in a sync: the plan shows them, and a
 * reviewed saved plan (`sync --plan`) may send them.
 */
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

function emptyReport(org: string): OrgReport {
  return { org, status: 'ok', changes: [], unchanged: [], unmanaged: [], errors: [] };
}

/** What a released entry of the manifests' orgs holds: an org with nothing left in it. */
const RELEASED: OrgManifest = Object.freeze({
  org: '',
  environments: Object.freeze([]),
  files: Object.freeze([]),
  problems: Object.freeze([]),
});

/** One org, in up to MAX_ROUNDS rounds while it fails only on transient errors. */
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
  const throttledMs = options.client.throttledMs(manifest.org);
  return throttledMs > 0 ? { ...report, throttledMs } : report;
}

/**
 * One reconcile pass over every selected org, all orgs at once (the client's gate bounds the
 * requests). An org's failure never stops another.
 */
export async function reconcile(options: ReconcileOptions): Promise<RunReport> {
  const all = options.manifests.orgs;
  // Positions in `all` of the selected orgs.
  const selected: number[] = [];
  for (const [index, org] of all.entries()) {
    if (options.orgs === undefined || options.orgs.has(org.org)) selected.push(index);
  }
  const release =
    options.releaseDone === true
      ? (index: number) => {
          // Given over by the caller (see releaseDone): its entries are this pass's to drop.
          (all as OrgManifest[])[index] = RELEASED;
        }
      : () => undefined;
  // A few orgs more than requests in flight keeps the gate busy; thousands of orgs at once would
  // only hold their listings in memory while they wait for it.
  const reports: OrgReport[] = Array.from({ length: selected.length });
  const width = Math.min(selected.length, Math.max(16, options.client.gate.limit * 4));
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < selected.length) {
        const index = next++;
        const at = selected[index] as number;
        const report = await reconcileOrgInRounds(all[at] as OrgManifest, options);
        release(at);
        options.onOrgDone?.(report);
        reports[index] = report;
      }
    }),
  );
  const failure = commonFailure(reports);
  return {
    version: REPORT_VERSION,
    dryRun: options.dryRun,
    summary: { ...summarize(reports), throttledMs: options.client.throttledMs() },
    ...(failure === undefined ? {} : { failure }),
    ...dialectOf(options.client),
    orgs: reports,
    errors: options.manifests.unattributed.map(problemReport),
  };
}

/**
 * Gives back their fingerprint to the records of the environments a plan found as declared
 * (core/drift.ts, `confirmedRecords`), and saves them. Nothing is sent for them, so a save that
 * fails costs only that: it is logged (and shows in /status and /readyz), the records stay
 * pending for the next save, and the org goes on (its write ahead, if it sends anything, tries
 * again and holds it back if the file still cannot be written).
 */
export async function recordConfirmed(
  org: string,
  desired: readonly DesiredEnvironment[],
  unchanged: readonly string[],
  { state, logger }: { readonly state: StateStore; readonly logger: Logger },
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
