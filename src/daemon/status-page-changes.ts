/**
 * The status page's tables of what differs between the manifests and the service: the pending
 * changes as field diffs, and the drift found lately. Every name and value is escaped here.
 */
import type { OrgStatus } from './daemon-status.ts';
import { MAX_RECENT_DRIFTS } from '../core/plan.ts';
import type { FieldDiff } from '../core/model.ts';
import { type ChangeReport, NOT_SHOWN } from '../core/report.ts';
import { requestLines } from '../core/requests.ts';
import { badge, count, esc, showValue, table, when } from './status-page-format.ts';

/** A change's fields, one line each: `name: from → to` (`name = to` for a create). */
export function fieldChanges(change: ChangeReport): string {
  const requests = requestLines(change);
  const entries = Object.entries(change.fields).filter(
    (entry): entry is [string, FieldDiff] =>
      entry[1] !== undefined && !requests.covered.has(entry[0]),
  );
  const lines = entries.map(([name, diff]) =>
    change.action === 'create'
      ? `<code>${esc(name)}</code> = ${showValue(diff.to)}`
      : `<code>${esc(name)}</code>: ${diff.notShown === true ? `<span class="dim">${esc(NOT_SHOWN)}</span>` : showValue(diff.from)} → ${showValue(diff.to)}`,
  );
  // Policies and tags sent through their own operations: a line per name or key.
  for (const line of requests.lines) {
    const moved =
      line.from === undefined
        ? ''
        : `: <code>${esc(line.from)}</code> → <code>${esc(line.to ?? '')}</code>`;
    lines.push(`${esc(line.sign)} ${esc(line.what)} <code>${esc(line.subject)}</code>${moved}`);
  }
  return lines.length === 0 ? '<span class="dim">none</span>' : lines.join('<br>');
}

/** The changes still pending after the last pass; empty when none. */
export function pendingTable(org: OrgStatus): string {
  if (org.pending === 0) return '';
  const rows = org.pendingChanges.map((c) => [
    `<code>${esc(c.name)}</code>`,
    `${esc(c.action)}${c.cause === 'drift' ? ' <span class="drift-mark">(drift)</span>' : ''}`,
    badge(c.result),
    fieldChanges(c),
    c.error === undefined ? '' : `<span class="message">${esc(c.error)}</span>`,
  ]);
  const more = org.pending - org.pendingChanges.length;
  return (
    `<h4>Pending changes (${esc(String(org.pending))})</h4>` +
    table('pending', ['Environment', 'Action', 'Result', 'Fields', 'Error'], rows) +
    (more > 0
      ? `<p class="dim">… and ${esc(String(more))} more (the first ${esc(String(org.pendingChanges.length))} are listed).</p>`
      : '')
  );
}

/** The last drifts found, newest first; empty when none. */
export function driftTable(org: OrgStatus, now: number): string {
  if (org.recentDrift.length === 0) return '';
  const rows = org.recentDrift.map((d) => [
    `<code>${esc(d.environment)}</code>`,
    `<code>${esc(d.field)}</code>`,
    showValue(d.found),
    showValue(d.declared),
    when(d.at, now),
  ]);
  return (
    `<h4>Recent drift <span class="dim">(the last ${count(MAX_RECENT_DRIFTS, 'drift')}: changed on the service, not in the manifests)</span></h4>` +
    table('drift', ['Environment', 'Field', 'Found', 'Declared', 'Found at'], rows)
  );
}
