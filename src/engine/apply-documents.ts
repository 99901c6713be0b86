/**
 * Applying an org's plan when it uploads policy documents: the uploads first, then the
 * environments (those that attach a document whose create failed wait for the next pass).
 */
import type { Logger } from 'pino';
import type { EnvironmentsClient } from '../api/client.ts';
import type { OrgPlan } from '../core/model.ts';
import type { PolicyDocumentPlan } from '../core/policy-documents.ts';
import { orgReportFromPlan } from '../core/report.ts';
import { compareNames } from '../core/names.ts';
import type { ApplyProgress, Round } from './apply.ts';
import {
  holdBack,
  uploadPolicyDocuments,
  verifyUploads,
  withPolicyDocuments,
} from './policy-documents.ts';

/** What the uploads need besides the plans. */
export interface UploadDeps {
  readonly client: EnvironmentsClient;
  readonly logger: Logger;
  readonly progress?: ApplyProgress | undefined;
  readonly revision?: string | undefined;
  readonly changesReported?: boolean | undefined;
}

/**
 * Uploads `documents`' changes, then applies the environment plan with `applyEnvironments` (the
 * write ahead, PUTs, verify and record of engine/apply.ts). Never throws.
 */
export async function applyWithPolicyDocuments(
  plan: OrgPlan,
  documents: PolicyDocumentPlan,
  deps: UploadDeps,
  applyEnvironments: (plan: OrgPlan) => Promise<Round>,
): Promise<Round> {
  const { org } = plan;
  deps.progress?.planned(documents.changes.length);
  const uploaded = await uploadPolicyDocuments(org, documents.changes, deps);
  const outcomes = await verifyUploads(org, documents.changes, uploaded, deps.client);
  for (const outcome of outcomes.values()) deps.progress?.done(outcome.result !== 'applied');
  const { plan: sent, held } = holdBack(plan, outcomes, documents.changes);
  const round =
    sent.changes.length > 0 || (sent.archives?.length ?? 0) > 0
      ? await applyEnvironments(sent)
      : { report: orgReportFromPlan(sent, new Map()), transient: false };
  let report = withPolicyDocuments(round.report, documents, outcomes);
  if (held.size > 0) {
    const waiting = orgReportFromPlan(
      { ...plan, changes: plan.changes.filter((change) => held.has(change.name)) },
      new Map([...held].map(([name, error]) => [name, { result: 'failed' as const, error }])),
    );
    report = {
      ...report,
      status: report.status === 'invalid' ? 'invalid' : 'failed',
      changes: [...report.changes, ...waiting.changes].sort((a, b) => compareNames(a.name, b.name)),
    };
  }
  // Worth another round when something failed and every failure may pass.
  const failures = [...outcomes.values()].filter((o) => o.result === 'failed');
  const environmentsFailed = round.report.status !== 'ok';
  const transient =
    (failures.length > 0 || environmentsFailed) &&
    failures.every((o) => o.transient === true) &&
    (!environmentsFailed || round.transient);
  return { report, transient };
}
