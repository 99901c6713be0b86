import type { Logger } from 'pino';
import type { EnvironmentsClient } from '../api/client.ts';
import { failureOf } from '../api/errors.ts';
import { isTransient } from '../api/retry-policy.ts';
import type { Change, ObservedEnvironment, OrgPlan, OwnedBy } from '../core/model.ts';
import {
  type ArchiveOutcome,
  type ChangeOutcome,
  isTransientRound,
  KNOWN_NOT_CONVERGED,
  recordsInDoubt,
  sameRecords,
  settleApply,
} from '../core/outcome.ts';
import {
  archiveGuard,
  DEFAULT_MAX_ARCHIVE,
  ownedBy,
  OWNER_TAG_KEY,
  ownerTagValue,
} from '../core/ownership.ts';
import { changeWaves, patchBody, sentEnvironment } from '../core/plan.ts';
import { type OrgReport, orgReportFromPlan } from '../core/report.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { StateStore } from '../state/store.ts';

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

export interface ApplyDeps {
  readonly client: EnvironmentsClient;
  readonly state: StateStore;
  readonly logger: Logger;
  readonly progress?: ApplyProgress | undefined;
  /** The caller prints a report of every change (a one-shot command): each is logged at debug. */
  readonly changesReported?: boolean | undefined;
  /** `--max-archive`: more archives in one org's pass fail them all, its other changes apply. */
  readonly maxArchive?: number | undefined;
  /** A reviewed saved plan (`sync --plan`): it archives what it shows, whatever their number. */
  readonly reviewed?: boolean | undefined;
  /** A manifest file that names no org (unreadable) holds every archive back. */
  readonly manifests?: { readonly unattributed: readonly unknown[] } | undefined;
}

/** A request that failed: its message, and whether another round may cure it. */
export function failedOutcome(error: unknown, prefix = '') {
  const transient = isTransient(failureOf(error));
  return { result: 'failed' as const, error: `${prefix}${errorMessage(error)}`, transient };
}

/** Saves the state; resolves with the error when it cannot be written (it is also logged). */
async function saveState(
  state: StateStore,
  logger: Logger,
  org: string,
  options: { readonly always?: boolean } = {},
): Promise<string | undefined> {
  try {
    await state.save(options);
    return undefined;
  } catch (error) {
    logger.error({ org, stateFile: state.file }, errorMessage(error));
    return errorMessage(error);
  }
}

/** The report of an org none of whose changes was sent: the write ahead failed. */
function notSent(plan: OrgPlan, why: string): Round {
  const error = 'not sent: the state file could not be written first';
  const outcomes = new Map<string, ChangeOutcome>(
    plan.changes.map((change) => [change.name, { result: 'failed', sent: false, error }]),
  );
  return {
    report: orgReportFromPlan(
      plan,
      outcomes,
      `nothing was sent to this org, because the state file must record what is about to change before it is sent: ${why}`,
    ),
    transient: false,
  };
}

/**
 * Sends one change's requests one after another, as the plan decided them: its rename, its PUT,
 * its PATCH, then what needs it to exist. The first failure ends it; `done` counts those sent.
 */
async function sendRequests(
  client: EnvironmentsClient,
  plan: OrgPlan,
  change: Change,
  signal: AbortSignal,
  done: { sent: number },
): Promise<void> {
  const { org } = plan;
  const { name } = change;
  const { rename, put, patch, policies, tags } = change.requests;
  const requests = [
    rename !== undefined && (() => client.renameEnvironment(org, rename, name, signal)),
    put && (() => client.putEnvironment(org, sentEnvironment(change, plan.dialect), signal)),
    patch !== undefined && (() => client.patchEnvironment(org, name, patchBody(change), signal)),
    policies !== undefined &&
      policies.attach.length > 0 &&
      (() => client.attachPolicies(org, name, policies.attach, signal)),
    policies !== undefined &&
      policies.detach.length > 0 &&
      (() => client.detachPolicies(org, name, policies.detach, signal)),
    tags !== undefined && (() => client.patchTags(org, name, tags, signal)),
  ];
  for (const request of requests) {
    if (request === false) continue;
    await request();
    done.sent++;
  }
}

