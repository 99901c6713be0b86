/**
 * The pieces the notification events are built from: bounded lists, one-line reasons, keys that
 * tell whether something changed since the last announcement. Pure.
 */
import type { EventEnvironment } from './notify-events.ts';
import type { OrgReport, ProblemReport } from '../core/report.ts';

/** At most this many problems or environments are listed in one event; the rest are counted. */
export const MAX_EVENT_ITEMS = 50;

export function bounded<T>(items: readonly T[]): { items: T[]; omitted: number } {
  return {
    items: items.slice(0, MAX_EVENT_ITEMS),
    omitted: Math.max(0, items.length - MAX_EVENT_ITEMS),
  };
}

export function problemsKey(problems: readonly ProblemReport[]): string {
  return JSON.stringify(problems.map((p) => [p.file, p.line, p.column, p.path, p.message]));
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function environment(change: OrgReport['changes'][number]): EventEnvironment {
  return {
    name: change.name,
    action: change.action,
    fields: change.fields,
    ...(change.error === undefined ? {} : { error: change.error }),
  };
}

/** Why an org failed, as one line: its own error, or its failed changes (not-converged aside). */
export function failureReason(report: OrgReport): string {
  if (report.error !== undefined) return report.error;
  const changes = report.changes
    .filter((c) => c.result === 'failed')
    .map((c) => `${c.name}: ${c.action} failed${c.error === undefined ? '' : ` (${c.error})`}`);
  const archives = failedArchives(report);
  // The guard refuses every archive of the org with one message: said once.
  const guard = archives.find((a) => a.error?.startsWith('not archived: ') === true)?.error;
  const others = archives
    .filter((a) => a.error !== guard)
    .map((a) => `${a.name}: archive failed${a.error === undefined ? '' : ` (${a.error})`}`);
  return [...changes, ...others, ...(guard === undefined ? [] : [guard])].join('; ');
}

export function failedArchives(report: OrgReport): NonNullable<OrgReport['archives']> {
  return (report.archives ?? []).filter((a) => a.result === 'failed');
}
