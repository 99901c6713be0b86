/**
 * The status page's style sheet and script, allowed by their hashes in its Content-Security-Policy
 * (http.ts), and its colours: one per org state and health level, in light and dark schemes alike,
 * each dark enough for white text on it (WCAG AA).
 */
import type { HealthLevel, OrgState } from './status.ts';

/** Each org state's colour: its badge's background and its card's edge. */
export const STATE_COLOURS: Readonly<Record<OrgState, string>> = {
  synced: '#1a7f37',
  pending: '#0969da',
  drifted: '#9a6700',
  'waiting for window': '#8250df',
  suspended: '#59636e',
  invalid: '#cf222e',
  failed: '#a40e26',
  'not converged': '#bc4c00',
  unknown: '#424a53',
};

/** Each health level's colour: the header's band. */
export const LEVEL_COLOURS: Readonly<Record<HealthLevel, string>> = {
  healthy: '#1a7f37',
  degraded: '#9a6700',
  failing: '#cf222e',
};

/** The other words the page shows in a badge or band, coloured as the state they mean. */
export const LIKE: Readonly<Record<string, OrgState>> = {
  ok: 'synced',
  success: 'synced',
  ready: 'synced',
  partial: 'drifted',
  'out-of-sync': 'pending',
  waiting: 'waiting for window',
  planned: 'pending',
  'not-converged': 'not converged',
  error: 'failed',
  'not ready': 'invalid',
};

/** The class of a status word, empty for a word not known: a word from outside picks no class. */
export function statusClass(word: string): string {
  const state = Object.hasOwn(LIKE, word) ? LIKE[word] : word;
  if (state !== undefined && Object.hasOwn(STATE_COLOURS, state))
    return `st-${state.replaceAll(' ', '-')}`;
  return Object.hasOwn(LEVEL_COLOURS, word) ? `lv-${word}` : '';
}

const colourRules = [...Object.entries(STATE_COLOURS), ...Object.entries(LEVEL_COLOURS)]
  .map(([word, colour]) => `.${statusClass(word)} { --c: ${colour}; }`)
  .join('\n');

/** How often the page's script fetches the page again, in ms. */
export const REFRESH_MS = 5000;

/** The page's only style sheet. */
export const PAGE_STYLE = `
:root {
  color-scheme: light dark;
  --bg: #f6f8fa; --fg: #1f2328; --card: #ffffff; --line: #d1d9e0; --dim: #57606a; --code: #eff2f5;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --card: #161b22; --line: #3d444d; --dim: #9198a1; --code: #262c36; }
}
${colourRules}
* { box-sizing: border-box; }
html { background: var(--bg); color: var(--fg); }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 84rem; padding: 0 1rem 3rem; }
a { color: inherit; }
code { font-family: ui-monospace, monospace; font-size: 0.92em; overflow-wrap: anywhere; }
h1 { font-size: 1.1rem; margin: 0; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 0.5rem; }
h3 { font-size: 1.1rem; margin: 0; overflow-wrap: anywhere; min-width: 0; }
h4 { font-size: 0.95rem; margin: 1rem 0 0.3rem; }
p { margin: 0.3rem 0; }
.dim { color: var(--dim); }
.message { white-space: pre-wrap; overflow-wrap: anywhere; }
.bar { display: flex; flex-wrap: wrap; gap: 0.25rem 1rem; align-items: baseline; justify-content: space-between; padding: 0.6rem 0; }
#refresh { color: var(--dim); margin: 0; }
#refresh.stale { color: #fff; background: #cf222e; font-weight: 600; padding: 0.3rem 0.6rem; border-radius: 0.4rem; }
.badge { display: inline-block; background: var(--c, #59636e); color: #fff; font-weight: 600; font-size: 0.85rem; line-height: 1.2; padding: 0.15rem 0.55rem; border-radius: 1rem; white-space: nowrap; }
.bands { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 20rem), 1fr)); border-radius: 0.6rem 0.6rem 0 0; overflow: hidden; }
.band { background: var(--c); color: #fff; padding: 1rem 1.25rem; }
.band .what { margin: 0; font-size: 0.75rem; font-weight: 600; text-transform: uppercase; letter-spacing: 0.04em; }
.band .level { font-size: 2rem; font-weight: 700; line-height: 1.1; margin: 0; }
.band .level::before { content: ""; display: inline-block; width: 0.7em; height: 0.7em; margin-right: 0.35em; border-radius: 50%; background: #fff; vertical-align: 0.05em; }
.band p { margin: 0.35rem 0 0; overflow-wrap: anywhere; }
.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 15rem), 1fr)); gap: 0.75rem 1.25rem; margin: 0 0 1rem; padding: 0.9rem 1.25rem; background: var(--card); border: 1px solid var(--line); border-radius: 0.6rem; }
.masthead .facts { border-top: 0; border-radius: 0 0 0.6rem 0.6rem; }
.fact { min-width: 0; }
.fact dt { font-size: 0.75rem; text-transform: uppercase; letter-spacing: 0.04em; color: var(--dim); margin: 0 0 0.15rem; font-weight: 600; }
.fact dd { margin: 0; overflow-wrap: anywhere; }
.alert { background: var(--card); border: 1px solid var(--line); border-left: 0.4rem solid #cf222e; border-radius: 0.6rem; padding: 0.6rem 1rem; margin: 0 0 1rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 24rem), 1fr)); grid-auto-flow: row dense; gap: 1rem; }
.card { min-width: 0; background: var(--card); border: 1px solid var(--line); border-left: 0.4rem solid var(--c); border-radius: 0.6rem; padding: 0.8rem 1rem; }
.card.wide { grid-column: 1 / -1; }
.card-head { display: flex; gap: 0.5rem 0.75rem; align-items: center; justify-content: space-between; flex-wrap: wrap; }
.counts { display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; margin: 0.5rem 0; }
.counts .dot::before { content: ""; display: inline-block; width: 0.6em; height: 0.6em; margin-right: 0.3em; border-radius: 50%; background: var(--c); }
.error { border-left: 3px solid #cf222e; padding: 0.1rem 0 0.1rem 0.7rem; margin: 0.6rem 0; }
details { margin: 0.5rem 0; }
summary { cursor: pointer; font-weight: 600; }
table { border-collapse: collapse; width: 100%; margin: 0.3rem 0 0.5rem; }
th, td { text-align: left; vertical-align: top; padding: 0.3rem 0.6rem 0.3rem 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
table.envs { max-width: 48rem; }
thead th { font-size: 0.8rem; color: var(--dim); font-weight: 600; }
.names { display: flex; flex-wrap: wrap; gap: 0.3rem 0.5rem; list-style: none; padding: 0; margin: 0.3rem 0; }
.names code, td > code:only-child { background: var(--code); padding: 0.05rem 0.3rem; border-radius: 0.3rem; }
ul.problems { padding-left: 1.2rem; margin: 0.3rem 0; }
ul.problems li { overflow-wrap: anywhere; }
.drift-mark { font-weight: 600; }
footer { margin-top: 2rem; color: var(--dim); }
footer details { color: var(--fg); }
@media (max-width: 40rem) {
  body { padding: 0 0.6rem 2rem; }
  .band { padding: 0.8rem 0.9rem; }
  .band .level { font-size: 1.6rem; }
  .facts { padding: 0.8rem 0.9rem; }
  .card { padding: 0.7rem 0.75rem; }
  table.stack, .stack tbody, .stack tr, .stack td { display: block; width: 100%; }
  .stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  .stack tr { border-bottom: 1px solid var(--line); padding: 0.3rem 0; }
  .stack td { border: 0; padding: 0.1rem 0; }
  .stack td[data-label]::before { content: attr(data-label) ": "; color: var(--dim); font-size: 0.85rem; }
  .stack td:empty { display: none; }
}
`;

