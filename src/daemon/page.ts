/**
 * The daemon's status page (`GET /`, docs/status-page.md): one self-contained HTML document
 * rendered from the status model, so the first response already holds everything and the page
 * works without JavaScript. A header says how the daemon is doing in one word and colour; a card
 * per org says its state, then its environments, what is pending, drifted or waiting to be
 * archived. Pure: no I/O, no clock (the time of rendering comes in). Every text from the
 * manifests, the service or the file system is escaped here, after its secrets are masked
 * (daemon/http.ts masks the model: escaping could hide one).
 */
import { formatDuration } from '../config/duration.ts';
import { dialectWords } from '../core/dialect.ts';
import { MAX_RECENT_DRIFTS } from '../core/drift.ts';
import { escapeHtml as esc } from '../core/escape.ts';
import type { FieldDiff, FieldValue } from '../core/model.ts';
import { NOT_SHOWN, type ChangeReport, type ProblemReport } from '../core/report.ts';
import { requestLines } from '../core/request-lines.ts';
import { showValue } from '../core/value-kinds.ts';
import { PAGE_SCRIPT, PAGE_STYLE, REFRESH_MS, statusClass } from './page-assets.ts';
import {
  MAX_ENVIRONMENT_ROWS,
  type DaemonStatus,
  type EnvironmentRow,
  type HealthLevel,
  type OrgState,
} from './status.ts';

/** What the page shows: the status model, readiness and liveness with their reasons, and now. */
export interface StatusPageModel {
  readonly status: DaemonStatus;
  readonly readiness: { readonly ready: boolean; readonly reason?: string | undefined };
  /** The loop's liveness (/healthz's status code): not live when a pass has run far too long. */
  readonly liveness: { readonly live: boolean; readonly reason?: string | undefined };
  /** The API's address, without credentials (Daemon#apiAddress). */
  readonly api: string;
  /** When the page is rendered, ms since the epoch. */
  readonly now: number;
  readonly version: string;
}

type OrgCard = DaemonStatus['orgs'][string];

/** Up to this many environments, an org's table is open when the page loads. */
const OPEN_ENVIRONMENTS = 12;

/** What each state means, said under the card's name. */
const STATE_WORDS: Readonly<Record<OrgState, string>> = {
  synced: 'The service holds what the manifests declare.',
  pending: 'Changes are planned; the next pass sends them.',
  drifted: 'The service was changed by hand; observe mode does not set it back.',
  'waiting for window': 'Changes are planned; they are sent when a sync window opens.',
  suspended: 'suspend: true in its manifests: planned, nothing is sent.',
  invalid: 'Its manifests are invalid: the org is left alone until they are fixed.',
  failed: 'The last pass failed for this org.',
  'not converged': 'Changes were sent, but the service did not take them.',
};

/** The org states worst first, as the header counts them. */
const STATE_ORDER: readonly OrgState[] = [
  'failed',
  'not converged',
  'invalid',
  'drifted',
  'pending',
  'waiting for window',
  'suspended',
  'synced',
];

const ROW_STATES: readonly EnvironmentRow['state'][] = [
  'synced',
  'pending',
  'drifted',
  'failed',
  'not converged',
];

const LEVEL_WORDS: Readonly<Record<HealthLevel, string>> = {
  healthy: 'Healthy',
  degraded: 'Degraded',
  failing: 'Failing',
};

/** A word in a pill of its colour (a word the page does not know is grey). */
const badge = (word: string) =>
  `<span class="badge ${statusClass(word) || 'st-unknown'}">${esc(word)}</span>`;
const code = (text: string) => `<code>${esc(text)}</code>`;
const dim = (html: string) => `<span class="dim">${html}</span>`;
const message = (text: string) => `<span class="message">${esc(text)}</span>`;
const fact = (term: string, value: string) =>
  `<div class="fact"><dt>${esc(term)}</dt><dd>${value}</dd></div>`;

/** `1 org`, `2 orgs`. */
const count = (n: number, one: string) => `${esc(String(n))} ${n === 1 ? one : `${one}s`}`;

