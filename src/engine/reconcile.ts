import type { Logger } from 'pino';
import type { EnvironmentsClient } from '../api/client.ts';
import { ApiError } from '../api/errors.ts';
import { isRetryable } from '../api/retry-policy.ts';
import type { AppliedRecord, ObservedEnvironment, OrgPlan } from '../core/model.ts';
import { fingerprintDesired, fingerprintObserved, planOrg } from '../core/plan.ts';
import {
  mergeOrgRounds,
  orgReportFromPlan,
  REPORT_VERSION,
  summarize,
  type ChangeResult,
  type OrgReport,
  type ProblemReport,
  type RunReport,
} from '../core/report.ts';
import { verifyChange } from '../core/verify.ts';
import type { ManifestProblem } from '../manifests/parse.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';
import type { StateStore } from './state.ts';

export interface ReconcileOptions {
  readonly manifests: ManifestSet;
  readonly client: EnvironmentsClient;
  readonly state: StateStore;
  readonly logger: Logger;
  /** Plan only: never a PUT, never a state write. */
  readonly dryRun: boolean;
  /** Only these orgs (from --org); all orgs of the manifests when undefined. */
  readonly orgs?: ReadonlySet<string> | undefined;
  /** Called with each org's listing and plan (for `plan --out`). */
  readonly onPlanned?:
    ((org: string, observed: readonly ObservedEnvironment[], plan: OrgPlan) => void) | undefined;
  /** Progress of the changes being applied (for a terminal display). */
  readonly progress?: ApplyProgress | undefined;
  /** Stops further rounds (shutdown). */
  readonly signal?: AbortSignal | undefined;
  /** Called as each org finishes, for logs and metrics. */
  readonly onOrgDone?: ((report: OrgReport) => void) | undefined;
}

/** Counts for a progress display: changes planned for sending, and each one finished. */
export interface ApplyProgress {
  planned(count: number): void;
  done(failed: boolean): void;
}

type Outcome = {
  result: ChangeResult;
  error?: string | undefined;
  transient?: boolean;
  /** False when the change was never sent (known not to take, or the token was refused). */
  sent?: boolean;
};

/** One round's report, and whether it failed only on errors another round may cure. */
export interface Round {
  readonly report: OrgReport;
  readonly transient: boolean;
}

/**
 * Rounds per org: when an org's pass fails only on transient errors (network, timeouts, 5xx, 429)
 * even after each request's own retries, the whole pass (observe -> plan -> apply -> verify) runs
 * again, so a flaky service still converges in one run; what the first round applied stays.
 */
const MAX_ROUNDS = 3;

