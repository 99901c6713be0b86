/**
 * The status page's parts for what an org has beside its environments' changes: policy document
 * uploads, unmanaged environments by name, and the archives `prune` has not carried out. Every
 * name and message is escaped here.
 */
import type { OrgStatus } from '../core/daemon-status.ts';
import { escapeHtml as esc } from '../core/escape.ts';

/** Policy document uploads that did not go through in the last pass. */
export function documentsTable(org: OrgStatus): string {
  const uploads = org.pendingPolicyDocuments ?? [];
  if (uploads.length === 0) return '';
  const rows = uploads.map(
    (d) =>
      `<tr><td><code>${esc(d.name)}</code></td><td>${esc(d.action)}</td><td>${esc(d.result)}</td><td>${esc(Object.keys(d.fields).join(', '))}</td><td class="message">${d.error === undefined ? '' : esc(d.error)}</td></tr>`,
  );
  return `<h4>Pending policy documents</h4><table class="pending"><thead><tr><th>Policy document</th><th>Action</th><th>Result</th><th>Differs</th><th>Error</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** The count, then the names (in the service, not in the manifests: never changed). */
export function unmanagedCell(org: OrgStatus): string {
  if (org.unmanaged === 0) return '0';
  const names = org.unmanagedNames.map((name) => `<code>${esc(name)}</code>`).join(', ');
  const more = org.unmanaged - org.unmanagedNames.length;
  return `${esc(String(org.unmanaged))}: ${names}${more > 0 ? ` and ${esc(String(more))} more` : ''}`;
}

/** Under prune: the archives the last pass did not carry out, and why. */
export function archivesTable(org: OrgStatus): string {
  const archives = org.pendingArchives ?? [];
  if (archives.length === 0) return '';
  const rows = archives.map(
    (a) =>
      `<tr><td><code>${esc(a.name)}</code></td><td>${esc(a.result)}</td><td>${esc(a.ownedBy.join(', '))}</td><td class="message">${a.error === undefined ? '' : esc(a.error)}</td></tr>`,
  );
  return `<h4>Pending archives <span class="dim">(prune: not in the manifests, owned by envsync)</span></h4><table class="pending"><thead><tr><th>Environment</th><th>Result</th><th>Owned by</th><th>Error</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}
