/**
 * The daemon's status page (`GET /`): one self-contained HTML document rendered from the status
 * model, so the first response already holds everything and the page works without JavaScript.
 * Pure: no I/O, no clock (the time of rendering comes in). Every text from the manifests, the
 * service or the file system goes through `escapeHtml`; secrets are scrubbed from the model
 * before it is rendered (`scrubDeep`). The inline script and style are constants, allowed by
 * their hashes in the Content-Security-Policy (docs/status-page.md).
 */
import { dialectWords } from '../core/dialect.ts';
import { escapeHtml as esc } from '../core/escape.ts';
import type { FieldDiff, FieldValue } from '../core/model.ts';
import { NOT_SHOWN, type ChangeReport, type ProblemReport } from '../core/report.ts';
import type { DaemonStatus, OrgStatus } from '../core/daemon-status.ts';
import { MAX_RECENT_DRIFTS } from '../core/drift.ts';
import { requestLines } from '../core/request-lines.ts';
import { PAGE_SCRIPT, PAGE_STYLE, REFRESH_MS } from './status-page-assets.ts';
import { archivesTable, documentsTable, unmanagedCell } from './status-page-parts.ts';

export { PAGE_SCRIPT, PAGE_STYLE } from './status-page-assets.ts';

/** What the page shows: the status model, readiness and health with their reasons, and now. */
export interface StatusPageModel {
  readonly status: DaemonStatus;
  readonly readiness: { readonly ready: boolean; readonly reason?: string | undefined };
  readonly health: { readonly healthy: boolean; readonly reason?: string | undefined };
  /** When the page is rendered, ms since the epoch. */
  readonly now: number;
  readonly version: string;
}

/** A fixed class for each status word (never built from the value itself). */
const STATUS_CLASS: Readonly<Record<string, string>> = {
  ok: 'st-ok',
  success: 'st-success',
  ready: 'st-ready',
  healthy: 'st-healthy',
  failed: 'st-failed',
  invalid: 'st-invalid',
  error: 'st-error',
  'not ready': 'st-not-ready',
  wedged: 'st-wedged',
  pending: 'st-pending',
  partial: 'st-partial',
};

function badge(word: string): string {
  return `<span class="badge ${STATUS_CLASS[word] ?? ''}">${esc(word)}</span>`;
}

