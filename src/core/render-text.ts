import {
  type ChangeReport,
  NOT_SHOWN,
  type OrgReport,
  type RunReport,
  saidOnce,
  someNames,
} from './report.ts';
import { dialectWords } from './dialect.ts';
import { windowLine } from './windows.ts';
import { escapeText as safe, neutraliseWorkflowCommands } from './escape.ts';
import type { FieldDiff, FieldValue } from './model.ts';
import { type RequestLine, requestLines, requestLineText } from './requests.ts';
import { policyDocumentLines, policyDocumentSummary } from './render-documents.ts';
import { ownedWords } from './ownership.ts';

/** Options for the text renderer; colour only when the caller decided the terminal wants it. */
export interface TextOptions {
  readonly color: boolean;
}

const CODES = { red: 31, green: 32, yellow: 33, cyan: 36, bold: 1, dim: 2 } as const;
type Style = keyof typeof CODES;

function show(value: FieldValue | null): string {
  if (value === null) return '(none)';
  return safe(JSON.stringify(value));
}

/** What a change's field was: its value, or that the service does not show it. */
function shownFrom(diff: FieldDiff): string {
  return diff.notShown === true ? NOT_SHOWN : show(diff.from);
}

const SYMBOL: Record<ChangeReport['action'], [string, Style]> = {
  create: ['+', 'green'],
  update: ['~', 'yellow'],
  unverified: ['?', 'cyan'],
  rename: ['~', 'yellow'],
};

const SIGN_STYLE: Record<RequestLine['sign'], Style> = { '+': 'green', '~': 'yellow', '-': 'red' };

function fieldLines(
  fields: Partial<Record<string, FieldDiff>>,
  create: boolean,
  covered: ReadonlySet<string>,
): string[] {
  const entries = Object.entries(fields).filter(
    (entry): entry is [string, FieldDiff] => entry[1] !== undefined && !covered.has(entry[0]),
  );
  const width = Math.max(0, ...entries.map(([name]) => name.length));
  return entries.map(([name, diff]) =>
    create
      ? `${name.padEnd(width)} = ${show(diff.to)}`
      : `${name.padEnd(width)} : ${shownFrom(diff)} -> ${show(diff.to)}`,
  );
}

/** Renders a run as a plan in the spirit of `terraform plan`, then a one-line summary. */
export function renderText(report: RunReport, options: TextOptions): string {
  const paint = (style: Style, text: string) =>
    options.color ? `\u001b[${CODES[style]}m${text}\u001b[0m` : text;
  const lines: string[] = [];

  for (const problem of report.errors) {
    lines.push(
      paint(
        'red',
        `error: ${safe(problem.file)}:${problem.line}:${problem.column} ${problem.path ? `${safe(problem.path)}: ` : ''}${safe(problem.message)}`,
      ),
    );
  }
  if (report.errors.length > 0) lines.push('');

  // Every org failed for one cause: said once, with what to check, not once per org.
  const { failure } = report;
  if (failure !== undefined) {
    lines.push(paint('red', `error: ${safe(failure.message)}`), `  ${safe(failure.hint)}`);
    if (failure.orgs.length > 1)
      lines.push(`  ${paint('dim', `orgs: ${safe(someNames(failure.orgs))}`)}`);
    lines.push('');
  }

  for (const org of report.orgs) {
    if (!saidOnce(failure, org)) lines.push(...renderOrg(org, report.dryRun, paint), '');
  }

  const s = report.summary;
  const drift = s.drift > 0 ? ` (${s.drift} drift)` : '';
  const planned = `${s.create} to create, ${s.update} to update${drift}, ${lifecycleCounts(s)}${s.unverified} unverified, ${s.unchanged} unchanged, ${s.unmanaged} unmanaged`;
  const healed = s.driftHealed > 0 ? ` (${s.driftHealed} drift healed)` : '';
  const problems = [
    s.invalidOrgs > 0 ? `${s.invalidOrgs} invalid org${s.invalidOrgs === 1 ? '' : 's'}` : '',
    report.errors.length > 0
      ? `${report.errors.length} manifest error${report.errors.length === 1 ? '' : 's'} outside any org`
      : '',
    report.orgs.some((o) => o.error !== undefined)
      ? `${report.orgs.filter((o) => o.error !== undefined).length} org(s) failed`
      : '',
  ].filter((p) => p !== '');
  if (report.dialect !== undefined) lines.push(`API dialect: ${dialectWords(report.dialect)}`);
  const window = windowLine(report);
  if (window !== undefined) lines.push(paint('yellow', window));
  if (report.dryRun) {
    lines.push(
      paint('bold', `Plan: ${planned}.`) +
        (problems.length ? ` ${paint('red', `Errors: ${problems.join(', ')}.`)}` : ''),
    );
  } else {
    lines.push(
      paint(
        'bold',
        `Sync: ${s.applied} applied${healed}, ${s.failed} failed, ${s.notConverged} not converged (${planned}).`,
      ) + (problems.length ? ` ${paint('red', `Errors: ${problems.join(', ')}.`)}` : ''),
    );
  }
  const documents = policyDocumentSummary(s, report.dryRun);
  if (documents !== undefined) lines.push(documents);
  if ((s.throttledMs ?? 0) > 0) {
    lines.push(
      `Throttled: requests waited ${((s.throttledMs ?? 0) / 1000).toFixed(1)} s because the service asked them to (Retry-After).`,
    );
  }
  // Untrusted pieces are escaped one by one; this makes sure no line is a workflow command.
  return neutraliseWorkflowCommands(`${lines.join('\n')}\n`);
}