/** How long ago a time was (`30s ago`, `in 3h`), to the second under 90 s, then coarser. */
function agoText(ms: number): string {
  const abs = Math.abs(ms);
  const [s, m, h] = [1000, 60_000, 3_600_000];
  const unit = abs < 90 * s ? s : abs < 90 * m ? m : abs < 36 * h ? h : 24 * h;
  const shown = formatDuration(Math.round(abs / unit) * unit);
  return ms < 0 ? `in ${shown}` : `${shown} ago`;
}

const utc = (at: number) =>
  new Date(at)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

/** An ISO time as people read it (to the second, UTC), and how long ago it was. */
function when(iso: string | null, now: number): string {
  if (iso === null) return dim('never');
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return `<time>${esc(iso)}</time>`;
  return `<time datetime="${esc(iso)}">${esc(utc(at))}</time> ${dim(`(${esc(agoText(now - at))})`)}`;
}

/** How long ago an ISO time was, the time itself as the element's title (for the cards). */
function ago(iso: string | null, now: number): string {
  if (iso === null) return dim('never');
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return `<time>${esc(iso)}</time>`;
  return `<time datetime="${esc(iso)}" title="${esc(utc(at))}">${esc(agoText(now - at))}</time>`;
}

const value = (v: FieldValue | null) => (v === null ? dim('(none)') : code(showValue(v)));

/** Manifest problems, each at file:line:col with its YAML path. */
function problemList(problems: readonly ProblemReport[]): string {
  const items = problems.map(
    (p) =>
      `<li>${code(`${p.file}:${p.line}:${p.column}`)} ${p.path ? `${code(p.path)}: ` : ''}${message(p.message)}</li>`,
  );
  return `<ul class="problems">${items.join('')}</ul>`;
}

/**
 * A table with a header row; each cell of a row is labelled by its column, so that on a narrow
 * screen a `stack` table's rows become blocks of labelled lines.
 */
