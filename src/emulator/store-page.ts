/** The read-only store page (`GET /_emulator/`); pure, with its own escaper (no client code). */
import type { PolicyDocument, StoreDocument, StoredEnvironment } from './store-document.ts';

/** The page's only style sheet (allowed by its hash in the Content-Security-Policy). */
export const STORE_PAGE_STYLE = `
:root { color-scheme: light dark; --dim: #6e7781; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 90rem; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 0; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.5rem; border-bottom: 1px solid var(--dim); }
h3 { font-size: 1rem; margin: 1rem 0 0.25rem; }
.table { overflow-x: auto; margin: 0.25rem 0 0.75rem; }
table { border-collapse: collapse; font-size: 0.93rem; }
th, td { text-align: left; vertical-align: top; padding: 0.2rem 0.6rem 0.2rem 0; }
thead th { border-bottom: 1px solid var(--dim); font-weight: 600; }
code { font-family: ui-monospace, monospace; font-size: 0.92em; overflow-wrap: break-word; }
.dim, tr.archived { color: var(--dim); }
.text { white-space: pre-wrap; overflow-wrap: break-word; }
`;

const CONTROL =
  // oxlint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;
const ENTITY = new Map(
  Object.entries({ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": '#39' }),
);

/** Text inside HTML; control and bidirectional characters as `\uXXXX`, which cannot hide text. */
export function escapeHtml(text: string): string {
  return text
    .replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/[&<>"']/g, (char) => `&${ENTITY.get(char) ?? ''};`);
}

const esc = escapeHtml;
const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;
const row = (cells: string[], attributes = ''): string =>
  `<tr${attributes}>${cells.map((text) => `<td>${text}</td>`).join('')}</tr>`;

/** A cell: epoch seconds as an ISO time (the exact value its title), others as text or JSON. */
function cell(field: string, item: unknown): string {
  if (item === null) return '<span class="dim">null</span>';
  if (typeof item === 'number' && (field.endsWith('_at') || field === 'timestamp')) {
    const iso = new Date(item * 1000).toISOString();
    const shown = esc(iso.replace(/\.\d+Z$/, 'Z')).replace('T', '<wbr>T');
    return `<time datetime="${esc(iso)}" title="${esc(String(item))}">${shown}</time>`;
  }
  if (typeof item !== 'string')
    return `<code>${esc(JSON.stringify(item)).replace(/[,:]/g, '$&<wbr>')}</code>`;
  if (field === 'description') return `<span class="text">${esc(item)}</span>`;
  if (field === 'policy_yaml')
    return `<code class="text">${item.split('\n').map(esc).join('\n')}</code>`;
  return `<code>${esc(item)}</code>`;
}

/** A table in a box of the page's width that scrolls sideways when it cannot be that narrow. */
function table(columns: readonly string[], rows: readonly string[], className = ''): string {
  const head = columns.map((name) => `<th>${esc(name).replaceAll('_', '_<wbr>')}</th>`).join('');
  return `<div class="table"><table${className}><thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table></div>`;
}

const ENVIRONMENT_COLUMNS = (
  'name type description include_scaling require_provenance policies included_environments ' +
  'tags state archived last_modified_at last_changed_at last_reported_at'
).split(' ') as (keyof StoredEnvironment)[];
const VERSION_COLUMNS = ['version', 'timestamp', 'created_by', 'policy_yaml'] as const;

/** One row per version of each policy document: the document's fields on its first row. */
function policyTable(documents: readonly PolicyDocument[]): string {
  const rows = documents.flatMap((document) =>
    document.versions.map((version, index) => {
      const first = (['name', 'description', 'created_at'] as const).map((field) =>
        index === 0 ? cell(field, document[field]) : '',
      );
      return row([...first, ...VERSION_COLUMNS.map((field) => cell(field, version[field]))]);
    }),
  );
  const columns = ['policy', 'description', 'created_at', ...VERSION_COLUMNS];
  return `<h3>Policy documents <span class="dim">(${documents.length})</span></h3>${table(columns, rows, ' class="policies"')}`;
}

function orgSection(
  org: string,
  environments: readonly StoredEnvironment[],
  policies: readonly PolicyDocument[],
): string {
  const archived = environments.filter((env) => env.archived).length;
  const rows = environments.map((env) =>
    row(
      ENVIRONMENT_COLUMNS.map((field) => cell(field, env[field])),
      env.archived ? ' class="archived"' : '',
    ),
  );
  const count = `${plural(environments.length, 'environment')}${archived > 0 ? `, ${archived} archived` : ''}`;
  return (
    `<section class="org"><h2>Org <code>${esc(org)}</code> <span class="dim">(${count})</span></h2>` +
    (rows.length === 0 ? '<p class="dim">No environment.</p>' : table(ENVIRONMENT_COLUMNS, rows)) +
    (policies.length === 0 ? '' : policyTable(policies)) +
    '</section>'
  );
}

export function renderStorePage(document: StoreDocument, now: number): string {
  const policies = document.policies ?? {};
  const of = <T>(record: Record<string, T[]>, org: string): T[] =>
    Object.hasOwn(record, org) ? (record[org] ?? []) : [];
  const orgs = [...new Set([...Object.keys(document.orgs), ...Object.keys(policies)])].toSorted();
  const total = orgs.reduce((n, org) => n + of(document.orgs, org).length, 0);
  const counts = `${plural(orgs.length, 'org')}, ${plural(total, 'environment')}`;
  const body =
    orgs.length === 0
      ? '<p class="dim">The store is empty: no org has an environment or a policy yet.</p>'
      : orgs.map((org) => orgSection(org, of(document.orgs, org), of(policies, org))).join('');
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>Emulator store: ${counts}</title><style>${STORE_PAGE_STYLE}</style></head><body>` +
    `<header><h1>Environments API emulator: store</h1>` +
    `<p class="dim">Read-only; reload to see changes. Rendered at ${esc(new Date(now).toISOString())}. ${counts}. ` +
    `As JSON: <a href="store">/_emulator/store</a>; also <a href="stats">stats</a>, <a href="requests">requests</a>, <a href="faults">faults</a>.</p></header>` +
    `<main id="content">${body}</main></body></html>\n`
  );
}
