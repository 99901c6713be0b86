/** A run as text, in the spirit of `terraform plan`; each untrusted piece escaped where it goes. */
import type { FieldValue } from './model.ts';
import { dialectWords } from './dialect.ts';
import { escapeText as safe, neutraliseWorkflowCommands } from './escape.ts';
import { ownedWords } from './ownership.ts';
import {
  archivedWords,
  type ChangeResult,
  COMPLIANCE_WORDS,
  NOT_SHOWN,
  type OrgReport,
  plural,
  type PolicyDocumentReport,
  type RunReport,
  saidOnce,
  someNames,
  type Summary,
  UNKNOWN_WORDS,
} from './report.ts';
import { patched, requestLines, requestLineText } from './requests.ts';
import { formatProblem } from './validation.ts';
import { windowLine } from './windows.ts';

const CODES = { red: 31, green: 32, yellow: 33, cyan: 36, bold: 1, dim: 2 } as const;
type Paint = (style: keyof typeof CODES, text: string) => string;

function show(value: FieldValue | null): string {
  return value === null ? '(none)' : safe(JSON.stringify(value));
}

const SYMBOL = {
  create: ['+', 'green'],
  update: ['~', 'yellow'],
  unverified: ['?', 'cyan'],
  rename: ['~', 'yellow'],
} as const;

const SIGN_STYLE = { '+': 'green', '~': 'yellow', '-': 'red' } as const;

/** A run as a plan, then a one-line summary; colour only when the caller asks for it. */
export function renderText(report: RunReport, options: { readonly color: boolean }): string {
  const paint: Paint = (style, text) =>
    options.color ? `\u001b[${CODES[style]}m${text}\u001b[0m` : text;
  const lines = report.errors.map((problem) => paint('red', `error: ${formatProblem(problem)}`));
  if (report.errors.length > 0) lines.push('');
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
  const planned = plannedCounts(s);
  const failedOrgs = report.orgs.filter((o) => o.error !== undefined).length;
  const problems = [
    s.invalidOrgs > 0 ? plural(s.invalidOrgs, 'invalid org') : '',
    report.errors.length > 0
      ? `${plural(report.errors.length, 'manifest error')} outside any org`
      : '',
    failedOrgs > 0 ? `${failedOrgs} org(s) failed` : '',
  ].filter((p) => p !== '');
  if (report.dialect !== undefined) lines.push(`API dialect: ${dialectWords(report.dialect)}`);
  const window = windowLine(report);
  if (window !== undefined) lines.push(paint('yellow', window));
  lines.push(
    paint('bold', report.dryRun ? `Plan: ${planned}.` : `Sync: ${syncCounts(s)} (${planned}).`) +
      (problems.length > 0 ? ` ${paint('red', `Errors: ${problems.join(', ')}.`)}` : ''),
  );
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

function resultMark(result: ChangeResult, paint: Paint, applied = 'applied'): string {
  if (result === 'applied') return paint('green', applied);
  if (result === 'planned') return paint('dim', 'planned');
  return paint('red', result === 'failed' ? 'FAILED' : 'NOT CONVERGED');
}

function renderOrg(org: OrgReport, dryRun: boolean, paint: Paint): string[] {
  const status =
    org.status !== 'ok'
      ? ` ${paint('red', `(${org.status})`)}`
      : org.suspended === true
        ? ` ${paint('yellow', '(suspended: planned only, nothing is sent)')}`
        : '';
  const lines = [paint('bold', `org ${safe(org.org)}`) + status];
  if (org.error !== undefined) lines.push(`  ${paint('red', `error: ${safe(org.error)}`)}`);
  for (const problem of org.errors) lines.push(`  ${paint('red', formatProblem(problem))}`);
  for (const w of org.warnings ?? [])
    lines.push(`  ${paint('yellow', `warning: ${formatProblem(w)}`)}`);
  if (org.status === 'invalid') {
    lines.push(
      `  ${paint('dim', 'left alone: no request is made for an org whose manifests have errors')}`,
    );
    return lines;
  }
  const mark = (result: ChangeResult, applied?: string) =>
    !dryRun || result !== 'planned' ? ` [${resultMark(result, paint, applied)}]` : '';
  // Policy documents first: they are sent before the environments that attach them.
  for (const upload of org.policyDocuments ?? []) {
    const head =
      upload.action === 'create'
        ? `  ${paint('green', '+ policy document')} ${safe(upload.name)}`
        : `  ${paint('yellow', '~ policy document')} ${safe(upload.name)} (${Object.keys(upload.fields).join(', ')})`;
    lines.push(head + mark(upload.result), ...documentFields(upload).map((l) => `      ${l}`));
    if (upload.error !== undefined) lines.push(`      ${paint('red', safe(upload.error))}`);
  }
  const unchangedDocuments = org.policyDocumentsUnchanged?.length ?? 0;
  if (unchangedDocuments > 0) {
    lines.push(`  ${paint('dim', `= ${plural(unchangedDocuments, 'policy document')} unchanged`)}`);
  }
  const notManaged = org.policyDocumentsNotManaged ?? [];
  if (notManaged.length > 0) {
    lines.push(
      `  ${paint('dim', `policy documents not managed (on the service, in no manifest; never deleted): ${notManaged.map(safe).join(', ')}`)}`,
    );
  }
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
    const archived = archivedWords(change);
    if (archived !== undefined)
      head += paint(change.wasArchived === true ? 'yellow' : 'dim', ` (${safe(archived)})`);
    lines.push(head + mark(change.result));
    const { fields, lines: requests } = requestLines(change);
    const width = Math.max(0, ...fields.map(([name]) => name.length));
    for (const [name, diff] of fields) {
      lines.push(
        change.action === 'create'
          ? `      ${name.padEnd(width)} = ${show(diff.to)}`
          : `      ${name.padEnd(width)} : ${diff.notShown === true ? NOT_SHOWN : show(diff.from)} -> ${show(diff.to)}${patched(change, name)}`,
      );
    }
    for (const line of requests)
      lines.push(`      ${paint(SIGN_STYLE[line.sign], safe(requestLineText(line)))}`);
    if (change.complianceBecomes !== undefined)
      lines.push(`      ${paint('yellow', COMPLIANCE_WORDS)}`);
    if (change.error !== undefined) lines.push(`      ${paint('red', safe(change.error))}`);
  }
  // Archives last: they are sent after everything else.
  for (const archive of org.archives ?? []) {
    lines.push(
      `  ${paint('red', '- archive')} ${safe(archive.name)} ${paint('dim', `(not in the manifests; ${safe(ownedWords(org.org, archive.ownedBy))})`)}` +
        mark(archive.result, 'archived'),
    );
    if (archive.error !== undefined) lines.push(`      ${paint('red', safe(archive.error))}`);
  }
  if (org.unchanged.length > 0)
    lines.push(`  ${paint('dim', `= ${org.unchanged.length} unchanged`)}`);
  if (org.unmanaged.length > 0) {
    lines.push(
      `  ${paint('dim', `unmanaged (in the service, not in the manifests; never changed): ${org.unmanaged.map(safe).join(', ')}`)}`,
    );
  }
  if (org.unknown !== undefined)
    lines.push(`  ${paint('yellow', `${UNKNOWN_WORDS}: ${org.unknown.map(safe).join(', ')}`)}`);
  const pending =
    org.changes.length + (org.policyDocuments?.length ?? 0) + (org.archives?.length ?? 0);
  if (pending === 0 && org.error === undefined) lines.push(`  ${paint('dim', 'no changes')}`);
  return lines;
}