/** A change's or an archive's result, as the mark after it. */
function resultMark(
  result: ChangeReport['result'],
  paint: (style: Style, text: string) => string,
  applied = 'applied',
): string {
  if (result === 'applied') return paint('green', applied);
  if (result === 'failed') return paint('red', 'FAILED');
  if (result === 'not-converged') return paint('red', 'NOT CONVERGED');
  return paint('dim', 'planned');
}

/** The counts of renames and archives, when there are any: `1 to rename, 2 to archive, `. */
function lifecycleCounts(s: RunReport['summary']): string {
  return (
    (s.rename > 0 ? `${s.rename} to rename, ` : '') +
    (s.archive > 0 ? `${s.archive} to archive, ` : '')
  );
}

/** The `- archive` lines of an org that prunes, last: archives are sent after everything else. */
function archiveLines(
  org: OrgReport,
  dryRun: boolean,
  paint: (style: Style, text: string) => string,
): string[] {
  const lines: string[] = [];
  for (const archive of org.archives ?? []) {
    let head = `  ${paint('red', '- archive')} ${safe(archive.name)} ${paint('dim', `(not in the manifests; ${safe(ownedWords(org.org, archive.ownedBy))})`)}`;
    if (!dryRun || archive.result !== 'planned')
      head += ` [${resultMark(archive.result, paint, 'archived')}]`;
    lines.push(head);
    if (archive.error !== undefined) lines.push(`      ${paint('red', safe(archive.error))}`);
  }
  return lines;
}

function renderOrg(
  org: OrgReport,
  dryRun: boolean,
  paint: (style: Style, text: string) => string,
): string[] {
  const lines: string[] = [];
  const status =
    org.status !== 'ok'
      ? ` ${paint('red', `(${org.status})`)}`
      : org.suspended === true
        ? ` ${paint('yellow', '(suspended: planned only, nothing is sent)')}`
        : '';
  lines.push(paint('bold', `org ${safe(org.org)}`) + status);
  if (org.error !== undefined) lines.push(`  ${paint('red', `error: ${safe(org.error)}`)}`);
  for (const problem of org.errors) {
    lines.push(
      `  ${paint('red', `${safe(problem.file)}:${problem.line}:${problem.column} ${problem.path ? `${safe(problem.path)}: ` : ''}${safe(problem.message)}`)}`,
    );
  }
  if (org.status === 'invalid') {
    lines.push(
      `  ${paint('dim', 'left alone: no request is made for an org whose manifests have errors')}`,
    );
    return lines;
  }
  // Policy documents first: they are sent before the environments that attach them.
  lines.push(...policyDocumentLines(org, dryRun, paint));
  for (const change of org.changes) {
    const [symbol, style] = SYMBOL[change.action];
    let head =
      change.renamedFrom === undefined
        ? `  ${paint(style, `${symbol} ${change.action}`)} ${safe(change.name)}`
        : `  ${paint(style, `${symbol} rename`)} ${safe(change.renamedFrom)} → ${safe(change.name)}`;
    if (change.renameNotFound !== undefined) {
      head += paint(
        'dim',
        ` (renamed_from ${safe(change.renameNotFound)}: the service has neither name, so it is created)`,
      );
    }
    if (change.cause === 'drift') {
      head += paint('yellow', ' (drift: changed on the service, not in the manifests)');
    }
    if (change.action === 'unverified') {
      head += paint(
        'dim',
        ` (${(change.unknown ?? []).join(', ')} not shown by the service and not in the state file; ${dryRun ? 'sync sends the values below once' : 'sent once'})`,
      );
    }
    if (dryRun && change.knownNotConverged === true) {
      head += paint('dim', ' (did not take when last sent; sync does not send it again)');
    }
    if (!dryRun || change.result !== 'planned') head += ` [${resultMark(change.result, paint)}]`;
    lines.push(head);
    // Policies and tags sent through their own operations: a line per name or key.
    const requests = requestLines(change);
    for (const line of fieldLines(change.fields, change.action === 'create', requests.covered))
      lines.push(`      ${line}`);
    for (const line of requests.lines)
      lines.push(`      ${paint(SIGN_STYLE[line.sign], safe(requestLineText(line)))}`);
    if (change.error !== undefined) lines.push(`      ${paint('red', safe(change.error))}`);
  }
  lines.push(...archiveLines(org, dryRun, paint));
  if (org.unchanged.length > 0)
    lines.push(`  ${paint('dim', `= ${org.unchanged.length} unchanged`)}`);
  if (org.unmanaged.length > 0) {
    lines.push(
      `  ${paint('dim', `unmanaged (in the service, not in the manifests; never changed): ${org.unmanaged.map(safe).join(', ')}`)}`,
    );
  }
  if (
    org.changes.length === 0 &&
    (org.policyDocuments ?? []).length === 0 &&
    (org.archives ?? []).length === 0 &&
    org.error === undefined
  )
    lines.push(`  ${paint('dim', 'no changes')}`);
  return lines;
}
