import path from 'node:path';
import type { Logger } from 'pino';
import type { EnvironmentsClient } from '../api/client.ts';
import { failureOf } from '../api/errors.ts';
import {
  commonFailure,
  failureCause,
  type OrgOutcome,
  REPORT_VERSION,
  type RunReport,
  summarize,
} from '../core/report.ts';
import { dialectOf, dialectWords } from '../core/dialect.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import type { ManifestSet } from '../manifests/load.ts';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { applyOrgPlan, type ApplyProgress } from './apply.ts';
import {
  describeMove,
  listingDigest,
  makeAgain,
  orgPlanFromSaved,
  readSavedPlan,
  type SavedPlan,
} from './saved-plan.ts';
import { manifestDisagreements, selfDisagreements } from './saved-plan-check.ts';
import { documentsFromSaved, policyDocumentsDigest } from './saved-plan-documents.ts';
import { applyWithPolicyDocuments } from './apply-documents.ts';
import type { StateStore } from '../state/store.ts';
import { READ_LIMITS, readRegularText } from '../runtime/read-file.ts';

/** The live service no longer matches a saved plan: exit 1, nothing applied. */
export class PlanMovedError extends ConfigError {
  override name = 'PlanMovedError';
}

/** The saved plan is not what was reviewed, or not for these manifests: exit 1, nothing sent. */
export class PlanRefusedError extends ConfigError {
  override name = 'PlanRefusedError';
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
  /** The manifests as they are now, and their folder as the user named it (errors quote it). */
  readonly manifests: ManifestSet;
  readonly manifestsDir: string;
  readonly progress?: ApplyProgress | undefined;
  /** The caller prints a report of every change: each is logged at debug, not info. */
  readonly changesReported?: boolean | undefined;
  /** The git revision of the manifests, when known: policy document uploads name it. */
  readonly revision?: string | undefined;
  /** How long reading the plan file may take (--deadline). */
  readonly readTimeoutMs?: number | undefined;
}

/** A refusal: what is wrong, each finding on its line, and what to do. */
function refusal(headline: string, findings: readonly string[], todo: string): string {
  const lines = findings.slice(0, 20).map((line) => `  ${line}`);
  if (findings.length > 20) lines.push(`  ... and ${findings.length - 20} more`);
  return `${headline}:\n${lines.join('\n')}\n${todo}`;
}

/** Reads the plan file; its integrity and shape are checked before anything in it is used. */
async function readPlanFile(file: string, cwd: string, timeoutMs?: number): Promise<SavedPlan> {
  const text = await readRegularText(path.resolve(cwd, file), {
    subject: `--plan ${file}:`,
    fix: 'point --plan at the file "envsync plan --out" wrote',
    maxBytes: READ_LIMITS.savedPlan,
    limit: 'for a saved plan',
    timeoutMs,
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `--plan ${file}: cannot be used: it is not whole JSON (${errorMessage(error)}); ${makeAgain(file)}`,
    );
  }
  try {
    return readSavedPlan(json, file);
  } catch (error) {
    throw new ConfigError(`--plan ${file}: cannot be used: ${errorMessage(error)}`);
  }
}

/**
 * The checks that need no request: the plan agrees with itself, was made against this API, and
 * every org and environment in it is declared by the manifests, with the same values.
 */
function checkOffline(saved: SavedPlan, options: ApplySavedOptions): void {
  const { file, apiUrl, manifestsDir } = options;
  const torn = selfDisagreements(saved);
  if (torn.length > 0) {
    throw new PlanRefusedError(
      refusal(
        `refusing to apply ${file}: a change in it does not send what its fields show, so it is not the plan that was reviewed`,
        torn,
        `Nothing was sent. Make the plan again with "envsync plan --out ${file}" and review it.`,
      ),
    );
  }
  if (saved.api !== apiUrl.href) {
    throw new ConfigError(`--plan ${file}: it was made against ${saved.api}, not ${apiUrl.href}`);
  }
  const differ = manifestDisagreements(saved, options.manifests);
  if (differ.length > 0) {
    throw new PlanRefusedError(
      refusal(
        `refusing to apply ${file}: it does not match the manifests in ${manifestsDir} (a plan applies only with the manifests it was made from)`,
        differ,
        `Nothing was sent. Check out the revision the plan was made from, or make the plan again from these manifests ("envsync plan --out ${file}") and review it.`,
      ),
    );
  }
}