/** A digest for people: `sha256:` and its first 12 hex digits. */
function shortDigest(digest: string): string {
  return digest.startsWith('sha256:') ? `${digest.slice(0, 19)}…` : digest;
}

/** An upload's fields, a line each. */
export function documentFields(upload: PolicyDocumentReport, arrow = '->'): string[] {
  const lines: string[] = [];
  const { content, description } = upload.fields;
  const quote = (text: string) => safe(JSON.stringify(text));
  if (content !== undefined) {
    const version = upload.version === null ? '' : `version ${upload.version} `;
    const from = content.from === null ? '(none)' : shortDigest(content.from);
    lines.push(
      upload.action === 'create'
        ? `content     = ${shortDigest(content.to)}`
        : `content     : ${version}${from} ${arrow} ${shortDigest(content.to)}`,
    );
  }
  if (description !== undefined) {
    const from = description.from === null ? '(none)' : quote(description.from);
    lines.push(
      upload.action === 'create'
        ? `description = ${quote(description.to)}`
        : `description : ${from} ${arrow} ${quote(description.to)}`,
    );
  }
  return lines;
}

/** What a plan counts, each shown by `strong` (markdown bolds them) but the last two. */
export function plannedCounts(s: Summary, strong = (n: number) => `${n}`): string {
  return (
    `${strong(s.create)} to create, ${strong(s.update)} to update` +
    (s.drift > 0 ? ` (${strong(s.drift)} drift)` : '') +
    (s.rename > 0 ? `, ${strong(s.rename)} to rename` : '') +
    (s.archive > 0 ? `, ${strong(s.archive)} to archive` : '') +
    `, ${strong(s.unverified)} unverified, ${s.unchanged} unchanged, ${s.unmanaged} unmanaged`
  );
}

export function syncCounts(s: Summary, strong = (n: number) => `${n}`): string {
  const healed = s.driftHealed > 0 ? ` (${strong(s.driftHealed)} drift healed)` : '';
  const { conflicts = 0 } = s;
  const retried = conflicts > 0 ? `, ${strong(conflicts)} answered 409 (conflict) and retried` : '';
  return `${strong(s.applied)} applied${healed}, ${strong(s.failed)} failed, ${strong(s.notConverged)} not converged${retried}`;
}

/** When some org has an upload. */
export function policyDocumentSummary(summary: Summary, dryRun: boolean): string | undefined {
  const counts = summary.policyDocuments;
  if (counts === undefined) return undefined;
  const planned = `${counts.create} to create, ${counts.update} to update`;
  return dryRun
    ? `Policy documents: ${planned}.`
    : `Policy documents: ${counts.applied} applied, ${counts.failed} failed (${planned}).`;
}