function problemReport(problem: ManifestProblem): ProblemReport {
  return {
    file: problem.file,
    line: problem.line,
    column: problem.column,
    path: problem.path,
    message: problem.message,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Applies one org's plan: PUT every change (bounded by the client's gate), never deciding. */
async function applyPlan(
  org: string,
  plan: OrgPlan,
  client: EnvironmentsClient,
  logger: Logger,
  progress?: ApplyProgress,
): Promise<Map<string, Outcome>> {
  const outcomes = new Map<string, Outcome>();
  // A refused token stops the org: what still waits for the gate is never sent (issue 3).
  const stop = new AbortController();
  await Promise.all(
    plan.changes.map(async (change) => {
      if (change.knownNotConverged) {
        outcomes.set(change.name, {
          result: 'not-converged',
          sent: false,
          error:
            'the same change was sent before and did not take; not sent again until the manifest or the service changes',
        });
        progress?.done(true);
        return;
      }
      try {
        await client.putEnvironment(org, change.desired, stop.signal);
        outcomes.set(change.name, { result: 'applied' });
        progress?.done(false);
        logger.info(
          { org, env: change.name, action: change.action, fields: Object.keys(change.fields) },
          `${change.action} ${org}/${change.name}`,
        );
      } catch (error) {
        progress?.done(true);
        if (stop.signal.aborted && error === stop.signal.reason) {
          outcomes.set(change.name, { result: 'failed', error: `not sent: ${messageOf(error)}` });
          return;
        }
        if (error instanceof ApiError && error.kind === 'auth') {
          stop.abort(new Error('the token was refused for this org'));
        }
        outcomes.set(change.name, {
          result: 'failed',
          error: messageOf(error),
          transient: isRetryable(error),
        });
        logger.error(
          { org, env: change.name, action: change.action },
          `${change.action} ${org}/${change.name} failed: ${messageOf(error)}`,
        );
      }
    }),
  );
  return outcomes;
}

/** One org's pass: observe -> plan -> apply -> verify -> record. Never throws. */
async function reconcileOrg(manifest: OrgManifest, options: ReconcileOptions): Promise<Round> {
  const { org } = manifest;
  const { client, state } = options;
  if (manifest.problems.length > 0) {
    // An org with any problem is left alone entirely: no request at all (issue 3).
    const errors = manifest.problems.map(problemReport);
    return {
      report: { org, status: 'invalid', changes: [], unchanged: [], unmanaged: [], errors },
      transient: false,
    };
  }

  // Observe.
  let observed: ObservedEnvironment[];
  try {
    observed = await client.listEnvironments(org);
  } catch (error) {
    return {
      report: {
        org,
        status: 'failed',
        changes: [],
        unchanged: [],
        unmanaged: [],
        errors: [],
        error: `cannot list the org: ${messageOf(error)}`,
      },
      transient: isRetryable(error),
    };
  }

  // Plan (pure).
  const plan = planOrg(org, manifest.environments, observed, state.lookup(org));
  options.onPlanned?.(org, observed, plan);
  if (options.dryRun || plan.changes.length === 0) {
    return { report: orgReportFromPlan(plan, new Map()), transient: false };
  }
  return applyOrgPlan(plan, options);
}

/**
 * Applies one org's plan: write ahead, PUT, verify, record. Used by every pass, and by
 * `sync --plan` with a plan saved earlier. Never throws.
 */
export async function applyOrgPlan(
  plan: OrgPlan,
  options: Pick<ReconcileOptions, 'client' | 'state' | 'logger' | 'progress'>,
): Promise<Round> {
  const { org } = plan;
  const { client, state, logger } = options;
  const records = state.get(org);
  options.progress?.planned(plan.changes.length);
  // Write ahead: the records of the changes about to be sent are in doubt until their PUTs are
  // known to have landed. A crash (or a PUT that timed out but landed) must not leave a record
  // that hides a difference from the next plan, so drop them first; at worst the next run
  // re-sends them as unverified.
  // Only a record that differs from what is about to be sent can hide anything: a change of
  // type/description alone leaves include_scaling/policies as recorded, landed or not.
  const inDoubt: Record<string, AppliedRecord> = { ...records };
  let dropped = 0;
  for (const change of plan.changes) {
    if (change.knownNotConverged) continue;
    const old = inDoubt[change.name];
    if (old !== undefined && !sameRecord(old, change.desired)) {
      delete inDoubt[change.name];
      dropped++;
    }
  }
  if (dropped > 0) {
    state.set(org, inDoubt);
    await state.save().catch((error: unknown) => {
      logger.error({ stateFile: state.file }, `cannot write the state file: ${messageOf(error)}`);
    });
  }

  // Apply.
  const outcomes = await applyPlan(org, plan, client, logger, options.progress);
  const applied = plan.changes.filter((change) => outcomes.get(change.name)?.result === 'applied');

  // Verify: list once more; a change whose observable fields did not take is not-converged.
  let verifyError: string | undefined;
  let verifyTransient = false;
  let after: Map<string, ObservedEnvironment> | undefined;
  if (applied.length > 0) {
    try {
      after = new Map((await client.listEnvironments(org)).map((env) => [env.name, env]));
    } catch (error) {
      verifyError = `changes were sent, but the listing to verify them failed: ${messageOf(error)}`;
      verifyTransient = isRetryable(error);
    }
  }

  // Record what was sent, and what did not take, so the next pass neither loops nor forgets.
  const next: Record<string, AppliedRecord> = {};
  for (const name of plan.unchanged) {
    const old = records[name];
    if (old !== undefined) next[name] = old; // unchanged: the old record still says the truth
  }
  for (const change of plan.changes) {
    const env = change.desired;
    const outcome = outcomes.get(env.name);
    if (outcome?.sent === false) {
      // Never sent: the old record still says the truth.
      const old = records[env.name];
      if (old !== undefined) next[env.name] = old;
      continue;
    }
    if (outcome?.result !== 'applied') continue; // sent and failed: in doubt, no record
    const remote = after?.get(env.name);
    const verification =
      after === undefined ? { converged: true as const } : verifyChange(change, remote);
    next[env.name] = {
      includeScaling: env.includeScaling,
      policies: env.policies,
      ...(verification.converged || remote === undefined
        ? {}
        : {
            notConverged: {
              desired: fingerprintDesired(env),
              observed: fingerprintObserved(remote),
            },
          }),
    };
    if (!verification.converged) {
      outcomes.set(env.name, { result: 'not-converged', error: verification.reason });
      logger.warn(
        { org, env: env.name },
        `${org}/${env.name} did not converge: ${verification.reason}`,
      );
    }
  }
  if (!sameRecords(state.get(org), next)) {
    state.set(org, next);
    await state.save().catch((error: unknown) => {
      logger.error({ stateFile: state.file }, `cannot write the state file: ${messageOf(error)}`);
    });
  }
  const failures = [...outcomes.values()].filter((o) => o.result === 'failed');
  const transient =
    (verifyError === undefined || verifyTransient) &&
    (verifyError !== undefined || failures.length > 0) &&
    failures.every((o) => o.transient === true);
  return { report: orgReportFromPlan(plan, outcomes, verifyError), transient };
}

function samePolicyList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((p, i) => p === b[i]);
}