/** Replaces every string of a JSON-like value (keys included) by `scrub` of it. */
export function scrubDeep<T>(value: T, scrub: (text: string) => string): T {
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return scrub(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item !== null && typeof item === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(item)) {
        Object.defineProperty(out, scrub(key), {
          value: walk(inner),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return item;
  };
  return walk(value) as T;
}

/** An ISO time, and how long ago it was. */
function when(iso: string | null, now: number): string {
  if (iso === null) return '<span class="dim">never</span>';
  const at = Date.parse(iso);
  const ago = Number.isFinite(at) ? ` <span class="dim">(${esc(agoText(now - at))})</span>` : '';
  return `<time datetime="${esc(iso)}">${esc(iso)}</time>${ago}`;
}

function agoText(ms: number): string {
  if (ms < 0) return `in ${agoText(-ms).replace(/ ago$/, '')}`;
  const s = Math.round(ms / 1000);
  if (s < 90) return `${s} s ago`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 36) return `${h} h ago`;
  return `${Math.round(h / 24)} d ago`;
}

function sourceLocation(problem: ProblemReport): string {
  return `<code>${esc(problem.file)}:${esc(String(problem.line))}:${esc(String(problem.column))}</code>`;
}

function problemList(problems: readonly ProblemReport[]): string {
  const items = problems.map(
    (p) =>
      `<li>${sourceLocation(p)} ${p.path ? `<code>${esc(p.path)}</code>: ` : ''}<span class="message">${esc(p.message)}</span></li>`,
  );
  return `<ul class="problems">${items.join('')}</ul>`;
}

function showValue(value: FieldValue | null): string {
  return value === null
    ? '<span class="dim">(none)</span>'
    : `<code>${esc(JSON.stringify(value))}</code>`;
}

function fieldChanges(change: ChangeReport): string {
  const requests = requestLines(change);
  const entries = Object.entries(change.fields).filter(
    (entry): entry is [string, FieldDiff] =>
      entry[1] !== undefined && !requests.covered.has(entry[0]),
  );
  const lines = entries.map(([name, diff]) =>
    change.action === 'create'
      ? `<code>${esc(name)}</code> = ${showValue(diff.to)}`
      : `<code>${esc(name)}</code>: ${diff.notShown === true ? `<span class="dim">${esc(NOT_SHOWN)}</span>` : showValue(diff.from)} → ${showValue(diff.to)}`,
  );
  // Policies and tags sent through their own operations: a line per name or key.
  for (const line of requests.lines) {
    const moved =
      line.from === undefined
        ? ''
        : `: <code>${esc(line.from)}</code> → <code>${esc(line.to ?? '')}</code>`;
    lines.push(`${esc(line.sign)} ${esc(line.what)} <code>${esc(line.subject)}</code>${moved}`);
  }
  return lines.length === 0 ? '<span class="dim">none</span>' : lines.join('<br>');
}

function pendingTable(org: OrgStatus): string {
  if (org.pending === 0) return '<p class="dim">No pending change.</p>';
  const rows = org.pendingChanges.map(
    (c) =>
      `<tr><td><code>${esc(c.name)}</code></td><td>${esc(c.action)}${c.cause === 'drift' ? ' <span class="st-pending">(drift)</span>' : ''}</td><td>${esc(c.result)}</td><td>${fieldChanges(c)}</td><td class="message">${c.error === undefined ? '' : esc(c.error)}</td></tr>`,
  );
  const more = org.pending - org.pendingChanges.length;
  return (
    `<table class="pending"><thead><tr><th>Environment</th><th>Action</th><th>Result</th><th>Fields</th><th>Error</th></tr></thead><tbody>${rows.join('')}</tbody></table>` +
    (more > 0
      ? `<p class="dim">… and ${more} more (the first ${org.pendingChanges.length} are listed).</p>`
      : '')
  );
}

function driftTable(org: OrgStatus, now: number): string {
  if (org.recentDrift.length === 0) return '<p class="dim">No drift found.</p>';
  const rows = org.recentDrift.map(
    (d) =>
      `<tr><td><code>${esc(d.environment)}</code></td><td><code>${esc(d.field)}</code></td><td>${showValue(d.found)}</td><td>${showValue(d.declared)}</td><td>${when(d.at, now)}</td></tr>`,
  );
  return `<table class="drift"><thead><tr><th>Environment</th><th>Field</th><th>Found</th><th>Declared</th><th>Found at</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function orgSection(name: string, org: OrgStatus, now: number): string {
  const facts: [string, string][] = [
    ['Status', badge(org.status)],
    ['Last success', when(org.lastSuccess, now)],
    ['Last attempt', when(org.lastAttempt, now)],
    ['Pending changes', esc(String(org.pending))],
    ['Unmanaged environments', unmanagedCell(org)],
  ];
  if (org.failures > 0) facts.push(['Failed passes in a row', esc(String(org.failures))]);
  if (org.nextAttemptAt !== null) facts.push(['Next attempt', when(org.nextAttemptAt, now)]);
  const error =
    org.lastError === null
      ? ''
      : `<h4>Error <span class="dim">at ${when(org.lastError.at, now)}</span></h4><p class="message">${esc(org.lastError.message)}</p>` +
        (org.lastError.errors !== undefined && org.lastError.errors.length > 0
          ? problemList(org.lastError.errors)
          : '');
  return (
    `<section class="org"><h3>Org <code>${esc(name)}</code> ${badge(org.status)}</h3>` +
    factTable(facts) +
    error +
    `<h4>Pending changes</h4>${pendingTable(org)}` +
    documentsTable(org) +
    archivesTable(org) +
    `<h4>Recent drift <span class="dim">(the last ${MAX_RECENT_DRIFTS}: changed on the service, not in the manifests)</span></h4>${driftTable(org, now)}</section>`
  );
}

function factTable(facts: readonly (readonly [string, string])[]): string {
  return `<table class="facts"><tbody>${facts.map(([k, v]) => `<tr><th scope="row">${esc(k)}</th><td>${v}</td></tr>`).join('')}</tbody></table>`;
}

function orgOverview(orgs: readonly [string, OrgStatus][], now: number): string {
  const rows = orgs.map(
    ([name, org]) =>
      `<tr><td><code>${esc(name)}</code></td><td>${badge(org.status)}</td><td>${when(org.lastSuccess, now)}</td><td>${when(org.lastAttempt, now)}</td><td>${esc(String(org.pending))}</td></tr>`,
  );
  return `<table class="orgs"><thead><tr><th>Org</th><th>Status</th><th>Last success</th><th>Last attempt</th><th>Pending</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function lastPass(pass: DaemonStatus['lastPass'], running: boolean, now: number): string {
  const runningNote = running ? '<p>A pass is running now.</p>' : '';
  if (pass === null) return `${runningNote}<p class="dim">No pass has finished yet.</p>`;
  const facts: [string, string][] = [
    ['Result', badge(pass.result)],
    ['Started', when(pass.startedAt, now)],
    ['Finished', when(pass.finishedAt, now)],
    ['Duration', `${esc(String(pass.durationMs))} ms`],
    ['Waited for files to settle', `${esc(String(pass.settleWaitMs))} ms`],
    ['Trigger', pass.trigger.map((t) => `<code>${esc(t)}</code>`).join(', ')],
  ];
  if (pass.error !== undefined)
    facts.push(['Error', `<span class="message">${esc(pass.error)}</span>`]);
  if (pass.failure !== undefined) {
    const { message, hint } = pass.failure;
    facts.push(['Every org failed', `<span class="message">${esc(`${message}. ${hint}`)}</span>`]);
  }
  return runningNote + factTable(facts);
}

/** The whole page. */
export function renderStatusPage(model: StatusPageModel): string {
  const { status, readiness, health, now } = model;
  const orgs = Object.entries(status.orgs);
  const failing = orgs.filter(([, o]) => o.status === 'failed' || o.status === 'invalid').length;
  const readyWord = readiness.ready ? 'ready' : 'not ready';
  const title = `envsync: ${readyWord}, ${orgs.length} org${orgs.length === 1 ? '' : 's'}${failing > 0 ? `, ${failing} failing` : ''}`;
  const summary: [string, string][] = [
    [
      'Readiness',
      `${badge(readyWord)}${readiness.reason === undefined ? '' : ` <span class="message">${esc(readiness.reason)}</span>`}`,
    ],
    [
      'Health',
      `${badge(health.healthy ? 'healthy' : 'wedged')}${health.reason === undefined ? '' : ` <span class="message">${esc(health.reason)}</span>`}`,
    ],
    [
      'Revision',
      status.revision === null
        ? '<span class="dim">none (not a git-sync checkout)</span>'
        : `<code>${esc(status.revision)}</code>`,
    ],
    ['Manifests', `<code>${esc(status.manifests)}</code>`],
    [
      'API dialect',
      status.dialect === null
        ? '<span class="dim">not known yet (no listing read)</span>'
        : esc(dialectWords(status.dialect)),
    ],
    ['Passes', `${esc(String(status.passes))}${status.passRunning ? ' (one is running)' : ''}`],
    [
      'Shard',
      status.shard === null
        ? '<span class="dim">not sharded: this daemon owns every org</span>'
        : `${esc(String(status.shard.index))} of ${esc(String(status.shard.count))} <span class="dim">(shards numbered from 0; this daemon owns the orgs of its shard)</span>`,
    ],
    [
      'State file',
      `${status.stateFile.path === null ? '<span class="dim">not loaded</span>' : `<code>${esc(status.stateFile.path)}</code>`}${status.stateFile.writeError === null ? '' : ` <span class="st-error">write failed: <span class="message">${esc(status.stateFile.writeError)}</span></span>`}`,
    ],
  ];
  const unattributed =
    status.errors.length === 0
      ? ''
      : `<h2>Problems that belong to no org (${esc(String(status.errors.length))})</h2>${problemList(status.errors)}`;
  const orgPart =
    orgs.length === 0
      ? '<p class="dim">No org yet: the first pass has not finished, or the manifests declare none this daemon owns.</p>'
      : orgOverview(orgs, now) + orgs.map(([name, org]) => orgSection(name, org, now)).join('');
  const content =
    `<main id="content">` +
    `<p class="dim">Rendered at <time id="rendered-at" datetime="${esc(new Date(now).toISOString())}">${esc(new Date(now).toISOString())}</time> by envsync ${esc(model.version)}. The same data as JSON: <a href="status">/status</a>.</p>` +
    `<h2>Daemon</h2>${factTable(summary)}` +
    `<h2>Last pass</h2>${lastPass(status.lastPass, status.passRunning, now)}` +
    unattributed +
    `<h2>Orgs (${esc(String(orgs.length))})</h2>${orgPart}` +
    `</main>`;
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${esc(title)}</title>` +
    // Without JavaScript the page reloads itself instead.
    `<noscript><meta http-equiv="refresh" content="${REFRESH_MS / 1000}"></noscript>` +
    `<style>${PAGE_STYLE}</style></head>` +
    `<body><header><h1>envsync status</h1><p id="refresh" role="status">Refreshes every ${REFRESH_MS / 1000} s.</p></header>` +
    content +
    `<script>${PAGE_SCRIPT}</script></body></html>\n`
  );
}
