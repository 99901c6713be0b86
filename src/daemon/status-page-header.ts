/**
 * The status page's header: how the daemon is doing in one word on a band of its colour, then
 * the API it talks to, the dialect, the revision, the mode and the last pass.
 */
import { dialectWords } from '../core/dialect.ts';
import {
  healthLevel,
  type DaemonStatus,
  type HealthLevel,
  type OrgState,
} from './daemon-status.ts';
import { badge, count, duration, esc, statusClass, when } from './status-page-format.ts';

const RANK: Readonly<Record<HealthLevel, number>> = { healthy: 0, degraded: 1, failing: 2 };

export interface ShownHealth {
  readonly level: HealthLevel;
  readonly reason: string | null;
}

/**
 * The level the header shows: the worse of the one `/status` gives and the one its orgs give
 * now (so that the header is never green while an org is invalid or failed, even from a model
 * put together elsewhere), and failing while the loop is wedged (/healthz answers 503 then).
 */
export function shownHealth(
  status: DaemonStatus,
  liveness: { readonly healthy: boolean; readonly reason?: string | undefined },
): ShownHealth {
  if (!liveness.healthy) {
    return {
      level: 'failing',
      reason: `the loop is wedged: ${liveness.reason ?? 'no reason given'}`,
    };
  }
  const fresh = healthLevel(status);
  return RANK[fresh.level] > RANK[status.health.level] ? fresh : status.health;
}

const LEVEL_WORDS: Readonly<Record<HealthLevel, string>> = {
  healthy: 'Healthy',
  degraded: 'Degraded',
  failing: 'Failing',
};

/** How many orgs are in each state, worst first. */
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

function tally(status: DaemonStatus): string {
  const orgs = Object.values(status.orgs);
  const parts = STATE_ORDER.flatMap((state) => {
    const n = orgs.filter((org) => org.state === state).length;
    return n === 0 ? [] : [`${esc(String(n))} ${esc(state)}`];
  });
  return `${count(orgs.length, 'org')}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}

function fact(term: string, value: string): string {
  return `<div class="fact"><dt>${esc(term)}</dt><dd>${value}</dd></div>`;
}

/** Normal or observe, and where the sync windows stand (`--sync-window`). */
function modeWords(status: DaemonStatus, now: number): string {
  const window = status.window;
  const closes = window?.closesAt === undefined ? '' : `; closes at ${when(window.closesAt, now)}`;
  const opens = window?.opensAt === undefined ? '' : `; opens at ${when(window.opensAt, now)}`;
  if (status.mode === 'observe') {
    const windows =
      window === null ? '' : `<br>Sync window ${window.open ? `open${closes}` : `closed${opens}`}`;
    return `<strong>Observe</strong>: nothing is ever sent (<code>--observe</code>)${windows}`;
  }
  if (window === null) return '<strong>Normal</strong>: changes are sent';
  return window.open
    ? `<strong>Inside a sync window</strong>: changes are sent${closes}`
    : `<strong>Outside the sync windows</strong>: changes wait${opens}`;
}

function lastPassWords(status: DaemonStatus, now: number): string {
  const running = status.passRunning ? '<br>A pass is running now.' : '';
  const pass = status.lastPass;
  if (pass === null) return `<span class="dim">No pass has finished yet.</span>${running}`;
  const error =
    pass.error === undefined ? '' : `<br><span class="message">${esc(pass.error)}</span>`;
  // Every org failed for one reason (a wrong address or token): said once, with what to check.
  const failure =
    pass.failure === undefined
      ? ''
      : `<br><span class="message">Every org failed: ${esc(`${pass.failure.message}. ${pass.failure.hint}`)}</span>`;
  return (
    `${badge(pass.result)} ${when(pass.finishedAt, now)}<br>` +
    `<span class="dim">took ${duration(pass.durationMs)}; trigger ${pass.trigger.map((t) => `<code>${esc(t)}</code>`).join(', ')}</span>` +
    error +
    failure +
    running
  );
}

/** The header: the band and the facts under it. */
export function pageHeader(
  status: DaemonStatus,
  health: ShownHealth,
  readiness: { readonly ready: boolean; readonly reason?: string | undefined },
  api: string,
  now: number,
): string {
  const readyWord = readiness.ready ? 'ready' : 'not ready';
  const band =
    `<div class="band ${statusClass(health.level)}" id="health">` +
    `<h2 class="level" id="health-level">${esc(LEVEL_WORDS[health.level])}</h2>` +
    `<p>${health.reason === null ? 'No org is invalid or failed, and the last pass ended.' : `<span class="message">${esc(health.reason.charAt(0).toUpperCase() + health.reason.slice(1))}</span>`}</p>` +
    `<p>${tally(status)}</p></div>`;
  const facts = [
    fact('API', `<code>${esc(api)}</code>`),
    fact(
      'API dialect',
      status.dialect === null
        ? '<span class="dim">not known yet (no listing read)</span>'
        : esc(dialectWords(status.dialect)),
    ),
    fact(
      'Revision',
      status.revision === null
        ? '<span class="dim">none (not a git-sync checkout)</span>'
        : `<code>${esc(status.revision)}</code>`,
    ),
    fact('Mode', modeWords(status, now)),
    fact('Last pass', lastPassWords(status, now)),
    fact(
      'Readiness',
      `${badge(readyWord)}${readiness.reason === undefined ? '' : ` <span class="message">${esc(readiness.reason)}</span>`}`,
    ),
  ];
  return `<section class="masthead" aria-labelledby="health-level">${band}<dl class="facts">${facts.join('')}</dl></section>`;
}