/**
 * `sync --plan FILE`: applies exactly a saved plan, and only if the file is whole and agrees with
 * itself and with the manifests (checked before any request), and every org's live listing is
 * still the one the plan was computed from (and it was made against this API).
 */
export async function applySavedPlan(options: ApplySavedOptions): Promise<RunReport> {
  const { file, client, logger } = options;
  const saved = await readPlanFile(file, options.cwd, options.readTimeoutMs);
  checkOffline(saved, options);
  // Every org's listing must still be the one the plan was computed from: check them all first.
  const moved: string[] = [];
  const listed: OrgOutcome[] = [];
  // Each org's live listing: the changes are applied against it (ownership is read from it).
  const listings = new Map<string, readonly ObservedEnvironment[]>();
  await Promise.all(
    saved.orgs.map(async (org) => {
      let live;
      try {
        live = await client.listEnvironments(org.org);
      } catch (error) {
        moved.push(`org ${org.org}: cannot list it to check (${errorMessage(error)})`);
        listed.push({ org: org.org, status: 'failed', cause: failureCause(failureOf(error)) });
        return;
      }
      listed.push({ org: org.org, status: 'ok' });
      listings.set(org.org, live);
      if (listingDigest(live) !== org.digest) {
        moved.push(
          `org ${org.org}: ${describeMove(org, live).join('; ') || 'the listing changed'}`,
        );
      }
      const documents = org.policyDocuments;
      if (documents === undefined) return;
      // The listing told the dialect: documents exist only in kosli's.
      if (client.dialect()?.dialect !== 'kosli') {
        moved.push(
          `org ${org.org}: the plan uploads policy documents, but the API dialect is not kosli`,
        );
        return;
      }
      try {
        if (policyDocumentsDigest(await client.listPolicyDocuments(org.org)) !== documents.digest)
          moved.push(`org ${org.org}: its policy documents changed on the service`);
      } catch (error) {
        moved.push(
          `org ${org.org}: cannot list its policy documents to check (${errorMessage(error)})`,
        );
      }
    }),
  );
  // The plan's requests are those of the dialect it was made for: the run must speak it too.
  const now = client.dialect();
  for (const org of saved.orgs) {
    if (now !== undefined && now.dialect !== org.dialect) {
      moved.push(
        `org ${org.org}: the plan was made for the ${org.dialect} API dialect, and this run uses ${dialectWords(now)}`,
      );
    }
  }
  // The API could not be reached, or refused the token, for every org: that, once, not "moved".
  const failure = commonFailure(listed);
  if (failure !== undefined) {
    throw new ConfigError(
      `cannot check ${file} against the service: ${failure.message}. ${failure.hint}\nNothing was sent.`,
    );
  }
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
    saved.orgs.map(async (org) => {
      const plan = orgPlanFromSaved(org);
      // Reviewed: the plan archives what it shows, past --max-archive.
      const deps = { ...options, reviewed: true };
      const live = listings.get(org.org) ?? [];
      if (org.policyDocuments === undefined) return (await applyOrgPlan(plan, deps, live)).report;
      // Policy documents first, then the environments that attach them.
      const applyEnvironments = (envPlan: typeof plan) => applyOrgPlan(envPlan, deps, live);
      return (
        await applyWithPolicyDocuments(
          plan,
          documentsFromSaved(org.policyDocuments),
          deps,
          applyEnvironments,
        )
      ).report;
    }),
  );
  logger.info({ plan: file, orgs: saved.orgs.length }, 'applied the saved plan');
  return {
    version: REPORT_VERSION,
    dryRun: false,
    summary: { ...summarize(reports), throttledMs: options.client.throttledMs() },
    ...dialectOf(options.client),
    orgs: reports,
    errors: [],
  };
}
