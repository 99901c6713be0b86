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
import { escapeHtml, escapeMarkdown as escapeCell, markdownCode } from './escape.ts';
import type { FieldDiff, FieldValue } from './model.ts';
import { requestLines } from './requests.ts';
import { policyDocumentMarkdown, policyDocumentSummary } from './render-documents.ts';
import { ownedWords } from './ownership.ts';

/** Longest text shown for a value in markdown before it is shortened. */
const MAX_VALUE = 80;

function code(value: FieldValue | null): string {
  if (value === null) return '_none_';
  let text = JSON.stringify(value);
  if (text.length > MAX_VALUE) text = `${text.slice(0, MAX_VALUE - 1)}…`;
  return markdownCode(text);
}

/** A change's fields, then a line per policy and tag sent through their own operations. */
function fieldCell(change: ChangeReport): string {
  const create = change.action === 'create';
  const requests = requestLines(change);
  const fields = Object.entries(change.fields)
    .filter(
      (entry): entry is [string, FieldDiff] =>
        entry[1] !== undefined && !requests.covered.has(entry[0]),
    )
    .map(([name, diff]) =>
      create
        ? `${name}: ${code(diff.to)}`
        : `${name}: ${diff.notShown === true ? `_${NOT_SHOWN}_` : code(diff.from)} → ${code(diff.to)}`,
    );
  const lines = requests.lines.map(
    (line) =>
      `${line.sign} ${line.what} ${markdownCode(line.subject)}` +
      (line.from === undefined
        ? ''
        : `: ${markdownCode(line.from)} → ${markdownCode(line.to ?? '')}`),
  );
  return [...fields, ...lines].join('<br>');
}

const ACTION: Record<string, string> = {
  create: '➕ create',
  update: '✏️ update',
  unverified: '❔ unverified',
  rename: '🔀 rename',
};
const RESULT: Record<string, string> = {
  planned: 'planned',
  applied: '✅ applied',
  failed: '❌ failed',
  'not-converged': '⚠️ not converged',
};

