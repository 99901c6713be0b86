/** The status page's inline script and style sheet, allowed by their hashes (daemon/http.ts). */

/** How often the page's script fetches the page again, in ms. */
export const REFRESH_MS = 5000;

/**
 * The page's only script: it fetches the page again every few seconds (not while the tab is
 * hidden), swaps the content for the new one, and says when it was rendered, or that the daemon
 * stopped answering since then. It never builds markup of its own: the server's escaped HTML is parsed by
 * DOMParser (which runs no script) and moved in as nodes.
 */
export const PAGE_SCRIPT = `(() => {
  const every = ${REFRESH_MS};
  const line = document.getElementById('refresh');
  // Times are the daemon's, from the time each answer says it was rendered: the page keeps no
  // clock of its own.
  const renderedAt = (root) => {
    const time = root.querySelector('#rendered-at');
    return time === null ? NaN : Date.parse(time.dateTime);
  };
  let lastOk = renderedAt(document);
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
        // A daemon that takes the connection and never answers must not leave the page waiting.
        signal: AbortSignal.timeout(2 * every),
      });
      if (!res.ok) throw new Error('it answered ' + res.status);
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      const next = doc.getElementById('content');
      const current = document.getElementById('content');
      if (next === null || current === null) throw new Error('its answer is not a status page');
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

/** The page's only style sheet. */
export const PAGE_STYLE = `
:root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --dim: #6e7781; }
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 78rem; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 0; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.5rem; border-bottom: 1px solid var(--dim); }
h3 { font-size: 1.05rem; margin: 1.5rem 0 0.25rem; }
table { border-collapse: collapse; margin: 0.25rem 0 0.75rem; }
th, td { text-align: left; vertical-align: top; padding: 0.2rem 0.8rem 0.2rem 0; }
th { font-weight: 600; }
thead th { border-bottom: 1px solid var(--dim); }
code, .mono { font-family: ui-monospace, monospace; font-size: 0.92em; overflow-wrap: break-word; }
.dim, .muted { color: var(--dim); }
.badge { font-weight: 600; }
.st-ok, .st-success, .st-ready, .st-healthy { color: var(--ok); }
.st-failed, .st-invalid, .st-error, .st-not-ready, .st-wedged { color: var(--bad); }
.st-pending, .st-partial { color: var(--warn); }
#refresh { color: var(--dim); margin: 0.25rem 0 0; }
#refresh.stale { color: var(--bad); font-weight: 600; }
ul.problems { padding-left: 1.2rem; margin: 0.25rem 0; }
.message { white-space: pre-wrap; overflow-wrap: break-word; }
`;
