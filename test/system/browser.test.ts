/**
 * The status pages in a real headless browser: Debian's chromium, driven by playwright-core,
 * against a real `envsync run` (a child process) and a real emulator. `.ci/run` installs
 * chromium when it is missing.
 */
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEnvsync, type LiveCli } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'browser-test-token-3e8a5f0c71';
const CHROMIUM = '/usr/bin/chromium';

let browser: Browser;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let context: BrowserContext | undefined;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // A fresh profile each launch (playwright makes a temporary user-data-dir), nothing from the
  // network: no first-run, sync, component or background requests.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await context?.close();
  context = undefined;
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
  await tmp.cleanup();
});

async function newPage(options: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
  context = await browser.newContext(options);
  return context.newPage();
}

/** Starts `envsync run` against `apiUrl`; resolves once its first pass has finished. */
async function startRun(apiUrl: string): Promise<{ run: LiveCli; url: string }> {
  const run = startEnvsync(
    [
      'run',
      '--manifests',
      'manifests',
      '--api-url',
      apiUrl,
      '--state',
      'state.json',
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '0',
      '--retries',
      '0',
      '--debounce',
      '100ms',
      '--settle',
      '200ms',
    ],
    { cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN } },
  );
  cleanups.push(() => run.kill());
  const url = await run.listenUrl();
  await waitFor(
    'the first pass',
    async () => {
      const response = await request(`${url}/status`);
      return ((await response.body.json()) as { lastPass: unknown }).lastPass !== null;
    },
    { timeoutMs: 30_000 },
  );
  return { run, url };
}

async function startEmulator(): Promise<TestEmulator> {
  const api = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: null }] });
  cleanups.push(() => api.close());
  return api;
}

const manifest = (org: string, names: readonly string[]) =>
  `org: ${org}\nenvironments:\n${names.map((n) => `  - name: ${n}\n    type: S3\n    description: ${n}\n`).join('')}`;

/** Text a hostile manifest or service puts where the page shows it. */
const HOSTILE = {
  listed: '<img src=x onerror="window.__pwned=1">',
  wanted: '"onmouseover="window.__pwned=2" <script>window.__pwned=3</script>',
  refusal: '<svg onload="window.__pwned=4"></svg>',
  type: '<script>window.__pwned=5</script>',
  file: 'bad<i>x.yaml',
};

