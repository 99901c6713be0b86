/**
 * The status page (`GET /`, docs/status-page.md): one self-contained HTML document rendered from
 * the status model, whole in the first response. Pure. Every text is escaped by the one template,
 * `markup`, after http.ts masked the model (escaped, a secret could no longer be found).
 */
import { formatDuration } from '../config/duration.ts';
import { dialectWords } from '../core/dialect.ts';
import { MAX_RECENT_DRIFTS } from '../core/plan.ts';
import { escapeHtml } from '../core/escape.ts';
import type { FieldValue } from '../core/model.ts';
import { NOT_SHOWN, type ChangeReport, type ProblemReport } from '../core/report.ts';
import { requestLines } from '../core/requests.ts';
import { showValue } from '../core/fields.ts';
import { PAGE_SCRIPT, PAGE_STYLE, REFRESH_MS, statusClass } from './page-assets.ts';
import { HEALTH_LEVELS, MAX_ENVIRONMENT_ROWS, ROW_STATES, SYNC_STATES } from './status.ts';
import type { DaemonStatus, OrgState } from './status.ts';

/** What the page shows: the status model, readiness and liveness, and when it is rendered. */
export interface StatusPageModel {
  readonly status: DaemonStatus;
  readonly readiness: { readonly ready: boolean; readonly reason?: string | undefined };
  readonly liveness: { readonly live: boolean; readonly reason?: string | undefined };
  /** The API's address, without credentials. */
  readonly api: string;
  readonly now: number;
  readonly version: string;
}

