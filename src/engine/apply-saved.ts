import path from 'node:path';
import type { Logger } from 'pino';
import type { EnvironmentsClient } from '../api/client.ts';
import { REPORT_VERSION, summarize, type RunReport } from '../core/report.ts';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { applyOrgPlan, type ApplyProgress } from './apply.ts';
import {
  describeMove,
  listingDigest,
  orgPlanFromSaved,
  readSavedPlan,
  type SavedPlan,
} from './saved-plan.ts';
import type { StateStore } from './state-store.ts';
import { fsPromises } from '../runtime/builtins.ts';

/** The live service no longer matches a saved plan: exit 1, nothing applied. */
export class PlanMovedError extends ConfigError {
  override name = 'PlanMovedError';
}

/** The saved plan to apply, and what applying it needs. */
export interface ApplySavedOptions {
  /** The plan file as the user named it (errors quote it), relative to `cwd`. */
  readonly file: string;
  readonly cwd: string;
  readonly apiUrl: URL;
  readonly client: EnvironmentsClient;
  readonly state: StateStore;
  readonly logger: Logger;
  readonly progress?: ApplyProgress | undefined;
  /** The caller prints a report of every change: each is logged at debug, not info. */
  readonly changesReported?: boolean | undefined;
}

/**
 * `sync --plan FILE`: applies exactly a saved plan, and only if every org's live listing is
 * still the one the plan was computed from (and it was made against this API).
 */
export async function applySavedPlan(options: ApplySavedOptions): Promise<RunReport> {
  const { file, apiUrl, client, logger } = options;
  let saved: SavedPlan;
  try {
    saved = readSavedPlan(
      JSON.parse(await fsPromises().readFile(path.resolve(options.cwd, file), 'utf8')),
    );
  } catch (error) {
    throw new ConfigError(`--plan ${file}: cannot be used: ${errorMessage(error)}`);
  }
  if (saved.api !== apiUrl.href) {
    throw new ConfigError(`--plan ${file}: it was made against ${saved.api}, not ${apiUrl.href}`);
  }
  // Every org's listing must still be the one the plan was computed from: check them all first.
  const moved: string[] = [];
  await Promise.all(
    saved.orgs.map(async (org) => {
      let live;
      try {
        live = await client.listEnvironments(org.org);
      } catch (error) {
        moved.push(`org ${org.org}: cannot list it to check (${errorMessage(error)})`);
        return;
      }
      if (listingDigest(live) !== org.digest) {
        moved.push(
          `org ${org.org}: ${describeMove(org, live).join('; ') || 'the listing changed'}`,
        );
      }
    }),
  );
  if (moved.length > 0) {
    throw new PlanMovedError(
      `refusing to apply ${file}: the service moved since the plan was made, so it is not the plan that was reviewed:\n` +
        moved
          .sort()
          .map((line) => `  ${line}`)
          .join('\n') +
        '\nRun "envsync plan" again and review the new plan.',
    );
  }
  const reports = await Promise.all(
    saved.orgs.map(async (org) => (await applyOrgPlan(orgPlanFromSaved(org), options)).report),
  );
  logger.info({ plan: file, orgs: saved.orgs.length }, 'applied the saved plan');
  return {
    version: REPORT_VERSION,
    dryRun: false,
    summary: { ...summarize(reports), throttledMs: options.client.throttledMs() },
    orgs: reports,
    errors: [],
  };
}
