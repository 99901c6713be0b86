/**
 * Two rounds of one org's pass as one report: when an org's round fails only on transient errors
 * the pass runs it again (engine/reconcile.ts), and what the first round did stays done.
 */
import { compareNames } from './names.ts';
import type { ArchiveReport, OrgReport, PolicyDocumentReport } from './report.ts';

/**
 * Merges two rounds of one org's pass: what the first round applied stays applied (the second
 * round then sees it unchanged); everything else is as the later round found it.
 */
export function mergeOrgRounds(earlier: OrgReport, later: OrgReport): OrgReport {
  const laterNames = new Set(later.changes.map((c) => c.name));
  const kept = earlier.changes.filter(
    (c) => (c.result === 'applied' || c.result === 'not-converged') && !laterNames.has(c.name),
  );
  const keptNames = new Set(kept.map((c) => c.name));
  const changes = [...kept, ...later.changes].sort((a, b) => compareNames(a.name, b.name));
  const documents = mergePolicyDocuments(earlier, later);
  const archives = mergeArchives(earlier, later);
  const failed =
    later.error !== undefined ||
    changes.some((c) => c.result === 'failed' || c.result === 'not-converged') ||
    (documents?.changes ?? []).some((d) => d.result === 'failed' || d.result === 'not-converged') ||
    (archives ?? []).some((a) => a.result === 'failed' || a.result === 'not-converged');
  return {
    ...later,
    status: later.status === 'invalid' ? 'invalid' : failed ? 'failed' : 'ok',
    changes,
    unchanged: later.unchanged.filter((name) => !keptNames.has(name)),
    ...(archives === undefined ? {} : { archives }),
    ...(documents === undefined
      ? {}
      : {
          policyDocuments: documents.changes,
          policyDocumentsUnchanged: documents.unchanged,
        }),
  };
}

/** The archives of two rounds: what the first archived stays archived (the later one no longer lists it). */
function mergeArchives(earlier: OrgReport, later: OrgReport): ArchiveReport[] | undefined {
  if (later.archives === undefined) return earlier.archives?.slice();
  const laterNames = new Set(later.archives.map((a) => a.name));
  const kept = (earlier.archives ?? []).filter(
    (a) => (a.result === 'applied' || a.result === 'not-converged') && !laterNames.has(a.name),
  );
  return [...kept, ...later.archives].sort((a, b) => compareNames(a.name, b.name));
}

/** The policy documents of two rounds: what the first uploaded stays uploaded. */
function mergePolicyDocuments(
  earlier: OrgReport,
  later: OrgReport,
): { changes: PolicyDocumentReport[]; unchanged: string[] } | undefined {
  if (earlier.policyDocuments === undefined || later.policyDocuments === undefined)
    return undefined;
  const laterNames = new Set(later.policyDocuments.map((d) => d.name));
  const kept = earlier.policyDocuments.filter(
    (d) => (d.result === 'applied' || d.result === 'not-converged') && !laterNames.has(d.name),
  );
  const keptNames = new Set(kept.map((d) => d.name));
  return {
    changes: [...kept, ...later.policyDocuments].sort((a, b) => compareNames(a.name, b.name)),
    unchanged: (later.policyDocumentsUnchanged ?? []).filter((name) => !keptNames.has(name)),
  };
}
