/**
 * The status pages in a real headless browser (Debian's chromium, driven by playwright-core)
 * against a real `envsync run` and emulator. Each state of the page (scripts/status-page-scenes.ts)
 * is checked for its words and colours, console errors, axe-core and overflow at 1280 and 375 px,
 * and screenshotted into test/output/status-page/ (git-ignored) for a person to look at.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  chromium,
  type Browser,
  type BrowserContext,
  type Locator,
  type Page,
} from 'playwright-core';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { scenes, startScene } from '../../scripts/status-page-scenes.ts';
import { LEVEL_COLOURS, LIKE, STATE_COLOURS } from '../../src/daemon/page-assets.ts';
import type { OrgState } from '../../src/daemon/status.ts';
import { startEnvsync, type LiveCli } from '../helpers/cli.ts';
import { CLI } from '../helpers/entry.ts';
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
  const quiet = 'background-networking component-update sync'
    .split(' ')
    .map((f) => `--disable-${f}`);
  const args = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', ...quiet];
  browser = await chromium.launch({ executablePath: CHROMIUM, args });
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

async function newPage(options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> {
  await context?.close();
  context = await browser.newContext(options);
  return context.newPage();
}

/** Every error the page logs or throws, from now on. */
function consoleErrors(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return problems;
}

/** The card of an org, by its name. */
const cardOf = (page: Page, org: string): Locator =>
  page
    .locator('section.card')
    .filter({ has: page.locator('h3', { hasText: new RegExp(`^${org}$`) }) });
/** The badge of an org's card: its state. */
const badgeOf = (page: Page, org: string) => cardOf(page, org).locator('.card-head .badge');

/** The browser's own function, for code `evaluate` runs in the page (the tests have no DOM types). */
declare function getComputedStyle(element: unknown): { getPropertyValue(property: string): string };

/** A property of an element's computed style, as the browser gives it (colours as `rgb(...)`). */
function computed(locator: Locator, property: string): Promise<string> {
  return locator.evaluate(
    (element, name) => getComputedStyle(element).getPropertyValue(name),
    property,
  );
}

/** `#1a7f37` as computed styles give it: `rgb(26, 127, 55)`. */
function rgb(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  return `rgb(${r}, ${g}, ${b})`;
}

/** How much wider than the viewport the page is (0: no horizontal scrolling). */
const overflow = (page: Page): Promise<number> =>
  page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const OUTPUT = fileURLToPath(new URL('../output/status-page/', import.meta.url));

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core's serious and critical violations on the page at `url`, at 1280 px, at 375 px, and in
 * the dark scheme. Its script is injected inline, which the page's policy forbids, so it runs in
 * a context that bypasses the policy (the other tests check the policy itself).
 */
async function axeViolations(url: string): Promise<string[]> {
  const page = await newPage({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  await page.goto(url);
  await page.addScriptTag({ content: await readFile(AXE, 'utf8') });
  const run = async (where: string) => {
    const { violations } = (await page.evaluate('axe.run()')) as { violations: AxeViolation[] };
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v) =>
          `${where}: ${v.impact ?? ''} ${v.id}: ${v.help} ${JSON.stringify(v.nodes.map((n) => n.target))}`,
      );
  };
  const found = await run('1280 px');
  await page.setViewportSize({ width: 375, height: 812 });
  found.push(...(await run('375 px')));
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.emulateMedia({ colorScheme: 'dark' });
  found.push(...(await run('dark')));
  return found;
}

const LEVEL_WORDS = { healthy: 'Healthy', degraded: 'Degraded', failing: 'Failing' } as const;