function table(name: string, headers: readonly string[], rows: readonly string[][], stack = true) {
  const head = headers.map((h) => `<th scope="col">${esc(h)}</th>`).join('');
  const body = rows
    .map(
      (cells) =>
        `<tr>${cells.map((cell, i) => `<td data-label="${esc(headers[i] ?? '')}">${cell}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<table class="${name}${stack ? ' stack' : ''}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** A details element the page's script keeps open or closed across refreshes by its key. */
const disclosure = (key: string, open: boolean, summary: string, body: string) =>
  `<details data-key="${esc(key)}"${open ? ' open' : ''}><summary>${summary}</summary>${body}</details>`;

/** The header: how the daemon is doing on a band of its colour, then the facts under it. */
function header(model: StatusPageModel): string {
  const { status, readiness, liveness, now } = model;
  // While the loop is wedged (/healthz answers 503), failing, whatever the level.
  const health = liveness.live
    ? status.health
    : {
        level: 'failing' as const,
        reason: `the loop is wedged: ${liveness.reason ?? 'no reason given'}`,
      };
  const orgs = Object.values(status.orgs);
  const states = STATE_ORDER.flatMap((state) => {
    const n = orgs.filter((org) => org.state === state).length;
    return n === 0 ? [] : [`${esc(String(n))} ${esc(state)}`];
  });
  const band =
    `<div class="band ${statusClass(health.level)}" id="health">` +
    `<h2 class="level" id="health-level">${esc(LEVEL_WORDS[health.level])}</h2>` +
    `<p>${health.reason === null ? 'No org is invalid or failed, and the last pass ended.' : message(health.reason.charAt(0).toUpperCase() + health.reason.slice(1))}</p>` +
    `<p>${count(orgs.length, 'org')}${states.length > 0 ? `: ${states.join(', ')}` : ''}</p></div>`;
  const { window, lastPass: pass } = status;
  const closes = window?.closesAt === undefined ? '' : `; closes at ${when(window.closesAt, now)}`;
  const opens = window?.opensAt === undefined ? '' : `; opens at ${when(window.opensAt, now)}`;
  const mode =
    status.mode === 'observe'
      ? `<strong>Observe</strong>: nothing is ever sent (<code>--observe</code>)${window === null ? '' : `<br>Sync window ${window.open ? `open${closes}` : `closed${opens}`}`}`
      : window === null
        ? '<strong>Normal</strong>: changes are sent'
        : window.open
          ? `<strong>Inside a sync window</strong>: changes are sent${closes}`
          : `<strong>Outside the sync windows</strong>: changes wait${opens}`;
  const lastPass =
    (pass === null
      ? dim('No pass has finished yet.')
      : `${badge(pass.result)} ${when(pass.finishedAt, now)}<br>` +
        dim(
          `took ${esc(formatDuration(pass.durationMs))}; trigger ${pass.trigger.map(code).join(', ')}`,
        ) +
        (pass.error === undefined ? '' : `<br>${message(pass.error)}`) +
        // Every org failed for one reason (a wrong address or token): said once, with what to check.
        (pass.failure === undefined
          ? ''
          : `<br>${message(`Every org failed: ${pass.failure.message}. ${pass.failure.hint}`)}`)) +
    (status.passRunning ? '<br>A pass is running now.' : '');
  const facts = [
    fact('API', code(model.api)),
    fact(
      'API dialect',
      status.dialect === null
        ? dim('not known yet (no listing read)')
        : esc(dialectWords(status.dialect)),
    ),
    fact(
      'Revision',
      status.revision === null ? dim('none (not a git-sync checkout)') : code(status.revision),
    ),
    fact('Mode', mode),
    fact('Last pass', lastPass),
    fact(
      'Readiness',
      `${badge(readiness.ready ? 'ready' : 'not ready')}${readiness.reason === undefined ? '' : ` ${message(readiness.reason)}`}`,
    ),
  ];
  return `<section class="masthead" aria-labelledby="health-level">${band}<dl class="facts">${facts.join('')}</dl></section>`;
}

/** A change's fields, one line each: `name: from → to` (`name = to` for a create). */
function fieldChanges(change: ChangeReport): string {
  const requests = requestLines(change);
  const lines = Object.entries(change.fields).flatMap(
    ([name, diff]: [string, FieldDiff | undefined]) =>
      diff === undefined || requests.covered.has(name)
        ? []
        : change.action === 'create'
          ? [`${code(name)} = ${value(diff.to)}`]
          : [
              `${code(name)}: ${diff.notShown === true ? dim(esc(NOT_SHOWN)) : value(diff.from)} → ${value(diff.to)}`,
            ],
  );
  // Policies and tags sent through their own operations: a line per name or key.
  for (const line of requests.lines) {
    const moved = line.from === undefined ? '' : `: ${code(line.from)} → ${code(line.to ?? '')}`;
    lines.push(`${esc(line.sign)} ${esc(line.what)} ${code(line.subject)}${moved}`);
  }
  return lines.length === 0 ? dim('none') : lines.join('<br>');
}

/** The parts of a card below its head, each empty when it has nothing to show. */
function cardParts(name: string, org: OrgCard, now: number): string {
  const parts: string[] = [];
  const error = org.lastError;
  if (error !== null) {
    parts.push(
      `<div class="error"><p><strong>Error</strong> ${dim(when(error.at, now))}</p>` +
        `<p class="message">${esc(error.message)}</p>${(error.errors ?? []).length > 0 ? problemList(error.errors ?? []) : ''}</div>`,
    );
  }
  const rows = org.environments;
  if (rows.length > 0) {
    const body = table(
      'envs',
      ['Environment', 'Type', 'State'],
      rows.map((row) => [code(row.name), esc(row.type), badge(row.state)]),
      false,
    );
    const capped =
      rows.length >= MAX_ENVIRONMENT_ROWS
        ? `<p class="dim">The first ${esc(String(MAX_ENVIRONMENT_ROWS))} in name order are listed.</p>`
        : '';
    parts.push(
      disclosure(
        `${name}/environments`,
        rows.length <= OPEN_ENVIRONMENTS,
        `Environments (${esc(String(rows.length))})`,
        body + capped,
      ),
    );
  }
  if (org.unmanaged > 0) {
    const names = org.unmanagedNames.map((n) => `<li>${code(n)}</li>`).join('');
    const more = org.unmanaged - org.unmanagedNames.length;
    parts.push(
      disclosure(
        `${name}/unmanaged`,
        org.unmanaged <= OPEN_ENVIRONMENTS,
        `Unmanaged environments (${esc(String(org.unmanaged))}) ${dim('in the service, not in the manifests: never changed')}`,
        `<ul class="names">${names}</ul>${more > 0 ? `<p class="dim">and ${esc(String(more))} more</p>` : ''}`,
      ),
    );
  }
  const failure = (error?: string) => (error === undefined ? '' : message(error));
  if (org.pending > 0) {
    const more = org.pending - org.pendingChanges.length;
    parts.push(
      `<h4>Pending changes (${esc(String(org.pending))})</h4>` +
        table(
          'pending',
          ['Environment', 'Action', 'Result', 'Fields', 'Error'],
          org.pendingChanges.map((c) => [
            code(c.name),
            `${esc(c.action)}${c.cause === 'drift' ? ' <span class="drift-mark">(drift)</span>' : ''}`,
            badge(c.result),
            fieldChanges(c),
            failure(c.error),
          ]),
        ) +
        (more > 0
          ? `<p class="dim">… and ${esc(String(more))} more (the first ${esc(String(org.pendingChanges.length))} are listed).</p>`
          : ''),
    );
  }
  const uploads = org.pendingPolicyDocuments ?? [];
  if (uploads.length > 0) {
    parts.push(
      '<h4>Pending policy documents</h4>' +
        table(
          'pending',
          ['Policy document', 'Action', 'Result', 'Differs', 'Error'],
          uploads.map((d) => [
            code(d.name),
            esc(d.action),
            badge(d.result),
            esc(Object.keys(d.fields).join(', ')),
            failure(d.error),
          ]),
        ),
    );
  }
  const archives = org.pendingArchives ?? [];
  if (archives.length > 0) {
    parts.push(
      `<h4>Pending archives ${dim('(prune: not in the manifests, owned by envsync)')}</h4>` +
        table(
          'pending',
          ['Environment', 'Result', 'Owned by', 'Error'],
          archives.map((a) => [
            code(a.name),
            badge(a.result),
            esc(a.ownedBy.join(', ')),
            failure(a.error),
          ]),
        ),
    );
  }
  if (org.recentDrift.length > 0) {
    parts.push(
      `<h4>Recent drift ${dim(`(the last ${count(MAX_RECENT_DRIFTS, 'drift')}: changed on the service, not in the manifests)`)}</h4>` +
        table(
          'drift',
          ['Environment', 'Field', 'Found', 'Declared', 'Found at'],
          org.recentDrift.map((d) => [
            code(d.environment),
            code(d.field),
            value(d.found),
            value(d.declared),
            when(d.at, now),
          ]),
        ),
    );
  }
  return parts.join('');
}

/** One org's card; `index` numbers the heading's id (names go into no id). */
function orgCard(name: string, org: OrgCard, index: number, model: StatusPageModel): string {
  const { now } = model;
  const words =
    model.status.mode === 'observe' && org.state === 'pending'
      ? 'Changes are planned; observe mode sends nothing.'
      : STATE_WORDS[org.state];
  const counts = [
    ...(org.environments.length === 0
      ? []
      : [`<span>${count(org.environments.length, 'environment')}</span>`]),
    ...ROW_STATES.flatMap((state) => {
      const n = org.environments.filter((row) => row.state === state).length;
      return n === 0
        ? []
        : [`<span class="dot ${statusClass(state)}">${esc(String(n))} ${esc(state)}</span>`];
    }),
    ...(org.pending === 0 ? [] : [`<span>${count(org.pending, 'pending change')}</span>`]),
    ...(org.unmanaged === 0 ? [] : [`<span>${esc(String(org.unmanaged))} unmanaged</span>`]),
  ];
  const backoff = [
    ...(org.failures > 0 ? [`Failed passes in a row: ${esc(String(org.failures))}`] : []),
    ...(org.nextAttemptAt === null ? [] : [`Next attempt ${when(org.nextAttemptAt, now)}`]),
  ];
  // A card with tables wide enough takes the whole row.
  const wide =
    org.pending > 0 ||
    org.recentDrift.length > 0 ||
    (org.lastError?.errors?.length ?? 0) > 0 ||
    (org.pendingArchives?.length ?? 0) > 0 ||
    (org.pendingPolicyDocuments?.length ?? 0) > 0;
  const token = org.tokenSource === null ? 'no token' : `token: ${code(org.tokenSource)}`;
  return (
    `<section class="card ${statusClass(org.state)}${wide ? ' wide' : ''}" aria-labelledby="org-${index}">` +
    `<div class="card-head"><h3 id="org-${index}">${code(name)}</h3>${badge(org.state)}</div>` +
    `<p class="dim">${esc(words)}</p>` +
    (counts.length === 0 ? '' : `<p class="counts">${counts.join('')}</p>`) +
    `<p class="dim">Last success ${ago(org.lastSuccess, now)} · last attempt ${ago(org.lastAttempt, now)} · ${token}</p>` +
    (backoff.length > 0 ? `<p>${backoff.join(' · ')}</p>` : '') +
    cardParts(name, org, now) +
    '</section>'
  );
}

/** The daemon's own facts, folded away: what an operator looks up, not what people watch. */
function daemonDetails({ status, liveness, now }: StatusPageModel): string {
  const { stateFile, shard, lastPass: pass } = status;
  const facts = [
    fact('Manifests', code(status.manifests)),
    fact('Passes', `${esc(String(status.passes))}${status.passRunning ? ' (one is running)' : ''}`),
    fact(
      'Shard',
      shard === null
        ? dim('not sharded: this daemon owns every org')
        : `${esc(String(shard.index))} of ${esc(String(shard.count))} ${dim('(numbered from 0; this daemon owns the orgs of its shard)')}`,
    ),
    fact(
      'State file',
      `${stateFile.path === null ? dim('not loaded') : code(stateFile.path)}${stateFile.writeError === null ? '' : ` ${message(`write failed: ${stateFile.writeError}`)}`}`,
    ),
    fact('Loop', liveness.live ? 'live' : `wedged ${message(liveness.reason ?? '')}`),
    ...(pass === null
      ? []
      : [
          fact('Last pass started', when(pass.startedAt, now)),
          fact('Waited for files to settle', esc(formatDuration(pass.settleWaitMs))),
        ]),
  ];
  return disclosure('daemon', false, 'The daemon', `<dl class="facts">${facts.join('')}</dl>`);
}

/** The whole page. */
export function renderStatusPage(model: StatusPageModel): string {
  const { status, now } = model;
  const orgs = Object.entries(status.orgs);
  const level = model.liveness.live ? status.health.level : 'failing';
  const troubled = orgs.filter(([, o]) => o.status === 'failed' || o.status === 'invalid').length;
  const title = `envsync: ${level}, ${count(orgs.length, 'org')}${troubled > 0 ? `, ${troubled} failing` : ''}`;
  const alerts =
    (status.errors.length === 0
      ? ''
      : `<section class="alert" aria-labelledby="unattributed"><h2 id="unattributed">Problems that belong to no org (${esc(String(status.errors.length))})</h2>${problemList(status.errors)}</section>`) +
    (status.stateFile.writeError === null
      ? ''
      : `<p class="alert"><strong>The state file could not be written:</strong> ${message(status.stateFile.writeError)}</p>`);
  const cards =
    orgs.length === 0
      ? '<p class="dim">No org yet: the first pass has not finished, or the manifests declare none this daemon owns.</p>'
      : `<div class="cards">${orgs.map(([name, org], i) => orgCard(name, org, i, model)).join('')}</div>`;
  const rendered = esc(new Date(now).toISOString());
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${esc(title)}</title>` +
    // Without JavaScript the page reloads itself instead.
    `<noscript><meta http-equiv="refresh" content="${REFRESH_MS / 1000}"></noscript>` +
    `<style>${PAGE_STYLE}</style></head>` +
    `<body><header class="bar"><h1>envsync status</h1><p id="refresh" role="status">Refreshes every ${REFRESH_MS / 1000} s.</p></header>` +
    `<main id="content">${header(model)}${alerts}` +
    `<section aria-labelledby="orgs"><h2 id="orgs">Orgs (${esc(String(orgs.length))})</h2>${cards}</section>` +
    `<footer>${daemonDetails(model)}` +
    `<p>Rendered at <time id="rendered-at" datetime="${rendered}">${rendered}</time> by envsync ${esc(model.version)}. The same data as JSON: <a href="status">/status</a>.</p></footer>` +
    `</main><script>${PAGE_SCRIPT}</script></body></html>\n`
  );
}
