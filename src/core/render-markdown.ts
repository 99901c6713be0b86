/** A run as markdown (a pull request comment, a step summary), each untrusted piece escaped. */
import type { FieldValue } from './model.ts';
import { dialectWords } from './dialect.ts';
import { escapeHtml, escapeMarkdown as escapeCell, markdownCode } from './escape.ts';
import { ownedWords } from './ownership.ts';
import { documentFields, plannedCounts, policyDocumentSummary, syncCounts } from './render-text.ts';
import {
  archivedWords,
  type ChangeReport,
  COMPLIANCE_WORDS,
  type ChangeResult,
  NOT_SHOWN,
  type OrgReport,
  plural,
  type ProblemReport,
  type RunReport,
  saidOnce,
  someNames,
  UNKNOWN_WORDS,
} from './report.ts';
import { patched, requestLines } from './requests.ts';
import { windowLine } from './windows.ts';

const MAX_VALUE = 80;

function code(value: FieldValue | null): string {
  if (value === null) return '_none_';
  const text = JSON.stringify(value);
  return markdownCode(text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text);
}

/** A change's fields, then a line per policy and tag sent by their own operations. */
function fieldCell(change: ChangeReport): string {
  const { fields, lines } = requestLines(change);
  return [
    ...fields.map(([name, diff]) =>
      change.action === 'create'
        ? `${name}: ${code(diff.to)}`
        : `${name}: ${diff.notShown === true ? `_${NOT_SHOWN}_` : code(diff.from)} → ${code(diff.to)}${patched(change, name)}`,
    ),
    ...lines.map(
      (line) =>
        `${line.sign} ${line.what} ${markdownCode(line.subject)}` +
        (line.from === undefined
          ? ''
          : `: ${markdownCode(line.from)} → ${markdownCode(line.to ?? '')}`),
    ),
  ].join('<br>');
}

const ACTION: Record<ChangeReport['action'], string> = {
  create: '➕ create',
  update: '✏️ update',
  unverified: '❔ unverified',
  rename: '🔀 rename',
};
const RESULT: Record<ChangeResult, string> = {
  planned: 'planned',
  applied: '✅ applied',
  failed: '❌ failed',
  'not-converged': '⚠️ not converged',
};

function problemLine(p: ProblemReport): string {
  return `${markdownCode(`${p.file}:${p.line}:${p.column}`)} ${escapeCell(p.path ? `${p.path}: ${p.message}` : p.message)}`;
}

/** The counts and a table of orgs, then a section per org. */
export function renderMarkdown(report: RunReport): string {
  const s = report.summary;
  const strong = (n: number) => `**${n}**`;
  const out = [
    `### envsync ${report.dryRun ? 'plan' : 'sync'}`,
    '',
    report.dryRun
      ? `${plannedCounts(s, strong)}.`
      : `${syncCounts(s, strong)}; ${s.unchanged} unchanged, ${s.unmanaged} unmanaged.`,
    '',
  ];
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
  out.push(
    '| org | status | create | update | rename | archive | unverified | unchanged | unmanaged | errors |',
  );
  out.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const org of report.orgs) {
    const count = (action: string) => org.changes.filter((c) => c.action === action).length;
    const archives = org.archives ?? [];
    const errors =
      org.errors.length +
      (org.error === undefined ? 0 : 1) +
      [...org.changes, ...archives].filter((c) => c.error !== undefined).length;
    const status =
      org.status !== 'ok' ? `❌ ${org.status}` : org.suspended === true ? '⏸️ suspended' : '✅ ok';
    out.push(
      `| ${escapeCell(org.org)} | ${status} | ${count('create')} | ${count('update')} | ${count('rename')} | ${archives.length} | ${count('unverified')} | ${org.unchanged.length} | ${org.unmanaged.length} | ${errors} |`,
    );
  }
  out.push('');
  if (report.errors.length > 0) {
    out.push('#### Manifest errors outside any org', '');
    out.push(...report.errors.map((p) => `- ${problemLine(p)}`), '');
  }
  for (const org of report.orgs) {
    if (!saidOnce(failure, org)) out.push(...renderOrg(org, report.dryRun), '');
  }
  return `${out.join('\n').trimEnd()}\n`;
}