describe('the daemon status page in a browser', () => {
  it('shows the orgs and their statuses, an invalid manifest at file:line:col, and hostile text as text, with no script but its own', async () => {
    // An API that lists `stage` with a hostile description and refuses every PUT with a
    // hostile message that echoes the token.
    const api = await startFakeApi((req, res) => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            env: [{ org: 'acme', name: 'stage', type: 'S3', description: HOSTILE.listed }],
          }),
        );
        return;
      }
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ message: `${HOSTILE.refusal} token ${TOKEN}` }));
    });
    cleanups.push(() => api.close());
    await tmp.write(
      'manifests/acme.yaml',
      `org: acme\nenvironments:\n  - name: stage\n    type: S3\n    description: ${JSON.stringify(HOSTILE.wanted)}\n`,
    );
    await tmp.write(
      `manifests/${HOSTILE.file}`,
      `org: beta\nenvironments:\n  - name: prod\n    type: ${JSON.stringify(HOSTILE.type)}\n    description: p\n`,
    );
    const { url } = await startRun(api.url);

    const page = await newPage();
    const response = await page.goto(`${url}/`);
    expect(response?.status()).toBe(200);
    const orgs = page.locator('table.orgs tbody tr');
    expect(await orgs.count()).toBe(2);
    expect(await orgs.nth(0).innerText()).toMatch(/^acme\s+failed/);
    expect(await orgs.nth(1).innerText()).toMatch(/^beta\s+invalid/);
    const text = await page.locator('body').innerText();
    expect(text).toContain(`manifests/${HOSTILE.file}:4:11`);
    // Field values are shown as JSON.
    expect(text).toContain(
      `description: ${JSON.stringify(HOSTILE.listed)} → ${JSON.stringify(HOSTILE.wanted)}`,
    );
    expect(text).toContain(HOSTILE.refusal);
    expect(text).toContain(HOSTILE.type);
    expect(text).not.toContain(TOKEN);
    // Nothing ran and nothing was made: no element but the page's own.
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(await page.locator('img, svg, i, iframe, object, embed').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(1);
    expect(await page.locator('[onmouseover], [onerror], [onload]').count()).toBe(0);
  });

  it('sends no request but to the daemon itself, and breaks no rule of its Content-Security-Policy', async () => {
    const api = await startEmulator();
    await tmp.write('manifests/acme.yaml', manifest('acme', ['prod']));
    const { url } = await startRun(api.url);
    const page = await newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${url}/`);
    // One refresh by the script (a fetch of the page), then every request is known.
    await page.locator('#refresh', { hasText: 'Last refreshed' }).waitFor({ timeout: 30_000 });
    expect(requests.length).toBeGreaterThanOrEqual(2);
    const origin = new URL(url).origin;
    expect(requests.filter((r) => new URL(r).origin !== origin)).toEqual([]);
    // A missing favicon is the daemon's 404, not a violation; nothing else may be logged.
    expect(problems.filter((p) => !/404/.test(p))).toEqual([]);
  });

  it('refreshes itself after a manifest changes, without a reload, and says so; warns when the daemon stops answering', async () => {
    const api = await startEmulator();
    await tmp.write('manifests/acme.yaml', manifest('acme', ['prod']));
    const { run, url } = await startRun(api.url);
    const page = await newPage();
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    await page.goto(`${url}/`);
    expect(await page.locator('table.orgs tbody tr').count()).toBe(1);

    await tmp.write('manifests/globex.yaml', manifest('globex', ['prod', 'stage']));
    await page.locator('table.orgs tbody tr', { hasText: 'globex' }).waitFor({ timeout: 45_000 });
    expect(await page.locator('table.orgs tbody tr').count()).toBe(2);
    expect(await page.locator('#refresh').innerText()).toContain('Last refreshed');
    expect(navigations).toBe(1);

    await run.kill();
    await page.locator('#refresh.stale').waitFor({ timeout: 45_000 });
    expect(await page.locator('#refresh').innerText()).toMatch(
      /^Stale: the daemon has not answered/,
    );
    // What it said last is still shown.
    expect(await page.locator('table.orgs tbody tr').count()).toBe(2);
  });

  it('warns when the daemon takes the connection and never answers (its refresh has a time limit)', async () => {
    const api = await startEmulator();
    await tmp.write('manifests/acme.yaml', manifest('acme', ['prod']));
    const { run, url } = await startRun(api.url);
    const page = await newPage();
    await page.goto(`${url}/`);
    await page.locator('#refresh', { hasText: 'Last refreshed' }).waitFor({ timeout: 45_000 });
    // Stopped, the process keeps its socket: the kernel takes connections, nothing answers.
    run.child.kill('SIGSTOP');
    try {
      await page.locator('#refresh.stale').waitFor({ timeout: 45_000 });
      expect(await page.locator('#refresh').innerText()).toMatch(/no answer within \d+ s/);
    } finally {
      run.child.kill('SIGCONT');
    }
  });

  it('shows the same content with JavaScript disabled, and reloads itself', async () => {
    const api = await startEmulator();
    await tmp.write('manifests/acme.yaml', manifest('acme', ['prod']));
    await tmp.write('manifests/beta.yaml', manifest('beta', ['prod']));
    const { url } = await startRun(api.url);
    const page = await newPage({ javaScriptEnabled: false });
    await page.goto(`${url}/`);
    const rows = page.locator('table.orgs tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).innerText()).toMatch(/^acme\s+ok/);
    expect(await rows.nth(1).innerText()).toMatch(/^beta\s+ok/);
    expect(await page.locator('body').innerText()).toContain('Last pass');
    // Without a script, the page reloads itself (a refresh in <noscript>).
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    await waitFor('a reload', () => navigations > 0, { timeoutMs: 30_000 });
    await page.waitForLoadState();
    expect(await page.locator('table.orgs tbody tr').count()).toBe(2);
  });
});

describe("the emulator's store page in a browser", () => {
  it('lists the orgs and environments with their fields, hostile text as text', async () => {
    const api = await startEmulator();
    await api.putStore({
      orgs: {
        acme: [
          { name: 'prod', type: 'K8S', description: HOSTILE.wanted, policies: ['baseline'] },
          { name: 'stage', type: 'S3', description: HOSTILE.listed },
        ],
        beta: [
          { name: 'view', type: 'logical', description: 'members', included_environments: [] },
        ],
      },
    });
    const page = await newPage();
    const response = await page.goto(`${api.url}/_emulator/`);
    expect(response?.status()).toBe(200);
    expect(await page.locator('section.org h2').allInnerTexts()).toEqual([
      'Org acme (2 environments)',
      'Org beta (1 environment)',
    ]);
    const prod = page.locator('section.org tbody tr', { hasText: 'prod' });
    expect(await prod.innerText()).toContain(HOSTILE.wanted);
    expect(await prod.innerText()).toContain('["baseline"]');
    expect(await page.locator('body').innerText()).toContain(HOSTILE.listed);
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(await page.locator('img, svg, script, iframe').count()).toBe(0);
  });

  it('fits a 1280-pixel window; narrower, its tables scroll in their boxes and the page does not', async () => {
    const api = await startEmulator();
    const environment = (name: string, type: string, description: string) => ({
      name,
      type,
      description,
      include_scaling: true,
      policies: ['baseline', 'pci', 'sox'],
      tags: { team: 'platform', tier: 'critical' },
    });
    await api.putStore({
      orgs: {
        acme: [
          environment('production-assets', 'S3', 'Static assets bucket for production, eu-west-1'),
          environment('staging', 'K8S', 'Staging cluster, deployed on every merge to main'),
          {
            name: 'everything-production',
            type: 'logical',
            description: 'Every production environment, for the audit trail',
            included_environments: ['production-assets', 'staging'],
          },
        ],
      },
      policies: {
        acme: [
          {
            name: 'baseline',
            description: 'What every environment must have, from provenance to approvals',
            versions: [
              {
                policy_yaml: `_schema: https://kosli.com/schemas/policy/environment/v1\nartifacts:\n  provenance:\n    required: true\n  attestations:\n    - name: ${'dependency-scan-'.repeat(3)}report\n      type: junit\n`,
              },
            ],
          },
        ],
      },
    });
    // How far the page scrolls sideways, and whether each table's box is in the window and
    // scrolls. As a string: the tests are type-checked without the DOM's types.
    const measure = (page: Page) =>
      page.evaluate(`({
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        boxes: [...document.querySelectorAll('div.table')].map((box) => ({
          inWindow: box.getBoundingClientRect().right <= window.innerWidth,
          scrolls: box.scrollWidth > box.clientWidth,
        })),
      })`);

    const page = await newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    expect((await page.goto(`${api.url}/_emulator/`))?.status()).toBe(200);
    expect(await measure(page)).toEqual({
      page: 0,
      boxes: [
        { inWindow: true, scrolls: false },
        { inWindow: true, scrolls: false },
      ],
    });

    await page.setViewportSize({ width: 640, height: 800 });
    expect(await measure(page)).toEqual({
      page: 0,
      boxes: [
        { inWindow: true, scrolls: true },
        { inWindow: true, scrolls: true },
      ],
    });
  });
});