/** Starts `envsync run` against `apiUrl`; resolves once its first pass has finished. */
async function startRun(apiUrl: string): Promise<{ run: LiveCli; url: string }> {
  const flags = `--manifests manifests --api-url ${apiUrl} --state state.json --listen 127.0.0.1:0`;
  const quick = '--interval 0 --retries 0 --debounce 100ms --settle 200ms';
  const run = startEnvsync(['run', ...`${flags} ${quick}`.split(' ')], {
    cwd: tmp.dir,
    env: { ENVSYNC_TOKEN: TOKEN },
  });
  cleanups.push(() => run.kill());
  const url = await run.listenUrl();
  const passed = async () => {
    const response = await request(`${url}/status`);
    return ((await response.body.json()) as { lastPass: unknown }).lastPass !== null;
  };
  await waitFor('the first pass', passed, { timeoutMs: 30_000 });
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
    expect(await page.locator('section.card').count()).toBe(2);
    expect(await badgeOf(page, 'acme').innerText()).toBe('failed');
    expect(await badgeOf(page, 'beta').innerText()).toBe('invalid');
    const text = await page.locator('body').innerText();
    expect(text).toContain(`${HOSTILE.file}:4:11`);
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
    page.on('request', (r) => requests.push(r.url()));
    const problems = consoleErrors(page);
    await page.goto(`${url}/`);
    // One refresh by the script (a fetch of the page), then every request is known.
    await page.locator('#refresh', { hasText: 'Last refreshed' }).waitFor({ timeout: 30_000 });
    expect(requests.length).toBeGreaterThanOrEqual(2);
    const origin = new URL(url).origin;
    expect(requests.filter((r) => new URL(r).origin !== origin)).toEqual([]);
    // Nothing is logged: no violation, no failed request (the favicon is answered with nothing).
    expect(problems).toEqual([]);
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
    expect(await page.locator('section.card').count()).toBe(1);

    await tmp.write('manifests/globex.yaml', manifest('globex', ['prod', 'stage']));
    await cardOf(page, 'globex').waitFor({ timeout: 45_000 });
    expect(await page.locator('section.card').count()).toBe(2);
    expect(await page.locator('#refresh').innerText()).toContain('Last refreshed');
    expect(navigations).toBe(1);

    // A section the reader closed stays closed through the refreshes that follow.
    const environments = () => cardOf(page, 'globex').locator('details').first();
    expect(await environments().getAttribute('open')).toBe('');
    await environments().locator('summary').click();
    const before = await page.locator('#rendered-at').getAttribute('datetime');
    await page
      .locator('#rendered-at:not([datetime="' + String(before) + '"])')
      .waitFor({ state: 'attached', timeout: 45_000 });
    expect(await environments().getAttribute('open')).toBeNull();
    expect(navigations).toBe(1);

    await run.kill();
    await page.locator('#refresh.stale').waitFor({ timeout: 45_000 });
    expect(await page.locator('#refresh').innerText()).toMatch(
      /^Stale: the daemon has not answered/,
    );
    // What it said last is still shown.
    expect(await page.locator('section.card').count()).toBe(2);
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
    expect(await page.locator('section.card').count()).toBe(2);
    expect(await badgeOf(page, 'acme').innerText()).toBe('synced');
    expect(await badgeOf(page, 'beta').innerText()).toBe('synced');
    expect(await page.locator('#health h2').innerText()).toBe('Healthy');
    // Without a script, the page reloads itself (a refresh in <noscript>).
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    await waitFor('a reload', () => navigations > 0, { timeoutMs: 30_000 });
    await page.waitForLoadState();
    expect(await page.locator('section.card').count()).toBe(2);
  });
});

describe('the status page in each of its states', () => {
  it.each(scenes(Date.now()).map((scene) => [scene.name, scene] as const))(
    '%s: says it in words and colours, logs no error, passes axe, fits 1280 and 375 px',
    async (name, scene) => {
      const running = await startScene(scene, CLI);
      cleanups.push(() => running.stop());
      const url = `${running.url}/`;
      await mkdir(OUTPUT, { recursive: true });

      const page = await newPage({ viewport: { width: 1280, height: 900 } });
      const problems = consoleErrors(page);
      await page.goto(url);
      const { level, sync, mode, states } = scene.expected;
      const band = page.locator('#health');
      expect(await band.locator('h2').innerText()).toBe(LEVEL_WORDS[level]);
      expect(await computed(band, 'background-color')).toBe(rgb(LEVEL_COLOURS[level]));
      expect(await computed(band, 'color')).toBe('rgb(255, 255, 255)');
      const syncBand = page.locator('#sync');
      expect((await syncBand.locator('h2').innerText()).toLowerCase()).toBe(sync);
      const colour = await computed(syncBand, 'background-color');
      expect(colour).toBe(rgb(STATE_COLOURS[(LIKE[sync] ?? sync) as OrgState]));
      expect(colour === rgb(STATE_COLOURS.synced)).toBe(sync === 'synced');
      const modeFact = page
        .locator('.fact')
        .filter({ has: page.locator('dt', { hasText: 'Mode' }) });
      expect(await modeFact.locator('dd').innerText()).toMatch(
        mode === 'observe' ? /^Observe: nothing is ever sent/ : /^(Normal|Outside|Inside)/,
      );
      expect(await page.locator('section.card').count()).toBe(Object.keys(states).length);
      for (const [org, state] of Object.entries(states)) {
        const badge = badgeOf(page, org);
        expect(await badge.innerText()).toBe(state);
        expect(await computed(badge, 'background-color')).toBe(rgb(STATE_COLOURS[state]));
        expect(await computed(cardOf(page, org), 'border-left-color')).toBe(
          rgb(STATE_COLOURS[state]),
        );
      }
      expect(await overflow(page)).toBe(0);
      await page.screenshot({ path: `${OUTPUT}${name}.png`, fullPage: true });

      await page.setViewportSize({ width: 375, height: 812 });
      expect(await overflow(page)).toBe(0);
      expect(await badgeOf(page, Object.keys(states)[0] ?? '').isVisible()).toBe(true);
      await page.screenshot({ path: `${OUTPUT}${name}-phone.png`, fullPage: true });
      // A refresh too logs nothing.
      await page.locator('#refresh', { hasText: 'Last refreshed' }).waitFor({ timeout: 30_000 });
      expect(problems).toEqual([]);

      expect(await axeViolations(url)).toEqual([]);
    },
    // A daemon, a browser and three accessibility checks: a safety net for a loaded machine.
    120_000,
  );
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