function renderOrg(org: OrgReport, dryRun: boolean): string[] {
  const uploads = org.policyDocuments ?? [];
  const archives = org.archives ?? [];
  const pending = org.changes.length + uploads.length + archives.length;
  const summary =
    org.status === 'invalid'
      ? 'invalid manifests'
      : org.error !== undefined
        ? 'failed'
        : pending === 0
          ? 'no changes'
          : plural(pending, 'change');
  const out = [
    `<details${org.status !== 'ok' || pending > 0 ? ' open' : ''}><summary><b>${escapeHtml(org.org)}</b>: ${summary}</summary>`,
    '',
  ];
  if (org.error !== undefined) out.push(`> ❌ ${escapeCell(org.error)}`, '');
  out.push(...org.errors.map((p) => `- ❌ ${problemLine(p)}`));
  if (org.errors.length > 0)
    out.push('', '_Left alone: no request is made for an org whose manifests have errors._', '');
  const warnings = (org.warnings ?? []).map((p) => `- ⚠️ warning: ${problemLine(p)}`);
  if (warnings.length > 0) out.push(...warnings, '');
  const table = (what: string, rows: readonly (readonly [string, string, string, string])[]) => {
    if (rows.length === 0) return;
    out.push(
      `| action | ${what} | fields |${dryRun ? '' : ' result |'}`,
      `| --- | --- | --- |${dryRun ? '' : ' --- |'}`,
      ...rows.map(
        ([action, name, fields, result]) =>
          `| ${action} | ${name} | ${fields} |${dryRun ? '' : ` ${result} |`}`,
      ),
      '',
    );
  };
  const result = (item: { readonly result: ChangeResult; readonly error?: string | undefined }) =>
    `${RESULT[item.result]}${item.error === undefined ? '' : `: ${escapeCell(item.error)}`}`;
  // Policy documents first: they are sent before the environments that attach them.
  table(
    'policy document',
    uploads.map((upload) => [
      upload.action === 'create' ? '➕ create' : '✏️ update',
      escapeCell(upload.name),
      documentFields(upload, '→')
        .map((line) => escapeCell(line.replace(/\s+[:=]/, ':')))
        .join('<br>'),
      result(upload),
    ]),
  );
  const unchangedDocuments = org.policyDocumentsUnchanged?.length ?? 0;
  if (unchangedDocuments > 0) {
    out.push(`${plural(unchangedDocuments, 'policy document')} unchanged.`, '');
  }
  const notManaged = org.policyDocumentsNotManaged ?? [];
  if (notManaged.length > 0) {
    out.push(
      `Policy documents not managed (on the service, in no manifest; never deleted): ${notManaged.map((n) => markdownCode(n)).join(', ')}`,
      '',
    );
  }
  table(
    'environment',
    org.changes.map((change) => [
      `${ACTION[change.action]}${change.cause === 'drift' ? ' (drift)' : ''}`,
      change.renamedFrom === undefined
        ? escapeCell(change.name)
        : `${escapeCell(change.renamedFrom)} → ${escapeCell(change.name)}`,
      fieldCell(change) +
        (dryRun && change.knownNotConverged === true
          ? '<br>_did not take when last sent; sync does not send it again_'
          : '') +
        (change.renameNotFound === undefined
          ? ''
          : `<br>_renamed from ${escapeCell(change.renameNotFound)}, but the service has neither name: created_`) +
        [archivedWords(change), change.complianceBecomes && COMPLIANCE_WORDS]
          .map((words) => (words ? `<br>⚠️ _${escapeCell(words)}_` : ''))
          .join(''),
      result(change),
    ]),
  );
  // Archives last: they are sent after everything else.
  if (archives.length > 0) {
    out.push('Archived by prune (not in the manifests), sent last:', '');
    for (const archive of archives) {
      const shown = dryRun && archive.result === 'planned' ? '' : ` ${RESULT[archive.result]}`;
      const error = archive.error === undefined ? '' : `: ${escapeCell(archive.error)}`;
      out.push(
        `- 🗄️ archive ${escapeCell(archive.name)} _(${escapeCell(ownedWords(org.org, archive.ownedBy))})_${shown}${error}`,
      );
    }
    out.push('');
  }
  if (org.unchanged.length > 0) out.push(`${org.unchanged.length} unchanged.`, '');
  if (org.unknown !== undefined)
    out.push(`⚠️ ${UNKNOWN_WORDS}: ${org.unknown.map((n) => markdownCode(n)).join(', ')}`, '');
  if (org.unmanaged.length > 0)
    out.push(
      `Unmanaged (in the service, not in the manifests; never changed): ${org.unmanaged.map((n) => markdownCode(n)).join(', ')}`,
      '',
    );
  out.push('</details>');
  return out;
}
