import type { Logger } from 'pino';
import type { EnvironmentsClient } from '../api/client.ts';
import { failureOf } from '../api/errors.ts';
import type { ObservedEnvironment, OrgPlan } from '../core/model.ts';
import {
  isTransientRound,
  KNOWN_NOT_CONVERGED,
  recordsInDoubt,
  sameRecords,
  settleApply,
  type ChangeOutcome,
} from '../core/outcome.ts';
import { changeWaves } from '../core/members.ts';
import { orgReportFromPlan, type OrgReport } from '../core/report.ts';
import { isTransient } from '../core/retry-policy.ts';
import { errorMessage } from '../errors.ts';
import type { StateStore } from './state-store.ts';

/** Counts for a progress display: changes planned for sending, and each one finished. */
export interface ApplyProgress {
  planned(count: number): void;
  done(failed: boolean): void;
}

/** One round's report, and whether it failed only on errors another round may cure. */
export interface Round {
  readonly report: OrgReport;
  readonly transient: boolean;
}

/** What an apply needs from the outside world. */
export interface ApplyDeps {
  readonly client: EnvironmentsClient;
  readonly state: StateStore;
  readonly logger: Logger;
  readonly progress?: ApplyProgress | undefined;
}

const messageOf = errorMessage;

/** Saves the state; a failure is logged, and the run goes on (the state is a cache). */
async function saveState(state: StateStore, logger: Logger): Promise<void> {
  await state.save().catch((error: unknown) => {
    logger.error({ stateFile: state.file }, `cannot write the state file: ${messageOf(error)}`);
  });
}

/** PUTs every change of one org's plan (bounded by the client's gate), never deciding. */
async function sendChanges(
  plan: OrgPlan,
  { client, logger, progress }: ApplyDeps,
): Promise<Map<string, ChangeOutcome>> {
  const { org } = plan;
  const outcomes = new Map<string, ChangeOutcome>();
  // A refused token stops the org: what still waits for the gate is never sent.
  const stop = new AbortController();
  // Members first: a logical environment's PUT waits for those of the environments it names.
  for (const wave of changeWaves(plan.changes)) {
    await Promise.all(
      wave.map(async (change) => {
        if (change.knownNotConverged) {
          outcomes.set(change.name, KNOWN_NOT_CONVERGED);
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
          if (failureOf(error)?.kind === 'auth') {
            stop.abort(new Error('the token was refused for this org'));
          }
          outcomes.set(change.name, {
            result: 'failed',
            error: messageOf(error),
            transient: isTransient(failureOf(error)),
          });
          logger.error(
            { org, env: change.name, action: change.action },
            `${change.action} ${org}/${change.name} failed: ${messageOf(error)}`,
          );
        }
      }),
    );
  }
  return outcomes;
}

/**
 * Applies one org's plan: write ahead, PUT, verify, record (the decisions are core/outcome.ts's).
 * Used by every pass, and by `sync --plan` with a plan saved earlier. Never throws.
 */
export async function applyOrgPlan(plan: OrgPlan, deps: ApplyDeps): Promise<Round> {
  const { org } = plan;
  const { client, state, logger } = deps;
  const records = state.get(org);
  deps.progress?.planned(plan.changes.length);

  const inDoubt = recordsInDoubt(plan, records);
  if (inDoubt !== undefined) {
    state.set(org, inDoubt);
    await saveState(state, logger);
  }

  const sent = await sendChanges(plan, deps);

  // Verify: list once more; a change whose observable fields did not take is not-converged.
  let verifyError: string | undefined;
  let verifyTransient = false;
  let after: Map<string, ObservedEnvironment> | undefined;
  if ([...sent.values()].some((outcome) => outcome.result === 'applied')) {
    try {
      after = new Map((await client.listEnvironments(org)).map((env) => [env.name, env]));
    } catch (error) {
      verifyError = `changes were sent, but the listing to verify them failed: ${messageOf(error)}`;
      verifyTransient = isTransient(failureOf(error));
    }
  }

  // Record what was sent, and what did not take, so the next pass neither loops nor forgets.
  const settled = settleApply(plan, records, sent, after);
  for (const { name, reason } of settled.notConverged) {
    logger.warn({ org, env: name }, `${org}/${name} did not converge: ${reason}`);
  }
  if (!sameRecords(state.get(org), settled.records)) {
    state.set(org, settled.records);
    await saveState(state, logger);
  }
  return {
    report: orgReportFromPlan(plan, settled.outcomes, verifyError),
    transient: isTransientRound(settled.outcomes.values(), {
      failed: verifyError !== undefined,
      transient: verifyTransient,
    }),
  };
}
