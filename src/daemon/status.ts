import type { OrgReport, ProblemReport } from '../core/report.ts';

/** What `/status` says of one org. */
export interface OrgStatus {
  status: 'ok' | 'invalid' | 'failed' | 'pending';
  /** ISO time of the last pass that left the org without error. */
  lastSuccess: string | null;
  lastAttempt: string | null;
  lastError: { message: string; at: string; errors?: ProblemReport[] } | null;
  /** Changes still pending after the last pass (create, update, unverified not applied). */
  pending: number;
  unmanaged: number;
  /** Failed passes in a row (apply or listing), driving the backoff. */
  failures: number;
  /** While backing off: the earliest time the org is tried again. */
  nextAttemptAt: string | null;
}

/** What `/status` answers. */
export interface DaemonStatus {
  revision: string | null;
  manifests: string;
  ready: boolean;
  passes: number;
  lastPass: {
    startedAt: string;
    finishedAt: string;
    durationMs: number;
    result: 'success' | 'partial' | 'error';
    trigger: string[];
    error?: string;
  } | null;
  passRunning: boolean;
  shard: { index: number; count: number } | null;
  /** Manifest problems that belong to no org. */
  errors: ProblemReport[];
  orgs: Record<string, OrgStatus>;
}

/** Summarizes an org report as the one-line reason it failed, if it did. */
export function orgErrorMessage(report: OrgReport): string | undefined {
  if (report.status === 'invalid') {
    const first = report.errors[0];
    return `invalid manifests (${report.errors.length} problem${report.errors.length === 1 ? '' : 's'})${first ? `: ${first.file}:${first.line}:${first.column} ${first.path ? `${first.path}: ` : ''}${first.message}` : ''}`;
  }
  if (report.error !== undefined) return report.error;
  const failed = report.changes.filter(
    (c) => c.result === 'failed' || c.result === 'not-converged',
  );
  if (failed.length === 0) return undefined;
  return failed.map((c) => `${c.name}: ${c.result}${c.error ? ` (${c.error})` : ''}`).join('; ');
}