/** A piece of the page that is markup already: put in as it is. */
class Markup {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/**
 * The page's only template: every value is escaped (quotes too, so it is safe in an attribute),
 * but markup it made; a list is its pieces in a row; undefined, null and false put in nothing.
 */
function markup(strings: TemplateStringsArray, ...values: unknown[]): Markup {
  const piece = (value: unknown): string =>
    value instanceof Markup
      ? value.text
      : Array.isArray(value)
        ? value.map(piece).join('')
        : value === undefined || value === null || value === false
          ? ''
          : escapeHtml(`${value as string | number}`);
  return new Markup(strings.reduce((out, text, i) => `${out}${piece(values[i - 1])}${text}`));
}

type OrgCard = DaemonStatus['orgs'][string];

/** Up to this many environments, an org's table is open when the page loads. */
const OPEN_ENVIRONMENTS = 12;

/** What each state means, said under the card's name; worst first, as the header counts them. */
const STATE_WORDS: Readonly<Record<OrgState, string>> = {
  failed: 'The last pass failed for this org.',
  'not converged': 'Changes were sent, but the service did not take them.',
  invalid: 'Its manifests are invalid: the org is left alone until they are fixed.',
  drifted: 'Changed on the service, not by envsync; not set back (observe, window or suspend).',
  pending: 'Changes are planned; the next pass sends them.',
  'waiting for window': 'Changes are planned; they are sent when a sync window opens.',
  suspended: 'suspend: true in its manifests: planned, nothing is sent.',
  synced: 'The service holds what the manifests declare.',
  unknown: 'Not known: the service could not be read.',
};

/** A word in a pill of its colour (grey when the page does not know it). */
const badge = (word: string) =>
  markup`<span class="badge ${statusClass(word) || 'st-unknown'}">${word}</span>`;
const code = (text: string) => markup`<code>${text}</code>`;
const dim = (text: unknown) => markup`<span class="dim">${text}</span>`;
const message = (text: string | undefined) =>
  text !== undefined && markup`<span class="message">${text}</span>`;
const fact = (term: string, value: unknown) =>
  markup`<div class="fact"><dt>${term}</dt><dd>${value}</dd></div>`;
const count = (n: number, one: string) => `${n} ${n === 1 ? one : `${one}s`}`;
const value = (v: FieldValue | null) => (v === null ? dim('(none)') : code(showValue(v)));
const joined = (items: readonly unknown[], between: unknown) =>
  items.filter((item) => item !== false).map((item, i) => markup`${i > 0 && between}${item}`);

/** How long ago a time was (`30s ago`, `in 3h`), to the second under 90 s, then coarser. */
function agoText(ms: number): string {
  const [s, m, h] = [1000, 60_000, 3_600_000];
  const abs = Math.abs(ms);
  const unit = abs < 90 * s ? s : abs < 90 * m ? m : abs < 36 * h ? h : 24 * h;
  const rounded = Math.round(abs / unit) * unit;
  const shown = rounded === 0 ? '0s' : formatDuration(rounded);
  return ms < 0 ? `in ${shown}` : `${shown} ago`;
}

/** An ISO time in UTC and how long ago; `short`: how long ago, titled by the time. */
function when(iso: string | null, now: number, short = false): Markup {
  if (iso === null) return dim('never');
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return markup`<time>${iso}</time>`;
  const utc = new Date(at).toISOString().replace(/T(.*)\.\d+Z$/, ' $1 UTC');
  return short
    ? markup`<time datetime="${iso}" title="${utc}">${agoText(now - at)}</time>`
    : markup`<time datetime="${iso}">${utc}</time> ${dim(`(${agoText(now - at)})`)}`;
}

/** Problems at file:line:col, each file's path below the manifests `root`. */
function problemList(problems: readonly ProblemReport[], root: string) {
  const below = `${root.replace(/^\.\/|\/+$/g, '')}/`;
  const file = (f: string) => (f.startsWith(below) ? f.slice(below.length) : f);
  return markup`<ul class="problems">${problems.map(
    (p) =>
      markup`<li>${code(`${file(p.file)}:${p.line}:${p.column}`)} ${p.path && markup`${code(p.path)}: `}${message(p.message)}</li>`,
  )}</ul>`;
}

/** A table whose cells are labelled by their column: a `stack` table's rows stack on a phone. */
function table(name: string, headers: readonly string[], rows: readonly unknown[][], stack = true) {
  const head = headers.map((h) => markup`<th scope="col">${h}</th>`);
  const body = rows.map(
    (cells) =>
      markup`<tr>${cells.map((cell, i) => markup`<td data-label="${headers[i]}">${cell}</td>`)}</tr>`,
  );
  return markup`<table class="${name}${stack && ' stack'}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** A details element that the page's script keeps open or closed across refreshes, by its key. */
const disclosure = (key: string, open: boolean, summary: unknown, body: unknown) =>
  markup`<details data-key="${key}"${open && markup` open`}><summary>${summary}</summary>${body}</details>`;

/** The header: its health and sync, each on a band of its colour, then its facts. */
function header({ status, readiness, liveness, api, now }: StatusPageModel): Markup {
  // While the loop is wedged (/healthz answers 503): failing, whatever the level.
  const wedged = `the loop is wedged: ${liveness.reason ?? 'no reason given'}`;
  const health = liveness.live ? status.health : { level: 'failing' as const, reason: wedged };
  const capital = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
  const orgs = Object.values(status.orgs);
  const states = (Object.keys(STATE_WORDS) as OrgState[]).flatMap((state) => {
    const n = orgs.filter((org) => org.state === state).length;
    return n === 0 ? [] : [`${n} ${state}`];
  });
  const { window, lastPass: pass } = status;
  const closes =
    window?.closesAt !== undefined && markup`; closes at ${when(window.closesAt, now)}`;
  const opens = window?.opensAt !== undefined && markup`; opens at ${when(window.opensAt, now)}`;
  const mode =
    status.mode === 'observe'
      ? markup`<strong>Observe</strong>: nothing is ever sent (<code>--observe</code>)${window !== null && markup`<br>Sync window ${window.open ? markup`open${closes}` : markup`closed${opens}`}`}`
      : window === null
        ? markup`<strong>Normal</strong>: changes are sent`
        : window.open
          ? markup`<strong>Inside a sync window</strong>: changes are sent${closes}`
          : markup`<strong>Outside the sync windows</strong>: changes wait${opens}`;
  const lastPass = [
    pass === null
      ? dim('No pass has finished yet.')
      : markup`${badge(pass.result)} ${when(pass.finishedAt, now)}<br>${dim(markup`took ${formatDuration(pass.durationMs)}; trigger ${joined(pass.trigger.map(code), ', ')}`)}`,
    pass?.error !== undefined && markup`<br>${message(pass.error)}`,
    pass?.failure !== undefined &&
      markup`<br>${message(`Every org failed: ${pass.failure.message}. ${pass.failure.hint}`)}`,
    status.passRunning && markup`<br>A pass is running now.`,
  ];
  const facts = [
    fact('API', code(api)),
    fact(
      'API dialect',
      status.dialect === null
        ? dim('not known yet (no listing read)')
        : dialectWords(status.dialect),
    ),
    fact(
      'Revision',
      status.revision === null ? dim('none (not a git-sync checkout)') : code(status.revision),
    ),
    fact('Mode', mode),
    fact('Last pass', lastPass),
    fact(
      'Readiness',
      markup`${badge(readiness.ready ? 'ready' : 'not ready')}${readiness.reason !== undefined && markup` ${message(readiness.reason)}`}`,
    ),
  ];
  const bands = markup`<div class="band ${statusClass(health.level)}" id="health"><p class="what">Health</p><h2 class="level" id="health-level">${capital(health.level)}</h2><p>${health.reason === null ? 'No org is invalid or failed, and the last pass ended.' : message(capital(health.reason))}</p></div><div class="band ${statusClass(status.sync)}" id="sync"><p class="what">Sync</p><h2 class="level">${capital(status.sync)}</h2><p>${count(orgs.length, 'org')}${states.length > 0 && `: ${states.join(', ')}`}</p></div>`;
  return markup`<section class="masthead" aria-labelledby="health-level"><div class="bands">${bands}</div><dl class="facts">${facts}</dl></section>`;
}

/** A change's fields, one line each: `name: from → to` (`name = to` for a create). */
function fieldChanges(change: ChangeReport): Markup {
  const requests = requestLines(change);
  const lines = Object.entries(change.fields).flatMap(([name, diff]) =>
    diff === undefined || requests.covered.has(name)
      ? []
      : change.action === 'create'
        ? [markup`${code(name)} = ${value(diff.to)}`]
        : [
            markup`${code(name)}: ${diff.notShown === true ? dim(NOT_SHOWN) : value(diff.from)} → ${value(diff.to)}`,
          ],
  );
  // Policies and tags sent through operations of their own: a line per name or key.
  for (const line of requests.lines) {
    const moved = line.from !== undefined && markup`: ${code(line.from)} → ${code(line.to ?? '')}`;
    lines.push(markup`${line.sign} ${line.what} ${code(line.subject)}${moved}`);
  }
  return lines.length === 0 ? dim('none') : markup`${joined(lines, markup`<br>`)}`;
}

/** The parts of a card below its head, each left out when it has nothing to show. */
function cardParts(name: string, org: OrgCard, now: number, root: string): unknown[] {
  const { lastError: error, environments: rows } = org;
  const uploads = org.pendingPolicyDocuments ?? [];
  const archives = org.pendingArchives ?? [];
  const moreChanges = org.pending - org.pendingChanges.length;
  const moreNames = org.unmanaged - org.unmanagedNames.length;
  return [
    error !== null &&
      markup`<div class="error"><p><strong>Error</strong> ${dim(when(error.at, now))}</p>${(error.errors ?? []).length > 0 ? problemList(error.errors ?? [], root) : markup`<p class="message">${error.message}</p>`}</div>`,
    rows.length > 0 &&
      disclosure(
        `${name}/environments`,
        rows.length <= OPEN_ENVIRONMENTS,
        `Environments (${rows.length})`,
        markup`${table(
          'envs',
          ['Environment', 'Type', 'State', 'Compliance'],
          rows.map((row) => [code(row.name), row.type, badge(row.state), row.compliance ?? '']),
          false,
        )}${rows.length >= MAX_ENVIRONMENT_ROWS && markup`<p class="dim">The first ${MAX_ENVIRONMENT_ROWS} in name order are listed.</p>`}`,
      ),
    org.unmanaged > 0 &&
      disclosure(
        `${name}/unmanaged`,
        org.unmanaged <= OPEN_ENVIRONMENTS,
        markup`Unmanaged environments (${org.unmanaged}) ${dim('in the service, not in the manifests: never changed')}`,
        markup`<ul class="names">${org.unmanagedNames.map((n) => markup`<li>${code(n)}</li>`)}</ul>${moreNames > 0 && markup`<p class="dim">and ${moreNames} more</p>`}`,
      ),
    org.pending > 0 &&
      markup`<h4>Pending changes (${org.pending})</h4>${table(
        'pending',
        ['Environment', 'Action', 'Result', 'Fields', 'Error'],
        org.pendingChanges.map((c) => [
          code(c.name),
          markup`${c.action}${c.cause === 'drift' && markup` <span class="drift-mark">(drift)</span>`}`,
          badge(c.result),
          fieldChanges(c),
          message(c.error),
        ]),
      )}${moreChanges > 0 && markup`<p class="dim">… and ${moreChanges} more (the first ${org.pendingChanges.length} are listed).</p>`}`,
    uploads.length > 0 &&
      markup`<h4>Pending policy documents</h4>${table(
        'pending',
        ['Policy document', 'Action', 'Result', 'Differs', 'Error'],
        uploads.map((d) => [
          code(d.name),
          d.action,
          badge(d.result),
          Object.keys(d.fields).join(', '),
          message(d.error),
        ]),
      )}`,
    archives.length > 0 &&
      markup`<h4>Pending archives ${dim('(prune: not in the manifests, owned by envsync)')}</h4>${table(
        'pending',
        ['Environment', 'Result', 'Owned by', 'Error'],
        archives.map((a) => [
          code(a.name),
          badge(a.result),
          a.ownedBy.join(', '),
          message(a.error),
        ]),
      )}`,
    org.recentDrift.length > 0 &&
      markup`<h4>Recent drift ${dim(`(the last ${count(MAX_RECENT_DRIFTS, 'drift')}: changed on the service, not in the manifests)`)}</h4>${table(
        'drift',
        ['Environment', 'Field', 'Found', 'Declared', 'Found at'],
        org.recentDrift.map((d) => [
          code(d.environment),
          code(d.field),
          value(d.found),
          value(d.declared),
          when(d.at, now),
        ]),
      )}`,
  ];
}

/** One org's card; `index` numbers the heading's id (names go into no id). */
function orgCard(name: string, org: OrgCard, index: number, model: StatusPageModel): Markup {
  const { now } = model;
  const words =
    model.status.mode === 'observe' && org.state === 'pending'
      ? 'Changes are planned; observe mode sends nothing.'
      : STATE_WORDS[org.state];
  const counts = [
    org.environments.length > 0 &&
      markup`<span>${count(org.environments.length, 'environment')}</span>`,
    ...ROW_STATES.map((state) => {
      const n = org.environments.filter((row) => row.state === state).length;
      return n > 0 && markup`<span class="dot ${statusClass(state)}">${n} ${state}</span>`;
    }),
    org.pending > 0 && markup`<span>${count(org.pending, 'pending change')}</span>`,
    org.unmanaged > 0 && markup`<span>${org.unmanaged} unmanaged</span>`,
  ].filter((part) => part !== false);
  const failures = org.failures > 0 && markup`Failed passes in a row: ${org.failures}`;
  const next = org.nextAttemptAt !== null && markup`Next attempt ${when(org.nextAttemptAt, now)}`;
  const backoff = joined([failures, next], ' · ');
  // A card with tables takes the whole row; old drift of a synced org does not.
  const tables = [
    org.sync === 'synced' ? [] : org.recentDrift,
    org.lastError?.errors,
    org.pendingArchives,
    org.pendingPolicyDocuments,
  ];
  const wide = org.pending > 0 || tables.some((rows) => (rows?.length ?? 0) > 0);
  const token = org.tokenSource === null ? 'no token' : markup`token: ${code(org.tokenSource)}`;
  return markup`<section class="card ${statusClass(org.state)}${wide && ' wide'}" aria-labelledby="org-${index}"><div class="card-head"><h3 id="org-${index}">${code(name)}</h3>${badge(org.state)}</div><p class="dim">${words} Health: ${org.health}; sync: ${org.sync}.</p>${counts.length > 0 && markup`<p class="counts">${counts}</p>`}<p class="dim">Last success ${when(org.lastSuccess, now, true)} · last attempt ${when(org.lastAttempt, now, true)} · ${token}</p>${backoff.length > 0 && markup`<p>${backoff}</p>`}${cardParts(name, org, now, model.status.manifests)}</section>`;
}

/** The daemon's own facts, folded away: what an operator looks up, not what people watch. */
function daemonDetails({ status, liveness, now }: StatusPageModel): Markup {
  const { stateFile, shard, lastPass: pass } = status;
  const facts = [
    fact('Manifests', code(status.manifests)),
    fact('Passes', markup`${status.passes}${status.passRunning && ' (one is running)'}`),
    fact(
      'Shard',
      shard === null
        ? dim('not sharded: this daemon owns every org')
        : markup`${shard.index} of ${shard.count} ${dim('(numbered from 0; this daemon owns the orgs of its shard)')}`,
    ),
    fact(
      'State file',
      markup`${stateFile.path === null ? dim('not loaded') : code(stateFile.path)}${stateFile.writeError !== null && markup` ${message(`write failed: ${stateFile.writeError}`)}`}`,
    ),
    fact('Loop', liveness.live ? 'live' : markup`wedged ${message(liveness.reason ?? '')}`),
    pass !== null && fact('Last pass started', when(pass.startedAt, now)),
    pass !== null && fact('Waited for files to settle', formatDuration(pass.settleWaitMs)),
  ];
  return disclosure('daemon', false, 'The daemon', markup`<dl class="facts">${facts}</dl>`);
}

/** The whole page. */
export function renderStatusPage(model: StatusPageModel): string {
  const { status, now } = model;
  // Worst first: by health, then by sync; in name order within each.
  const rank = (org: OrgCard) =>
    HEALTH_LEVELS.indexOf(org.health) * SYNC_STATES.length + SYNC_STATES.indexOf(org.sync);
  const orgs = Object.entries(status.orgs).sort(([, a], [, b]) => rank(a) - rank(b));
  const level = model.liveness.live ? status.health.level : 'failing';
  const troubled = orgs.filter(([, o]) => o.status === 'failed' || o.status === 'invalid').length;
  const title = `envsync: ${level}, ${status.sync}, ${count(orgs.length, 'org')}${troubled > 0 ? `, ${troubled} failing` : ''}`;
  const rendered = new Date(now).toISOString();
  const refresh = REFRESH_MS / 1000;
  const alerts = [
    status.errors.length > 0 &&
      markup`<section class="alert" aria-labelledby="unattributed"><h2 id="unattributed">Problems that belong to no org (${status.errors.length})</h2>${problemList(status.errors, status.manifests)}</section>`,
    status.stateFile.writeError !== null &&
      markup`<p class="alert"><strong>The state file could not be written:</strong> ${message(status.stateFile.writeError)}</p>`,
  ];
  const cards =
    orgs.length === 0
      ? markup`<p class="dim">No org yet: the first pass has not finished, or the manifests declare none this daemon owns.</p>`
      : markup`<div class="cards">${orgs.map(([name, org], i) => orgCard(name, org, i, model))}</div>`;
  // The style and script are constants allowed by their hashes, kept out of the template (a
  // bundler rewrites a template that holds a closing script tag); without JavaScript, noscript.
  const style = new Markup(`<style>${PAGE_STYLE}</style>`);
  const script = new Markup(`<script>${PAGE_SCRIPT}</script>`);
  const page = markup`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title><noscript><meta http-equiv="refresh" content="${refresh}"></noscript>${style}</head><body><header class="bar"><h1>envsync status</h1><p id="refresh" role="status">Refreshes every ${refresh} s.</p></header><main id="content">${header(model)}${alerts}<section aria-labelledby="orgs"><h2 id="orgs">Orgs (${orgs.length})</h2>${cards}</section><footer>${daemonDetails(model)}<p>Rendered at <time id="rendered-at" datetime="${rendered}">${rendered}</time> by envsync ${model.version}. The same data as JSON: <a href="status">/status</a>.</p></footer></main>${script}</body></html>`;
  return `<!doctype html>\n${page.text}\n`;
}
