/**
 * The status page's parts for an org's environments: the managed ones with their state, the
 * unmanaged ones by name, policy document uploads, and the archives `prune` has not carried out.
 * Every name and message is escaped here.
 */
import { MAX_ENVIRONMENT_ROWS, type OrgStatus } from './daemon-status.ts';
import { badge, disclosure, esc, table } from './status-page-format.ts';

/** Up to this many environments, an org's table is open when the page loads. */
const OPEN_ENVIRONMENTS = 12;

/** Every managed environment with its type and state, in name order. */
export function environmentsTable(name: string, org: OrgStatus): string {
  const rows = org.environments;
  if (rows.length === 0) return '';
  const body = table(
    'envs',
    ['Environment', 'Type', 'State'],
    rows.map((row) => [`<code>${esc(row.name)}</code>`, esc(row.type), badge(row.state)]),
    false,
  );
  const capped =
    rows.length >= MAX_ENVIRONMENT_ROWS
      ? `<p class="dim">The first ${esc(String(MAX_ENVIRONMENT_ROWS))} in name order are listed.</p>`
      : '';
  return disclosure(
    `${name}/environments`,
    rows.length <= OPEN_ENVIRONMENTS,
    `Environments (${esc(String(rows.length))})`,
    body + capped,
  );
}

/** The unmanaged environments by name (in the service, not in the manifests: never changed). */
export function unmanagedList(name: string, org: OrgStatus): string {
  if (org.unmanaged === 0) return '';
  const names = org.unmanagedNames.map((n) => `<li><code>${esc(n)}</code></li>`).join('');
  const more = org.unmanaged - org.unmanagedNames.length;
  return disclosure(
    `${name}/unmanaged`,
    org.unmanaged <= OPEN_ENVIRONMENTS,
    `Unmanaged environments (${esc(String(org.unmanaged))}) <span class="dim">in the service, not in the manifests: never changed</span>`,
    `<ul class="names">${names}</ul>${more > 0 ? `<p class="dim">and ${esc(String(more))} more</p>` : ''}`,
  );
}

/** Policy document uploads that did not go through in the last pass. */
export function documentsTable(org: OrgStatus): string {
  const uploads = org.pendingPolicyDocuments ?? [];
  if (uploads.length === 0) return '';
  const rows = uploads.map((d) => [
    `<code>${esc(d.name)}</code>`,
    esc(d.action),
    badge(d.result),
    esc(Object.keys(d.fields).join(', ')),
    d.error === undefined ? '' : `<span class="message">${esc(d.error)}</span>`,
  ]);
  return (
    '<h4>Pending policy documents</h4>' +
    table('pending', ['Policy document', 'Action', 'Result', 'Differs', 'Error'], rows)
  );
}

/** Under prune: the archives the last pass did not carry out, and why. */
export function archivesTable(org: OrgStatus): string {
  const archives = org.pendingArchives ?? [];
  if (archives.length === 0) return '';
  const rows = archives.map((a) => [
    `<code>${esc(a.name)}</code>`,
    badge(a.result),
    esc(a.ownedBy.join(', ')),
    a.error === undefined ? '' : `<span class="message">${esc(a.error)}</span>`,
  ]);
  return (
    '<h4>Pending archives <span class="dim">(prune: not in the manifests, owned by envsync)</span></h4>' +
    table('pending', ['Environment', 'Result', 'Owned by', 'Error'], rows)
  );
}
