/** GET / on the daemon's listen address: the status page over real HTTP, against a real daemon. */
import { createHash } from 'node:crypto';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { PAGE_SCRIPT, PAGE_STYLE } from '../../src/daemon/page-assets.ts';
import type { DaemonStatus } from '../../src/daemon/status.ts';
import { useDaemonWorld } from '../helpers/daemon.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'page-endpoint-token-9c4e71d2';
const HOSTILE = '<script>window.__pwned=1</script>"onmouseover="x';

const world = useDaemonWorld([{ token: TOKEN, orgs: null }]);

/** A daemon against `apiUrl`, masking `known` as `run` does. */
const startDaemon = (apiUrl: string, known: readonly string[] = []) =>
  world.start({
    apiUrl,
    secrets: known,
    flags: { retries: '0', debounce: '50ms', settle: '50ms' },
  });

/** An API that lists `stage` and refuses every PUT with a message echoing the token. */
async function refusingApi() {
  const api = await startFakeApi((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          env: [{ org: 'acme', name: 'stage', type: 'S3', description: 'old' }],
        }),
      );
      return;
    }
    res
      .writeHead(400, { 'content-type': 'application/json' })
      .end(JSON.stringify({ message: `refused ${HOSTILE} for Bearer ${TOKEN}` }));
  });
  world.cleanups.push(() => api.close());
  return api;
}

describe('GET / (the status page)', () => {
  it('serves, in its first response, the orgs, their pending changes and errors with file:line:col, escaped, with a strict policy and no secret', async () => {
    const api = await refusingApi();
    await world.tmp.write(
      'manifests/acme.yaml',
      'org: acme\nenvironments:\n  - name: prod\n    type: K8S\n    description: p\n  - name: stage\n    type: S3\n    description: new\n',
    );
    await world.tmp.write(
      'manifests/beta.yaml',
      'org: beta\nenvironments:\n  - name: prod\n    type: k8s\n    description: p\n',
    );
    // parseApiUrl refuses user information; a URL built some other way must not show it either.
    const withUser = new URL(api.url);
    withUser.username = 'someone';
    withUser.password = 'pa55word-b7e1';
    const { daemon, url } = await startDaemon(withUser.href);
    await waitFor('the first pass', () => daemon.status().lastPass !== null);
    await daemon.idle();

    const page = await request(`${url}/`);
    const html = await page.body.text();
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['cache-control']).toBe('no-store');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    // The one inline script is the one the policy allows by its hash.
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '');
    expect(scripts).toHaveLength(1);
    const hash = createHash('sha256')
      .update(scripts[0] ?? '')
      .digest('base64');
    expect(csp).toContain(`script-src 'sha256-${hash}'`);
    // Nothing loads from anywhere: the one address in the page is the API's, shown as text.
    expect(html.replace(`<code>${api.url}/</code>`, '')).not.toMatch(
      /<(?:link|img|iframe|object|embed)\b|src=|https?:\/\//,
    );

    expect(html).toContain('<code>acme</code>');
    expect(html).toContain('<code>beta</code>');
    expect(html).toContain('<span class="badge st-failed">failed</span>');
    expect(html).toContain('<span class="badge st-invalid">invalid</span>');
    expect(html).toContain(
      '<td data-label="Environment"><code>prod</code></td><td data-label="Action">create</td><td data-label="Result"><span class="badge st-failed">failed</span></td>',
    );
    // The header: the level in words and colour, and the API's address.
    expect(html).toContain('<div class="band lv-failing" id="health">');
    expect(html).toContain(`<dt>API</dt><dd><code>${api.url}/</code></dd>`);
    expect(html).toContain(
      '<code>description</code>: <code>&quot;old&quot;</code> → <code>&quot;new&quot;</code>',
    );
    expect(html).toContain('<code>beta.yaml:4:11</code>');
    expect(html).toContain(
      'refused &lt;script&gt;window.__pwned=1&lt;/script&gt;&quot;onmouseover',
    );
    expect(html).not.toContain(HOSTILE);
    for (const secret of [TOKEN, TOKEN.slice(-12), 'pa55word', 'someone']) {
      expect(html).not.toContain(secret);
    }
    // Liveness alone makes /healthz's status code; the level is in its body. No icon: nothing.
    const healthz = await request(`${url}/healthz`);
    expect(healthz.statusCode).toBe(200);
    expect(await healthz.body.json()).toEqual({
      status: 'ok',
      health: { level: 'failing', reason: 'every org (2) is invalid or failed' },
    });
    const icon = await request(`${url}/favicon.ico`);
    expect([icon.statusCode, await icon.body.text()]).toEqual([204, '']);

    // Only GET: other methods on / get 405 with Allow.
    const post = await request(`${url}/`, { method: 'POST' });
    await post.body.dump();
    expect([post.statusCode, post.headers['allow']]).toEqual([405, 'GET']);

    // /status: the same model as JSON, with its fields in their order.
    const response = await request(`${url}/status`);
    expect(response.headers['content-type']).toBe('application/json');
    const status = (await response.body.json()) as DaemonStatus;
    expect(Object.keys(status)).toEqual(
      'revision manifests ready passes lastPass passRunning shard errors stateFile dialect mode window health sync orgs'.split(
        ' ',
      ),
    );
    expect(Object.keys(status.orgs['acme'] ?? {})).toEqual(
      'status lastSuccess lastAttempt lastError pending pendingChanges recentDrift unmanaged suspended environments unmanagedNames failures nextAttemptAt state health sync tokenSource'.split(
        ' ',
      ),
    );
    expect(status.orgs['acme']).toMatchObject({
      status: 'failed',
      state: 'failed',
      tokenSource: 'env ENVSYNC_TOKEN',
      pending: 2,
    });
    expect(status.orgs['acme']?.pendingChanges[0]).toMatchObject({
      action: 'create',
      cause: 'change',
      name: 'prod',
      result: 'failed',
      fields: { type: { from: null, to: 'K8S' } },
      error: expect.stringContaining('[REDACTED]'),
    });
    expect(JSON.stringify(status)).not.toContain(TOKEN);
  });

  it('never masks a byte of its own style and script, whatever the secret shares with them', async () => {
    const api = await refusingApi();
    await world.tmp.write(
      'manifests/acme.yaml',
      'org: acme\nenvironments:\n  - name: stage\n    type: S3\n    description: new\n',
    );
    // Secrets that share a run of 12 characters or more with the page's own script and style.
    const shared = [PAGE_SCRIPT, PAGE_STYLE].map(
      (code) => `x-${/[A-Za-z0-9._~-]{12,}/.exec(code)?.[0] ?? ''}-9`,
    );
    expect(shared.every((secret) => secret.length > 15)).toBe(true);
    const { daemon, url } = await startDaemon(api.url, shared);
    await waitFor('the first pass', () => daemon.status().lastPass !== null);
    const page = await (await request(`${url}/`)).body.text();
    expect(page).toContain(PAGE_SCRIPT);
    expect(page).toContain(PAGE_STYLE);
  });
});
