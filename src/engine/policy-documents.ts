/**
 * An org's policy documents in a pass (the `kosli` dialect): refused under `contract`, read from
 * the service when the manifests declare or attach any, checked against what the environments
 * attach, planned (core/policy-documents.ts), and uploaded before the environments.
 */
import type { Logger } from 'pino';
import * as crypto from 'node:crypto';
import type { EnvironmentsClient } from '../api/client.ts';
import { failureOf } from '../api/errors.ts';
import { dialectWords } from '../core/dialect.ts';
import type { Change, OrgPlan } from '../core/model.ts';
import { compareNames } from '../core/names.ts';
import {
  needsPolicyDocuments,
  type ObservedPolicyDocument,
  planPolicyDocuments,
  type PolicyDocumentChange,
  type PolicyDocumentPlan,
  samePolicyText,
  unknownPolicies,
  uploadComment,
} from '../core/policy-documents.ts';
import {
  type OrgReport,
  orgReportFromPlan,
  type PolicyDocumentReport,
  type ProblemReport,
} from '../core/report.ts';
import type { ManifestSet, OrgManifest } from '../manifests/load.ts';
import { type ApplyProgress, failedOutcome, type Round } from './apply.ts';
import { locatedProblem } from './org-problems.ts';

/** The sha256 of a text, as plans show it. */
export function textDigest(text: string): string {
  return `sha256:${crypto.createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

type PolicyDocumentsStep =
  | { readonly kind: 'none' }
  | { readonly kind: 'invalid'; readonly errors: ProblemReport[] }
  | { readonly kind: 'failed'; readonly error: string; readonly transient: boolean }
  | {
      readonly kind: 'plan';
      readonly observed: readonly ObservedPolicyDocument[];
      readonly plan: PolicyDocumentPlan;
    };

/**
 * The org's declared documents refused because the dialect has none (`contract`), at the first
 * one; undefined while the dialect is not known, or allows them. Needs no request.
 */
export function contractRefusal(
  manifest: OrgManifest,
  client: EnvironmentsClient,
): ProblemReport[] | undefined {
  const dialect = client.dialect();
  const declared = manifest.policies ?? [];
  if (dialect?.dialect !== 'contract' || declared.length === 0) return undefined;
  const [first] = declared.toSorted(
    (a, b) => compareNames(a.source.file, b.source.file) || a.source.line - b.source.line,
  );
  if (first === undefined) return undefined;
  const more = declared.length - 1;
  return [
    {
      ...first.source,
      message:
        `policy documents are declared here${more > 0 ? ` (and ${more} more)` : ''}, but the API dialect is ` +
        `${dialectWords(dialect)}, whose API has no policy documents; declare them only for the ` +
        'production service (--api-dialect kosli), or remove "policies:" from the manifest',
    },
  ];
}

/** After the listing: refuse under `contract`, else read, check and plan the org's documents. */
export async function policyDocumentsStep(
  manifest: OrgManifest,
  client: EnvironmentsClient,
  manifests: ManifestSet,
): Promise<PolicyDocumentsStep> {
  const refused = contractRefusal(manifest, client);
  if (refused !== undefined) return { kind: 'invalid', errors: refused };
  const declared = manifest.policies ?? [];
  if (client.dialect()?.dialect !== 'kosli') return { kind: 'none' };
  if (!needsPolicyDocuments(manifest.environments, declared)) return { kind: 'none' };
  let observed: ObservedPolicyDocument[];
  try {
    observed = await client.listPolicyDocuments(manifest.org);
  } catch (error) {
    const { error: why, transient } = failedOutcome(
      error,
      "cannot list the org's policy documents: ",
    );
    return { kind: 'failed', error: why, transient };
  }
  const unknown = unknownPolicies(manifest.environments, declared, observed);
  if (unknown.length > 0) {
    const errors = unknown.map(({ env, policy }) =>
      locatedProblem(
        manifests,
        manifest,
        env,
        ['policies'],
        { item: policy },
        `policy "${policy}" attached to "${env.name}" has no policy document in org ` +
          `"${manifest.org}": neither the manifests (top-level policies:) nor the service have it`,
      ),
    );
    return { kind: 'invalid', errors };
  }
  return { kind: 'plan', observed, plan: planPolicyDocuments(declared, observed, textDigest) };
}

/** What became of each upload, by name. */
type UploadOutcomes = Map<
  string,
  { result: 'applied' | 'failed' | 'not-converged'; error?: string; transient?: boolean }
>;

export interface UploadDeps {
  readonly client: EnvironmentsClient;
  readonly logger: Logger;
  readonly progress?: ApplyProgress | undefined;
  /** The git revision of the manifests, when known: uploads name it. */
  readonly revision?: string | undefined;
  readonly changesReported?: boolean | undefined;
}

/** Uploads every change (bounded by the client's gate); never throws. */
async function uploadPolicyDocuments(
  org: string,
  changes: readonly PolicyDocumentChange[],
  { client, logger, revision, changesReported }: UploadDeps,
): Promise<UploadOutcomes> {
  const comment = uploadComment(revision);
  const outcomes: UploadOutcomes = new Map();
  // A refused token stops the org: what still waits for the gate is never sent.
  const stop = new AbortController();
  await Promise.all(
    changes.map(async (change) => {
      const { name, action, description, content } = change;
      const what = `${action} policy document ${org}/${name}`;
      try {
        await client.putPolicyDocument(org, { name, description, comment, content }, stop.signal);
        outcomes.set(name, { result: 'applied' });
        logger[changesReported === true ? 'debug' : 'info'](
          { org, policyDocument: name, action, fields: Object.keys(change.fields) },
          what,
        );
      } catch (error) {
        if (failureOf(error)?.kind === 'auth')
          stop.abort(new Error('the token was refused for this org'));
        const stopped = stop.signal.aborted && error === stop.signal.reason;
        const outcome = failedOutcome(error, stopped ? 'not sent: ' : '');
        outcomes.set(name, outcome);
        logger.error({ org, policyDocument: name, action }, `${what} failed: ${outcome.error}`);
      }
    }),
  );
  return outcomes;
}

/**
 * Reads the documents back after the uploads: an upload whose document does not now hold what was
 * sent (its latest text, and a description sent) is `not-converged`; when they cannot be read,
 * `failed` (sent, and not known to have taken). Never throws.
 */
async function verifyUploads(
  org: string,
  changes: readonly PolicyDocumentChange[],
  outcomes: UploadOutcomes,
  client: EnvironmentsClient,
): Promise<UploadOutcomes> {
  const sent = changes.filter((change) => outcomes.get(change.name)?.result === 'applied');
  if (sent.length === 0) return outcomes;
  const verified: UploadOutcomes = new Map(outcomes);
  let held: Map<string, ObservedPolicyDocument>;
  try {
    held = new Map((await client.listPolicyDocuments(org)).map((doc) => [doc.name, doc]));
  } catch (error) {
    const why = 'sent, but the policy documents could not be read back to verify it: ';
    for (const { name } of sent) verified.set(name, failedOutcome(error, why));
    return verified;
  }
  for (const change of sent) {
    const doc = held.get(change.name);
    const reason =
      doc === undefined
        ? 'the service answered the upload, but does not list the policy document'
        : doc.latest === undefined || !samePolicyText(doc.latest.content, change.content)
          ? 'the service answered the upload, but its latest version does not hold the text sent'
          : change.description !== undefined && doc.description !== change.description
            ? 'the service answered the upload, but keeps another description'
            : undefined;
    if (reason !== undefined) verified.set(change.name, { result: 'not-converged', error: reason });
  }
  return verified;
}

/**
 * The environment changes that attach a document whose create failed wait for it (the next pass
 * sends them); the rest of the plan goes ahead.
 */
function holdBack(
  plan: OrgPlan,
  outcomes: UploadOutcomes,
  changes: readonly PolicyDocumentChange[],
): { plan: OrgPlan; held: Map<string, string> } {
  const missing = new Set(
    changes
      .filter((c) => c.action === 'create' && outcomes.get(c.name)?.result !== 'applied')
      .map((c) => c.name),
  );
  const held = new Map<string, string>();
  if (missing.size === 0) return { plan, held };
  const waits = (change: Change) => (change.desired.policies ?? []).find((p) => missing.has(p));
  for (const change of plan.changes) {
    const policy = waits(change);
    if (policy !== undefined)
      held.set(
        change.name,
        `not sent: it attaches policy document "${policy}", whose ${outcomes.get(policy)?.result === 'failed' ? 'upload failed' : 'create did not take'}`,
      );
  }
  return { plan: { ...plan, changes: plan.changes.filter((c) => !held.has(c.name)) }, held };
}

/** The org's report with its policy documents: planned, or as their uploads ended. */
export function withPolicyDocuments(
  report: OrgReport,
  plan: PolicyDocumentPlan,
  outcomes: UploadOutcomes = new Map(),
): OrgReport {
  const uploads = plan.changes.map((change): PolicyDocumentReport => {
    const outcome = outcomes.get(change.name);
    return {
      action: change.action,
      name: change.name,
      version: change.version,
      fields: change.fields,
      result: outcome?.result ?? 'planned',
      ...(outcome?.error === undefined ? {} : { error: outcome.error }),
    };
  });
  const failed = uploads.some((u) => u.result === 'failed' || u.result === 'not-converged');
  return {
    ...report,
    status: report.status === 'ok' && failed ? 'failed' : report.status,
    policyDocuments: uploads,
    policyDocumentsUnchanged: plan.unchanged,
    policyDocumentsNotManaged: plan.notManaged,
  };
}

/**
 * The uploads first, then the environment plan with `applyEnvironments` (engine/apply.ts); those
 * that attach a document whose create failed wait for the next pass. Never throws.
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