/** Sends every change of one org's plan (bounded by the client's gate), never deciding. */
async function sendChanges(
  plan: OrgPlan,
  { client, logger, progress, changesReported = false }: ApplyDeps,
): Promise<Map<string, ChangeOutcome>> {
  const { org } = plan;
  const outcomes = new Map<string, ChangeOutcome>();
  // A refused token stops the org: what still waits for the gate is never sent.
  const stop = new AbortController();
  // Members first: a logical environment's PUT waits for those of the environments it names.
  for (const wave of changeWaves(plan.changes)) {
    await Promise.all(
      wave.map(async (change) => {
        const { name, action, cause } = change;
        if (change.knownNotConverged) {
          outcomes.set(name, KNOWN_NOT_CONVERGED);
          progress?.done(true);
          return;
        }
        const done = { sent: 0 };
        try {
          await sendRequests(client, plan, change, stop.signal, done);
          outcomes.set(name, { result: 'applied' });
          progress?.done(false);
          logger[changesReported ? 'debug' : 'info'](
            { org, env: name, action, cause, fields: Object.keys(change.fields) },
            `${action} ${org}/${name}${cause === 'drift' ? ' (drift)' : ''}`,
          );
        } catch (error) {
          progress?.done(true);
          if (stop.signal.aborted && error === stop.signal.reason) {
            const what =
              done.sent === 0 ? 'not sent' : `stopped after ${done.sent} of its requests`;
            outcomes.set(name, { result: 'failed', error: `${what}: ${errorMessage(error)}` });
            return;
          }
          if (failureOf(error)?.kind === 'auth') {
            stop.abort(new Error('the token was refused for this org'));
          }
          outcomes.set(name, failedOutcome(error));
          logger.error(
            { org, env: name, action, cause },
            `${action} ${org}/${name} failed: ${errorMessage(error)}`,
          );
        }
      }),
    );
  }
  return outcomes;
}

/**
 * Sends the org's archives, last, each only if envsync owns the environment now (whatever a saved
 * plan says: anyone who can write it can reseal it), and only if the guard lets them all go.
 * `listed` is the org's listing the pass read or the saved plan was checked against.
 */
async function sendArchives(
  plan: OrgPlan,
  {
    client,
    state,
    logger,
    changesReported = false,
    maxArchive = DEFAULT_MAX_ARCHIVE,
    reviewed,
    manifests,
  }: ApplyDeps,
  listed: readonly ObservedEnvironment[],
): Promise<Map<string, ArchiveOutcome>> {
  const outcomes = new Map<string, ArchiveOutcome>();
  if (plan.archives === undefined || plan.archives.length === 0) return outcomes;
  const { org } = plan;
  const entries = new Map(listed.map((entry) => [entry.name, entry]));
  const records = state.get(org);
  const archives: { name: string; ownedBy: readonly OwnedBy[] }[] = [];
  for (const { name } of plan.archives) {
    const entry = entries.get(name);
    const record = Object.hasOwn(records, name) ? records[name] : undefined;
    const owners = entry === undefined ? [] : ownedBy(org, entry, record);
    if (owners.length > 0) {
      archives.push({ name, ownedBy: owners });
      continue;
    }
    const error =
      entry === undefined
        ? `not archived: the listing of org ${org} does not have ${name}`
        : `not archived: envsync does not own ${org}/${name}: the state file has no record of ` +
          `it and it does not carry the tag ${OWNER_TAG_KEY}: ${ownerTagValue(org)}`;
    outcomes.set(name, { result: 'failed', sent: false, error, ownedBy: [] });
    logger.error({ org, env: name, event: 'prune.not-owned' }, error);
  }
  const refused = archiveGuard(
    org,
    archives.length,
    reviewed === true ? undefined : maxArchive,
    manifests?.unattributed.length,
  );
  if (refused !== undefined) {
    const error = `not archived: ${refused}`;
    logger.error({ org, archives: archives.length, maxArchive, event: 'prune.guard' }, error);
    for (const { name, ownedBy: owners } of archives) {
      outcomes.set(name, { result: 'failed', sent: false, error, ownedBy: owners });
    }
    return outcomes;
  }
  await Promise.all(
    archives.map(async ({ name, ownedBy: owners }) => {
      try {
        const found = await client.archiveEnvironment(org, name);
        outcomes.set(name, { result: 'applied', ownedBy: owners });
        logger[changesReported ? 'debug' : 'info'](
          { org, env: name, action: 'archive', ownedBy: owners, found },
          found
            ? `archive ${org}/${name}`
            : `archive ${org}/${name}: the service no longer has it (404), so it is gone already`,
        );
      } catch (error) {
        outcomes.set(name, { ...failedOutcome(error), ownedBy: owners });
        logger.error(
          { org, env: name, action: 'archive' },
          `archive ${org}/${name} failed: ${errorMessage(error)}`,
        );
      }
    }),
  );
  return outcomes;
}

