/**
 * The emulator's read-only store page (`GET /_emulator/`): every org, every environment with all
 * its fields (tags and attached policies included) and every policy document with each of its
 * versions, as one self-contained HTML document. Pure. Every stored text is escaped here:
 * the emulator shares no code with the client side, so it keeps its own small escaper.
 */
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
.dim { color: var(--dim); }
tr.archived { color: var(--dim); }
.text { white-space: pre-wrap; overflow-wrap: break-word; }
`;

const CONTROL =
  // oxlint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * Text inside HTML: `& < > " '` as entities, and control, line-separator and bidirectional
 * characters written visibly as `\uXXXX` (they would reorder or hide what a reader sees).
 */
export function escapeHtml(text: string): string {
  return text
    .replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const esc = escapeHtml;

/**
 * Epoch seconds as an ISO time to the second (the exact value is its title); null as a dim dash.
 */
function time(seconds: number | null): string {
  if (seconds === null) return '<span class="dim">—</span>';
  const iso = new Date(seconds * 1000).toISOString();
  // To the second, and free to break between the date and the time: a table has three columns of
  // times, and at their full width they alone pushed it past a 1280-pixel window.
  const shown = esc(iso.replace(/\.\d+Z$/, 'Z')).replace('T', '<wbr>T');
  return `<time datetime="${esc(iso)}" title="${esc(String(seconds))}">${shown}</time>`;
}

/** Text whose line breaks matter (a policy's YAML): each line escaped, the breaks kept. */
function lines(text: string): string {
  return text.split('\n').map(esc).join('\n');
}

/** Any other stored value, as JSON (null dim), free to break after each comma and colon. */
function value(item: unknown): string {
  if (item === null) return '<span class="dim">null</span>';
  return `<code>${esc(JSON.stringify(item)).replace(/[,:]/g, '$&<wbr>')}</code>`;
}

/** The columns, one per stored field (`org` is the section). */
const COLUMNS: readonly (readonly [string, (env: StoredEnvironment) => string])[] = [
  ['name', (env) => `<code>${esc(env.name)}</code>`],
  ['type', (env) => `<code>${esc(env.type)}</code>`],
  ['description', (env) => `<span class="text">${esc(env.description)}</span>`],
  ['include_scaling', (env) => value(env.include_scaling)],
  ['require_provenance', (env) => value(env.require_provenance)],
  ['policies', (env) => value(env.policies)],
  ['included_environments', (env) => value(env.included_environments)],
  ['tags', (env) => value(env.tags)],
  ['state', (env) => value(env.state)],
  ['archived', (env) => value(env.archived)],
  ['last_modified_at', (env) => time(env.last_modified_at)],
  ['last_changed_at', (env) => time(env.last_changed_at)],
  ['last_reported_at', (env) => time(env.last_reported_at)],
];

/**
 * A column's name, free to break after each underscore: whole, `require_provenance` and its
 * neighbours alone made the environments' table wider than a 1280-pixel window.
 */
function columnName(name: string): string {
  return esc(name).replaceAll('_', '_<wbr>');
}

/**
 * A table in a box of the page's width, which scrolls sideways when the table cannot be made that
 * narrow: the page itself never does.
 */
function scrolling(table: string): string {
  return `<div class="table">${table}</div>`;
}

/** One row per version of each policy document: the document's fields on its first row. */
function policyTable(documents: readonly PolicyDocument[]): string {
  const head = [
    'policy',
    'description',
    'created_at',
    'version',
    'timestamp',
    'created_by',
    'policy_yaml',
  ]
    .map((name) => `<th>${columnName(name)}</th>`)
    .join('');
  const rows = documents.flatMap((document) =>
    document.versions.map((version, index) => {
      const first = index === 0;
      const cells = [
        first ? `<code>${esc(document.name)}</code>` : '',
        first ? `<span class="text">${esc(document.description)}</span>` : '',
        first ? time(document.created_at) : '',
        value(version.version),
        time(version.timestamp),
        `<code>${esc(version.created_by)}</code>`,
        `<code class="text">${lines(version.policy_yaml)}</code>`,
      ];
      return `<tr>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`;
    }),
  );
  return (
    `<h3>Policy documents <span class="dim">(${documents.length})</span></h3>` +
    scrolling(
      `<table class="policies"><thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>`,
    )
  );
}

function orgSection(
  org: string,
  environments: readonly StoredEnvironment[],
  policies: readonly PolicyDocument[],
): string {
  const archived = environments.filter((env) => env.archived).length;
  const head = COLUMNS.map(([name]) => `<th>${columnName(name)}</th>`).join('');
  const rows = environments.map(
    (env) =>
      `<tr${env.archived ? ' class="archived"' : ''}>${COLUMNS.map(([, cell]) => `<td>${cell(env)}</td>`).join('')}</tr>`,
  );
  return (
    `<section class="org"><h2>Org <code>${esc(org)}</code> <span class="dim">(${environments.length} environment${environments.length === 1 ? '' : 's'}${archived > 0 ? `, ${archived} archived` : ''})</span></h2>` +
    (environments.length === 0
      ? '<p class="dim">No environment.</p>'
      : scrolling(
          `<table><thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>`,
        )) +
    (policies.length === 0 ? '' : policyTable(policies)) +
    '</section>'
  );
}

/** The whole page for a store document; `now` (ms since the epoch) is when it is rendered. */
export function renderStorePage(document: StoreDocument, now: number): string {
  const policies = document.policies ?? {};
  // Orgs with environments, policy documents or both, by name.
  const names = [...new Set([...Object.keys(document.orgs), ...Object.keys(policies)])].toSorted();
  const orgs = names.map((org) => ({
    org,
    environments: Object.hasOwn(document.orgs, org) ? (document.orgs[org] ?? []) : [],
    documents: Object.hasOwn(policies, org) ? (policies[org] ?? []) : [],
  }));
  const total = orgs.reduce((n, { environments }) => n + environments.length, 0);
  const body =
    orgs.length === 0
      ? '<p class="dim">The store is empty: no org has an environment or a policy yet.</p>'
      : orgs
          .map(({ org, environments, documents }) => orgSection(org, environments, documents))
          .join('');
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>Emulator store: ${orgs.length} org${orgs.length === 1 ? '' : 's'}, ${total} environment${total === 1 ? '' : 's'}</title>` +
    `<style>${STORE_PAGE_STYLE}</style></head><body>` +
    `<header><h1>Environments API emulator: store</h1>` +
    `<p class="dim">Read-only; reload to see changes. Rendered at ${esc(new Date(now).toISOString())}. ` +
    `${orgs.length} org${orgs.length === 1 ? '' : 's'}, ${total} environment${total === 1 ? '' : 's'}. ` +
    `As JSON: <a href="store">/_emulator/store</a>; also <a href="stats">stats</a>, <a href="requests">requests</a>, <a href="faults">faults</a>.</p></header>` +
    `<main id="content">${body}</main></body></html>\n`
  );
}
