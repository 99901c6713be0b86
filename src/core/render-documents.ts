/**
 * Policy documents in the text and markdown renderings of a plan or sync: one line per upload
 * (`+ policy document NAME`, `~ policy document NAME (content, description)`), its fields, and
 * the documents unchanged and not managed.
 */
import { escapeMarkdown, escapeText as safe, markdownCode } from './escape.ts';
import type { PolicyDocumentDiff } from './policy-documents.ts';
import type { OrgReport, PolicyDocumentReport, Summary } from './report.ts';

type Paint = (style: 'red' | 'green' | 'yellow' | 'dim', text: string) => string;

/** A digest for people: `sha256:` and its first 12 hex digits. */
export function shortDigest(digest: string): string {
  return digest.startsWith('sha256:') ? `${digest.slice(0, 19)}…` : digest;
}

/** `(content, description)` for an update: what differs. */
function differs(upload: PolicyDocumentReport): string {
  return Object.keys(upload.fields).join(', ');
}

/** The fields of one upload, one line each, as the text plan shows them. */
function fieldLines(upload: PolicyDocumentReport, arrow = '->'): string[] {
  const lines: string[] = [];
  const { content, description } = upload.fields;
  const quote = (text: string) => safe(JSON.stringify(text));
  const from = (diff: PolicyDocumentDiff, show: (text: string) => string) =>
    diff.from === null ? '(none)' : show(diff.from);
  if (content !== undefined) {
    const version = upload.version === null ? '' : `version ${upload.version} `;
    lines.push(
      upload.action === 'create'
        ? `content     = ${shortDigest(content.to)}`
        : `content     : ${version}${from(content, shortDigest)} ${arrow} ${shortDigest(content.to)}`,
    );
  }
  if (description !== undefined) {
    lines.push(
      upload.action === 'create'
        ? `description = ${quote(description.to)}`
        : `description : ${from(description, quote)} ${arrow} ${quote(description.to)}`,
    );
  }
  return lines;
}

/** The text lines of an org's policy documents (nothing when it has none). */
export function policyDocumentLines(org: OrgReport, dryRun: boolean, paint: Paint): string[] {
  const lines: string[] = [];
  for (const upload of org.policyDocuments ?? []) {
    let head =
      upload.action === 'create'
        ? `  ${paint('green', '+ policy document')} ${safe(upload.name)}`
        : `  ${paint('yellow', '~ policy document')} ${safe(upload.name)} (${differs(upload)})`;
    if (!dryRun || upload.result !== 'planned') {
      const mark =
        upload.result === 'applied'
          ? paint('green', 'applied')
          : upload.result === 'planned'
            ? paint('dim', 'planned')
            : paint('red', upload.result === 'failed' ? 'FAILED' : 'NOT CONVERGED');
      head += ` [${mark}]`;
    }
    lines.push(head, ...fieldLines(upload).map((line) => `      ${line}`));
    if (upload.error !== undefined) lines.push(`      ${paint('red', safe(upload.error))}`);
  }
  const unchanged = org.policyDocumentsUnchanged?.length ?? 0;
  if (unchanged > 0) {
    lines.push(
      `  ${paint('dim', `= ${unchanged} policy document${unchanged === 1 ? '' : 's'} unchanged`)}`,
    );
  }
  const notManaged = org.policyDocumentsNotManaged ?? [];
  if (notManaged.length > 0) {
    lines.push(
      `  ${paint('dim', `policy documents not managed (on the service, in no manifest; never deleted): ${notManaged.map(safe).join(', ')}`)}`,
    );
  }
  return lines;
}

/** The summary's line for policy documents, when some org has an upload. */
export function policyDocumentSummary(summary: Summary, dryRun: boolean): string | undefined {
  const counts = summary.policyDocuments;
  if (counts === undefined) return undefined;
  return dryRun
    ? `Policy documents: ${counts.create} to create, ${counts.update} to update.`
    : `Policy documents: ${counts.applied} applied, ${counts.failed} failed (${counts.create} to create, ${counts.update} to update).`;
}

/** The markdown of an org's policy documents (nothing when it has none). */
export function policyDocumentMarkdown(org: OrgReport, dryRun: boolean): string[] {
  const out: string[] = [];
  const uploads = org.policyDocuments ?? [];
  if (uploads.length > 0) {
    out.push(
      dryRun
        ? '| action | policy document | fields |'
        : '| action | policy document | fields | result |',
      dryRun ? '| --- | --- | --- |' : '| --- | --- | --- | --- |',
    );
    for (const upload of uploads) {
      const action = upload.action === 'create' ? '➕ create' : '✏️ update';
      const fields = fieldLines(upload, '→')
        .map((line) => escapeMarkdown(line.replace(/\s+[:=]/, ':')))
        .join('<br>');
      const mark = {
        planned: 'planned',
        applied: '✅ applied',
        failed: '❌ failed',
        'not-converged': '⚠️ not converged',
      }[upload.result];
      const result = `${mark}${upload.error === undefined ? '' : `: ${escapeMarkdown(upload.error)}`}`;
      out.push(
        `| ${action} | ${escapeMarkdown(upload.name)} | ${fields} |${dryRun ? '' : ` ${result} |`}`,
      );
    }
    out.push('');
  }
  const unchanged = org.policyDocumentsUnchanged?.length ?? 0;
  if (unchanged > 0)
    out.push(`${unchanged} policy document${unchanged === 1 ? '' : 's'} unchanged.`, '');
  const notManaged = org.policyDocumentsNotManaged ?? [];
  if (notManaged.length > 0) {
    out.push(
      `Policy documents not managed (on the service, in no manifest; never deleted): ${notManaged.map((n) => markdownCode(n)).join(', ')}`,
      '',
    );
  }
  return out;
}