/**
 * Applies one org's plan: write ahead, send, verify, record (core/outcome.ts decides). Used by
 * every pass, and by `sync --plan`. `listed`: the listing the plan was made from or checked
 * against, which ownership is read from. Never throws.
 */
export async function applyOrgPlan(
  plan: OrgPlan,
  deps: ApplyDeps,
  listed: readonly ObservedEnvironment[],
): Promise<Round> {
  const { org } = plan;
  const { client, state, logger, progress } = deps;
  const records = state.get(org);
  progress?.planned(plan.changes.length);

  // Write ahead, always: a state file that cannot be written now would not record what is sent,
  // so nothing is (a read-only directory, a full disk, another writer's lock).
  const inDoubt = recordsInDoubt(plan, records);
  if (inDoubt !== undefined) state.set(org, inDoubt);
  const aheadError = await saveState(state, logger, org, { always: true });
  if (aheadError !== undefined) {
    for (const _ of plan.changes) progress?.done(true);
    // The records in doubt stay dropped in memory: a dropped record never hides a difference
    // (it costs one PUT more), while putting them back would claim this org over another writer.
    return notSent(plan, aheadError);
  }

  const sent = await sendChanges(plan, deps);
  const archived = await sendArchives(plan, deps, listed);

  // Verify: list once more; a change whose observable fields did not take is not-converged.
  let verifyError: string | undefined;
  let verifyTransient = false;
  let after: Map<string, ObservedEnvironment> | undefined;
  if ([...sent.values(), ...archived.values()].some((outcome) => outcome.result === 'applied')) {
    try {
      const { environments } = await client.listEnvironments(org);
      after = new Map(environments.map((env) => [env.name, env]));
    } catch (error) {
      verifyError = `changes were sent, but the listing to verify them failed: ${errorMessage(error)}`;
      verifyTransient = isTransient(failureOf(error));
    }
  }

  // Record what was sent, and what did not take, so the next pass neither loops nor forgets.
  const settled = settleApply(plan, records, sent, after, archived);
  for (const { name, reason } of settled.notConverged) {
    logger.warn({ org, env: name }, `${org}/${name} did not converge: ${reason}`);
  }
  let recordError: string | undefined;
  if (!sameRecords(state.get(org), settled.records)) {
    state.set(org, settled.records);
    const error = await saveState(state, logger, org);
    if (error !== undefined) {
      const applied = [...settled.outcomes.values()].filter(
        (o) => o.result === 'applied' || (o.result === 'not-converged' && o.sent !== false),
      ).length;
      recordError =
        applied === 0
          ? `the state file could not be updated after the changes failed: ${error}`
          : `${applied} change(s) were applied, but the state file could not record them: ${error}. ` +
            'It still holds what was written before they were sent, which never hides a ' +
            'difference: the next run may send some of these changes again';
    }
  }
  const orgError = [verifyError, recordError].filter((e) => e !== undefined).join('; ');
  // The guard's refusals were not sent: another round would refuse them too.
  const archivesSent = [...settled.archives.values()].filter((outcome) => outcome.sent !== false);
  return {
    report: orgReportFromPlan(plan, settled.outcomes, orgError || undefined, settled.archives),
    transient:
      recordError === undefined &&
      isTransientRound([...settled.outcomes.values(), ...archivesSent], {
        failed: verifyError !== undefined,
        transient: verifyTransient,
      }),
  };
}