/** Renders a run as markdown for a pull request comment or a step summary: table, then per org. */
export function renderMarkdown(report: RunReport): string {
  const out: string[] = [];
  const s = report.summary;
  out.push(`### envsync ${report.dryRun ? 'plan' : 'sync'}`, '');
  const drift = s.drift > 0 ? ` (**${s.drift}** drift)` : '';
  const healed = s.driftHealed > 0 ? ` (**${s.driftHealed}** drift healed)` : '';
  out.push(
    report.dryRun
      ? `**${s.create}** to create, **${s.update}** to update${drift}, ${s.rename > 0 ? `**${s.rename}** to rename, ` : ''}${s.archive > 0 ? `**${s.archive}** to archive, ` : ''}**${s.unverified}** unverified, ${s.unchanged} unchanged, ${s.unmanaged} unmanaged.`
      : `**${s.applied}** applied${healed}, **${s.failed}** failed, **${s.notConverged}** not converged; ${s.unchanged} unchanged, ${s.unmanaged} unmanaged.`,
    '',
  );
  // Every org failed for one cause: said once, with what to check, not in a section per org.
  const { failure } = report;
  if (failure !== undefined) {
    const orgs =
      failure.orgs.length > 1 ? `<br>\n> Orgs: ${escapeCell(someNames(failure.orgs))}` : '';
    out.push(
      `> ❌ **${escapeCell(failure.message)}**<br>\n> ${escapeCell(failure.hint)}${orgs}`,
      '',
    );
  }
  const documents = policyDocumentSummary(s, report.dryRun);
  if (documents !== undefined) out.push(documents, '');
  if (report.dialect !== undefined) out.push(`API dialect: ${dialectWords(report.dialect)}.`, '');
  const window = windowLine(report);
  if (window !== undefined) out.push(`⏳ ${window}`, '');
  if (s.drift > 0) {
    out.push(
      '_Drift_: changed on the service since envsync applied it, while the manifests stayed the same.',
      '',
    );
  }
  out.push('| org | status | create | update | unverified | unchanged | unmanaged | errors |');
  out.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const org of report.orgs) {
    const count = (action: string) => org.changes.filter((c) => c.action === action).length;
    const errors =
      org.errors.length +
      (org.error === undefined ? 0 : 1) +
      org.changes.filter((c) => c.error !== undefined).length;
    const status =
      org.status === 'invalid'
        ? '❌ invalid'
        : org.status === 'failed'
          ? '❌ failed'
          : org.suspended === true
            ? '⏸️ suspended'
            : '✅ ok';
    out.push(
      `| ${escapeCell(org.org)} | ${status} | ${count('create')} | ${count('update')} | ${count('unverified')} | ${org.unchanged.length} | ${org.unmanaged.length} | ${errors} |`,
    );
  }
  out.push('');
  if (report.errors.length > 0) {
    out.push('#### Manifest errors outside any org', '');
    for (const p of report.errors)
      out.push(
        `- ${markdownCode(`${p.file}:${p.line}:${p.column}`)} ${escapeCell(p.path ? `${p.path}: ${p.message}` : p.message)}`,
      );
    out.push('');
  }
  for (const org of report.orgs) {
    if (!saidOnce(failure, org)) out.push(...renderOrg(org, report.dryRun), '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

/** The archives of an org that prunes: a list, after the changes (they are sent last). */
function archiveMarkdown(org: OrgReport, dryRun: boolean): string[] {
  if ((org.archives ?? []).length === 0) return [];
  const out = ['Archived by prune (not in the manifests), sent last:', ''];
  for (const archive of org.archives ?? []) {
    const result = dryRun && archive.result === 'planned' ? '' : ` ${RESULT[archive.result]}`;
    const error = archive.error === undefined ? '' : `: ${escapeCell(archive.error)}`;
    out.push(
      `- 🗄️ archive ${escapeCell(archive.name)} _(${escapeCell(ownedWords(org.org, archive.ownedBy))})_${result}${error}`,
    );
  }
  out.push('');
  return out;
}

function renderOrg(org: OrgReport, dryRun: boolean): string[] {
  const pending =
    org.changes.length + (org.policyDocuments?.length ?? 0) + (org.archives?.length ?? 0);
  const summary =
    org.status === 'invalid'
      ? 'invalid manifests'
      : org.error !== undefined
        ? 'failed'
        : pending === 0
          ? 'no changes'
          : `${pending} change${pending === 1 ? '' : 's'}`;
  const out = [
    `<details${org.status !== 'ok' || pending > 0 ? ' open' : ''}><summary><b>${escapeHtml(org.org)}</b>: ${summary}</summary>`,
    '',
  ];
  if (org.error !== undefined) out.push(`> ❌ ${escapeCell(org.error)}`, '');
  for (const p of org.errors)
    out.push(
      `- ❌ ${markdownCode(`${p.file}:${p.line}:${p.column}`)} ${escapeCell(p.path ? `${p.path}: ${p.message}` : p.message)}`,
    );
  if (org.errors.length > 0)
    out.push('', '_Left alone: no request is made for an org whose manifests have errors._', '');
  // Policy documents first: they are sent before the environments that attach them.
  out.push(...policyDocumentMarkdown(org, dryRun));
  if (org.changes.length > 0) {
    out.push(
      dryRun ? '| action | environment | fields |' : '| action | environment | fields | result |',
    );
    out.push(dryRun ? '| --- | --- | --- |' : '| --- | --- | --- | --- |');
    for (const change of org.changes) {
      const fields =
        fieldCell(change) +
        (dryRun && change.knownNotConverged === true
          ? '<br>_did not take when last sent; sync does not send it again_'
          : '');
      const result = `${RESULT[change.result] ?? change.result}${change.error === undefined ? '' : `: ${escapeCell(change.error)}`}`;
      const action = `${ACTION[change.action] ?? change.action}${change.cause === 'drift' ? ' (drift)' : ''}`;
      const name =
        change.renamedFrom === undefined
          ? escapeCell(change.name)
          : `${escapeCell(change.renamedFrom)} → ${escapeCell(change.name)}`;
      const note =
        change.renameNotFound === undefined
          ? ''
          : `<br>_renamed from ${escapeCell(change.renameNotFound)}, but the service has neither name: created_`;
      out.push(`| ${action} | ${name} | ${fields}${note} |${dryRun ? '' : ` ${result} |`}`);
    }
    out.push('');
  }
  out.push(...archiveMarkdown(org, dryRun));
  if (org.unchanged.length > 0) out.push(`${org.unchanged.length} unchanged.`, '');
  if (org.unmanaged.length > 0)
    out.push(
      `Unmanaged (in the service, not in the manifests; never changed): ${org.unmanaged.map((n) => markdownCode(n)).join(', ')}`,
      '',
    );
  out.push('</details>');
  return out;
}
