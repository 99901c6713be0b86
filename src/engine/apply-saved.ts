import path from 'node:path';
import type { Logger } from 'pino';
import type { EnvironmentsClient } from '../api/client.ts';
import { failureOf } from '../api/errors.ts';
import { commonFailure, failureCause, type OrgOutcome } from '../core/common-failure.ts';
import { dialectOf, dialectWords } from '../core/dialect.ts';
import type { ObservedEnvironment } from '../core/model.ts';
import { REPORT_VERSION, summarize, type RunReport } from '../core/report.ts';
import type { ManifestSet } from '../manifests/load.ts';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { applyOrgPlan, type ApplyProgress } from './apply.ts';
import {
  describeMove,
  listingDigest,
  orgPlanFromSaved,
  policyDocumentsDigest,
  readSavedPlan,
  type SavedPlan,
} from './saved-plan.ts';
import { manifestDisagreements, selfDisagreements } from './saved-plan-check.ts';
import { applyWithPolicyDocuments } from './apply-documents.ts';
import type { StateStore } from '../state/store.ts';
import { READ_LIMITS, readRegularText } from '../runtime/read-file.ts';

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

/** Refuses the plan: what is wrong, each finding on its line, and what to do. Exit 1. */
function refuse(headline: string, findings: readonly string[], todo: string): never {
  const lines = findings.slice(0, 20).map((line) => `  ${line}`);
  if (findings.length > 20) lines.push(`  ... and ${findings.length - 20} more`);
  throw new ConfigError(`${headline}:\n${lines.join('\n')}\n${todo}`);
}

/**
 * `sync --plan FILE`: applies exactly a saved plan, and only if the file is whole, agrees with
 * itself, was made against this API and agrees with the manifests (checked before any request),
 * and the service has not moved since: every org's live listing is still the one the plan was
 * computed from, in the same API dialect, with the same policy documents.
 */
export async function applySavedPlan(options: ApplySavedOptions): Promise<RunReport> {
  const { file, client, logger } = options;
  const text = await readRegularText(path.resolve(options.cwd, file), {
    subject: `--plan ${file}:`,
    fix: 'point --plan at the file "envsync plan --out" wrote',
    maxBytes: READ_LIMITS.savedPlan,
    limit: 'for a saved plan',
    timeoutMs: options.readTimeoutMs,
  });
  const saved = readSavedPlan(text, file);
  const again = `Make the plan again with "envsync plan --out ${file}" and review it.`;
  const torn = selfDisagreements(saved);
  if (torn.length > 0) {
    refuse(
      `refusing to apply ${file}: a change in it does not send what its fields show, so it is not the plan that was reviewed`,
      torn,
      `Nothing was sent. ${again}`,
    );
  }
  if (saved.api !== options.apiUrl.href) {
    throw new ConfigError(
      `--plan ${file}: it was made against ${saved.api}, not ${options.apiUrl.href}`,
    );
  }
  const differ = manifestDisagreements(saved, options.manifests);
  if (differ.length > 0) {
    refuse(
      `refusing to apply ${file}: it does not match the manifests in ${options.manifestsDir} (a plan applies only with the manifests it was made from)`,
      differ,
      `Nothing was sent. Check out the revision the plan was made from, or make the plan again from these manifests ("envsync plan --out ${file}") and review it.`,
    );
  }
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
      if (org.policyDocuments === undefined) return;
      // The listing told the dialect: documents exist only in kosli's.
      if (client.dialect()?.dialect !== 'kosli') {
        moved.push(
          `org ${org.org}: the plan uploads policy documents, but the API dialect is not kosli`,
        );
        return;
      }
      try {
        const documents = await client.listPolicyDocuments(org.org);
        if (policyDocumentsDigest(documents) !== org.policyDocuments.digest)
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
    refuse(
      `refusing to apply ${file}: the service moved since the plan was made, so it is not the plan that was reviewed`,
      moved.sort(),
      'Run "envsync plan" again and review the new plan.',
    );
  }
  // Reviewed: the plan archives what it shows, past --max-archive.
  const deps = { ...options, reviewed: true };
  const reports = await Promise.all(
    saved.orgs.map(async (org) => {
      const plan = orgPlanFromSaved(org);
      const apply = (envPlan: typeof plan) =>
        applyOrgPlan(envPlan, deps, listings.get(org.org) ?? []);
      // Policy documents first, then the environments that attach them.
      const documents = org.policyDocuments;
      const round = documents
        ? await applyWithPolicyDocuments(plan, documents, deps, apply)
        : await apply(plan);
      return round.report;
    }),
  );
  logger.info({ plan: file, orgs: saved.orgs.length }, 'applied the saved plan');
  return {
    version: REPORT_VERSION,
    dryRun: false,
    summary: { ...summarize(reports), throttledMs: client.throttledMs() },
    ...dialectOf(client),
    orgs: reports,
    errors: [],
  };
}