/**
 * The page's only script (docs/status-page.md, "Refresh"): it fetches the page again every few
 * seconds while the tab is shown and moves in the new content, parsed by DOMParser (which runs no
 * script): it builds no markup of its own. A section the reader opened or closed stays so.
 */
export const PAGE_SCRIPT = `(() => {
  const every = ${REFRESH_MS};
  const line = document.getElementById('refresh');
  // Times are the daemon's, from when each answer says it was rendered.
  const renderedAt = (root) => Date.parse(root.querySelector('#rendered-at')?.dateTime ?? '');
  let lastOk = renderedAt(document);
  // Recorded on the reader's click, not on 'toggle', which also fires for details sent open.
  const chosen = new Map();
  document.addEventListener('click', (event) => {
    const details = event.target instanceof Element ? event.target.closest('summary')?.parentElement : null;
    if (details instanceof HTMLDetailsElement && details.dataset.key !== undefined)
      chosen.set(details.dataset.key, !details.open);
  });
  const keepChoices = (root) => {
    for (const details of root.querySelectorAll('details[data-key]')) {
      const open = chosen.get(details.dataset.key);
      if (open !== undefined) details.open = open;
    }
  };
  let busy = false;
  const clock = (t) => (Number.isFinite(t) ? new Date(t).toLocaleTimeString() : 'the page was loaded');
  const say = (text, stale) => {
    line.textContent = text;
    line.classList.toggle('stale', stale);
  };
  async function refresh() {
    if (busy || document.hidden) return;
    busy = true;
    try {
      const res = await fetch(location.pathname + location.search, {
        cache: 'no-store',
        credentials: 'same-origin',
        redirect: 'error',
        headers: { accept: 'text/html' },
        signal: AbortSignal.timeout(2 * every),
      });
      if (!res.ok) throw new Error('it answered ' + res.status);
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      const next = doc.getElementById('content');
      const current = document.getElementById('content');
      if (next === null || current === null) throw new Error('its answer is not a status page');
      keepChoices(next);
      current.replaceWith(document.adoptNode(next));
      document.title = doc.title;
      lastOk = renderedAt(next);
      say('Last refreshed at ' + clock(lastOk) + '; refreshes every ' + every / 1000 + ' s.', false);
    } catch (error) {
      const why =
        error instanceof Error && error.name === 'TimeoutError'
          ? 'no answer within ' + (2 * every) / 1000 + ' s'
          : error instanceof Error && error.message ? error.message : 'no answer';
      say('Stale: the daemon has not answered since ' + clock(lastOk) + ' (' + why +
        '); this is what it said then. Trying again every ' + every / 1000 + ' s.', true);
    } finally {
      busy = false;
    }
  }
  setInterval(refresh, every);
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden) void refresh();
  });
})();
`;
