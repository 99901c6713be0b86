/** The status page's inline script, allowed by its hash (daemon/http.ts). */

/** How often the page's script fetches the page again, in ms. */
export const REFRESH_MS = 5000;

/**
 * The page's only script: it fetches the page again every few seconds (not while the tab is
 * hidden), swaps the content for the new one, and says when it was rendered, or that the daemon
 * stopped answering since then. It never builds markup of its own: the server's escaped HTML is parsed by
 * DOMParser (which runs no script) and moved in as nodes. A section the reader opened or closed
 * (a `details` with a `data-key`) stays so in the new content, which comes with the server's
 * defaults.
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
  // Recorded on the reader's click (before the details toggles), not on 'toggle': that event
  // also fires for details the server sent open.
  const chosen = new Map();
  document.addEventListener('click', (event) => {
    const summary = event.target instanceof Element ? event.target.closest('summary') : null;
    const details = summary === null ? null : summary.parentElement;
    if (details instanceof HTMLDetailsElement && details.dataset.key !== undefined) {
      chosen.set(details.dataset.key, !details.open);
    }
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
        // A daemon that takes the connection and never answers must not leave the page waiting.
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
