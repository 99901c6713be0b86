import {
  escapeCommandData as escapeData,
  escapeCommandProperty as escapeProperty,
} from '../core/escape.ts';
import { type ProblemReport, type RunReport, saidOnce } from '../core/report.ts';

/**
 * One `::error file=...,line=...,col=...::message` workflow command per manifest problem, so
 * GitHub shows it inline on the pull request's diff. `toRepoPath` turns a problem's file into
 * a path relative to the repository root, as GitHub expects.
 */
export function problemAnnotations(
  problems: readonly ProblemReport[],
  toRepoPath: (file: string) => string,
): string[] {
  return problems.map((problem) => {
    const message = problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`;
    return `::error file=${escapeProperty(toRepoPath(problem.file))},line=${problem.line},col=${problem.column},title=${escapeProperty('envsync: invalid manifest')}::${escapeData(message)}`;
  });
}

/** Annotations for a whole run: manifest problems, then failed orgs and changes. */
export function runAnnotations(report: RunReport, toRepoPath: (file: string) => string): string[] {
  const lines = problemAnnotations(
    [...report.errors, ...report.orgs.flatMap((org) => org.errors)],
    toRepoPath,
  );
  const { failure } = report;
  // Every org failed for one cause: one annotation says it, with what to check.
  if (failure !== undefined) {
    lines.push(
      `::error title=${escapeProperty('envsync: every org failed')}::${escapeData(`${failure.message}. ${failure.hint}`)}`,
    );
  }
  for (const org of report.orgs) {
    if (org.error !== undefined && !saidOnce(failure, org)) {
      lines.push(
        `::error title=${escapeProperty(`envsync: org ${org.org} failed`)}::${escapeData(org.error)}`,
      );
    }
    for (const change of org.changes) {
      if (change.result === 'failed' || change.result === 'not-converged') {
        const kind = change.result === 'failed' ? 'error' : 'warning';
        lines.push(
          `::${kind} title=${escapeProperty(`envsync: ${org.org}/${change.name} ${change.result}`)}::${escapeData(change.error ?? change.result)}`,
        );
      }
    }
  }
  return lines;
}