/** The record already says what `desired` sends (and nothing is marked not converged). */
function sameRecord(
  record: AppliedRecord,
  desired: { includeScaling: boolean; policies: readonly string[] },
): boolean {
  return (
    record.notConverged === undefined &&
    record.includeScaling === desired.includeScaling &&
    samePolicyList(record.policies, desired.policies)
  );
}

function sameRecords(
  a: Readonly<Record<string, AppliedRecord>>,
  b: Readonly<Record<string, AppliedRecord>>,
): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((name) => {
    const x = a[name];
    const y = Object.hasOwn(b, name) ? b[name] : undefined;
    return (
      x !== undefined &&
      y !== undefined &&
      x.includeScaling === y.includeScaling &&
      samePolicyList(x.policies, y.policies) &&
      x.notConverged?.desired === y.notConverged?.desired &&
      x.notConverged?.observed === y.notConverged?.observed
    );
  });
}

/** One org, in up to MAX_ROUNDS rounds while it fails only on transient errors. */
async function reconcileOrgInRounds(
  manifest: OrgManifest,
  options: ReconcileOptions,
): Promise<OrgReport> {
  let round = await reconcileOrg(manifest, options);
  let report = round.report;
  for (let n = 2; n <= MAX_ROUNDS && round.transient && options.signal?.aborted !== true; n++) {
    options.logger.warn(
      { org: manifest.org, round: n },
      `org ${manifest.org} failed on transient errors; trying the org again (round ${n} of ${MAX_ROUNDS})`,
    );
    round = await reconcileOrg(manifest, options);
    report = mergeOrgRounds(report, round.report);
  }
  return report;
}

/**
 * One reconcile pass over every selected org, all orgs at once (the client's gate bounds the
 * requests). An org's failure never stops another.
 */
export async function reconcile(options: ReconcileOptions): Promise<RunReport> {
  const selected = options.manifests.orgs.filter(
    (org) => options.orgs === undefined || options.orgs.has(org.org),
  );
  // A few orgs more than requests in flight keeps the gate busy; thousands of orgs at once would
  // only hold their listings in memory while they wait for it.
  const reports: OrgReport[] = Array.from({ length: selected.length });
  const width = Math.min(selected.length, Math.max(16, options.client.gate.limit * 4));
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < selected.length) {
        const index = next++;
        const manifest = selected[index] as OrgManifest;
        const report = await reconcileOrgInRounds(manifest, options);
        options.onOrgDone?.(report);
        reports[index] = report;
      }
    }),
  );
  return {
    version: REPORT_VERSION,
    dryRun: options.dryRun,
    summary: summarize(reports),
    orgs: reports,
    errors: options.manifests.unattributed.map(problemReport),
  };
}
