/**
 * The daemon's status page (`GET /`): one self-contained HTML document rendered from the status
 * model, so the first response already holds everything and the page works without JavaScript.
 * A header says how the daemon is doing in one word and colour; a card per org says its state.
 * Pure: no I/O, no clock (the time of rendering comes in). Every text from the manifests, the
 * service or the file system is escaped (status-page-format.ts), after its secrets are masked
 * (http.ts masks the model: escaping could hide one). The inline script and style are constants, allowed
 * by their hashes in the Content-Security-Policy (docs/status-page.md).
 */
import type { DaemonStatus } from './daemon-status.ts';
import { REFRESH_MS, PAGE_SCRIPT } from './status-page-assets.ts';
import { count, disclosure, duration, esc, problemList, when } from './status-page-format.ts';
import { pageHeader, shownHealth } from './status-page-header.ts';
import { orgCard } from './status-page-org.ts';
import { PAGE_STYLE } from './status-page-style.ts';

export { PAGE_SCRIPT } from './status-page-assets.ts';
export { PAGE_STYLE } from './status-page-style.ts';

/** What the page shows: the status model, readiness and liveness with their reasons, and now. */
export interface StatusPageModel {
  readonly status: DaemonStatus;
  readonly readiness: { readonly ready: boolean; readonly reason?: string | undefined };
  /** The loop's liveness (/healthz's status code): false when a pass has run for far too long. */
  readonly health: { readonly healthy: boolean; readonly reason?: string | undefined };
  /** The API's address, without credentials (Daemon#apiAddress). */
  readonly api: string;
  /** When the page is rendered, ms since the epoch. */
  readonly now: number;
  readonly version: string;
}

function fact(term: string, value: string): string {
  return `<div class="fact"><dt>${esc(term)}</dt><dd>${value}</dd></div>`;
}

/** What needs reading before the cards: problems that belong to no org, a failed state write. */
function alerts(status: DaemonStatus): string {
  const out: string[] = [];
  if (status.errors.length > 0) {
    out.push(
      `<section class="alert" aria-labelledby="unattributed"><h2 id="unattributed">Problems that belong to no org (${esc(String(status.errors.length))})</h2>${problemList(status.errors)}</section>`,
    );
  }
  if (status.stateFile.writeError !== null) {
    out.push(
      `<p class="alert"><strong>The state file could not be written:</strong> <span class="message">${esc(status.stateFile.writeError)}</span></p>`,
    );
  }
  return out.join('');
}

/** The daemon's own facts, folded away: what an operator looks up, not what people watch. */
function daemonDetails(model: StatusPageModel): string {
  const { status, health, now } = model;
  const pass = status.lastPass;
  const facts = [
    fact('Manifests', `<code>${esc(status.manifests)}</code>`),
    fact('Passes', `${esc(String(status.passes))}${status.passRunning ? ' (one is running)' : ''}`),
    fact(
      'Shard',
      status.shard === null
        ? '<span class="dim">not sharded: this daemon owns every org</span>'
        : `${esc(String(status.shard.index))} of ${esc(String(status.shard.count))} <span class="dim">(numbered from 0; this daemon owns the orgs of its shard)</span>`,
    ),
    fact(
      'State file',
      `${status.stateFile.path === null ? '<span class="dim">not loaded</span>' : `<code>${esc(status.stateFile.path)}</code>`}${status.stateFile.writeError === null ? '' : ` <span class="message">write failed: ${esc(status.stateFile.writeError)}</span>`}`,
    ),
    fact(
      'Loop',
      health.healthy ? 'live' : `wedged <span class="message">${esc(health.reason ?? '')}</span>`,
    ),
  ];
  if (pass !== null) {
    facts.push(
      fact('Last pass started', when(pass.startedAt, now)),
      fact('Waited for files to settle', duration(pass.settleWaitMs)),
    );
  }
  return disclosure('daemon', false, 'The daemon', `<dl class="facts">${facts.join('')}</dl>`);
}

/** The whole page. */
export function renderStatusPage(model: StatusPageModel): string {
  const { status, readiness, now } = model;
  const orgs = Object.entries(status.orgs);
  const health = shownHealth(status, model.health);
  const around = { now, observe: status.mode === 'observe' };
  const troubled = orgs.filter(([, o]) => o.status === 'failed' || o.status === 'invalid').length;
  const title = `envsync: ${health.level}, ${count(orgs.length, 'org')}${troubled > 0 ? `, ${troubled} failing` : ''}`;
  const cards =
    orgs.length === 0
      ? '<p class="dim">No org yet: the first pass has not finished, or the manifests declare none this daemon owns.</p>'
      : `<div class="cards">${orgs.map(([name, org], i) => orgCard(name, org, i, around)).join('')}</div>`;
  const rendered = esc(new Date(now).toISOString());
  const content =
    '<main id="content">' +
    pageHeader(status, health, readiness, model.api, now) +
    alerts(status) +
    `<section aria-labelledby="orgs"><h2 id="orgs">Orgs (${esc(String(orgs.length))})</h2>${cards}</section>` +
    `<footer>${daemonDetails(model)}` +
    `<p>Rendered at <time id="rendered-at" datetime="${rendered}">${rendered}</time> by envsync ${esc(model.version)}. The same data as JSON: <a href="status">/status</a>.</p></footer>` +
    '</main>';
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${esc(title)}</title>` +
    // Without JavaScript the page reloads itself instead.
    `<noscript><meta http-equiv="refresh" content="${REFRESH_MS / 1000}"></noscript>` +
    `<style>${PAGE_STYLE}</style></head>` +
    `<body><header class="bar"><h1>envsync status</h1><p id="refresh" role="status">Refreshes every ${REFRESH_MS / 1000} s.</p></header>` +
    content +
    `<script>${PAGE_SCRIPT}</script></body></html>\n`
  );
}
