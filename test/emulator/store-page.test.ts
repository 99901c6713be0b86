/** The emulator's store page (GET /_emulator/) and its indented store JSON. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { PolicyDocument, StoredEnvironment } from '../../src/emulator/index.ts';
import { newEnvironment } from '../../src/emulator/store-document.ts';
import { escapeHtml, renderStorePage, STORE_PAGE_STYLE } from '../../src/emulator/store-page.ts';
import { send, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';

const NOW = Date.parse('2026-11-23T02:00:00.000Z');

function stored(overrides: Partial<StoredEnvironment> = {}): StoredEnvironment {
  const fields = { org: 'acme', name: 'prod', type: 'K8S', description: 'Production' };
  const more = { require_provenance: true, policies: ['baseline'], tags: { team: 'core' } };
  return {
    ...newEnvironment({ ...fields, ...more, last_modified_at: 1_763_000_000.5 }, 0),
    ...overrides,
  };
}

const version = (n: number, policy_yaml: string, timestamp: number, created_by: string) => ({
  version: n,
  policy_yaml,
  timestamp,
  created_by,
});
const doc = (name: string, description: string, created_at: number, versions: unknown[]) =>
  ({ name, description, created_at, versions }) as PolicyDocument;

const ELEMENTS = 'html head meta title style body header h1 h2 h3 p main section div table thead';
const TAGS = new Set(`${ELEMENTS} tbody tr th td code span time wbr a`.split(' '));

/** Tags that are not the renderer's own (made by text put into the page). */
function foreignTags(html: string): string[] {
  const markup = html.replace(`<style>${STORE_PAGE_STYLE}</style>`, '');
  return [...markup.matchAll(/<[^>]*>/g)]
    .map(([tag]) => tag)
    .filter((tag) => {
      if (tag === '<!doctype html>') return false;
      const match = /^<\/?([a-z0-9]+)((?: [a-z-]+="[^"<>]*")*)>$/.exec(tag);
      return match === null || !TAGS.has(match[1] ?? '') || / on[a-z]+=/.test(tag);
    });
}

describe('the store page renderer', () => {
  it('shows every org, every environment with all its fields, and each policy document by version', () => {
    const old = stored({ name: 'old', archived: true, type: 'logical', included_environments: [] });
    const versions = [
      version(1, 'a: 1\n', 1_763_000_000, 'me'),
      version(2, 'a: 2\n', 1_763_000_100, 'you'),
    ];
    const baseline = doc('baseline', 'The baseline', 1_763_000_000, versions);
    const policies = {
      acme: [baseline],
      gamma: [doc('lonely', '', 1, [version(1, 'b: 1', 1, 'me')])],
    };
    const html = renderStorePage(
      { version: 1, orgs: { acme: [stored(), old], beta: [] }, policies },
      NOW,
    );
    const columns =
      'name type description include_scaling require_provenance policies included_environments ' +
      'tags state archived last_modified_at last_changed_at last_reported_at policy created_at ' +
      'version timestamp created_by policy_yaml';
    // Column names may break after an underscore, so that the table fits the window.
    for (const field of columns.split(' ')) {
      expect(html).toContain(`<th>${field.replaceAll('_', '_<wbr>')}</th>`);
    }
    for (const text of [
      '<code>acme</code>',
      '(2 environments, 1 archived)',
      '<code>[&quot;baseline&quot;]</code>',
      '<code>{&quot;team&quot;:<wbr>&quot;core&quot;}</code>',
      // A time to the second, free to break before the T; the exact value in its attributes.
      '<time datetime="2025-11-13T02:13:20.500Z" title="1763000000.5">2025-11-13<wbr>T02:13:20Z</time>',
      '<tr class="archived">',
      '<code>beta</code> <span class="dim">(0 environments)</span></h2><p class="dim">No environment.</p>',
      'Policy documents <span class="dim">(1)</span>',
      // The YAML keeps its line breaks (shown with white-space: pre-wrap).
      '<code class="text">a: 1\n</code>',
      '<code>you</code>',
      // An org with a policy document and no environment is shown all the same.
      '<code>lonely</code>',
      '<title>Emulator store: 3 orgs, 2 environments</title>',
    ]) {
      expect(html).toContain(text);
    }
    expect(html.match(/<tr><td><code>baseline/g)).toHaveLength(1);
    expect(foreignTags(html)).toEqual([]);
    expect(renderStorePage({ version: 1, orgs: {} }, NOW)).toContain('The store is empty');
  });

  it.each([
    '<script>window.__pwned=1</script>',
    '"onmouseover="alert(1)',
    "'><img src=x onerror=alert(1)>",
    'Tom & Jerry',
    'a\u202eb\nc',
  ])('shows the hostile text %j as text, never as markup', (text) => {
    const texts = { org: text, name: text, type: text, description: text, policies: [text] };
    const env = stored({ ...texts, tags: { [text]: text }, included_environments: [text] });
    const policies = { [text]: [doc(text, text, 0, [version(1, text, 0, text)])] };
    const html = renderStorePage({ version: 1, orgs: { [text]: [env] }, policies }, NOW);
    expect(foreignTags(html)).toEqual([]);
    expect(html).not.toContain(text);
    expect(html).toContain(escapeHtml(text));
    expect(escapeHtml(`<a href="x">'&'</a>\u202e\n`)).toBe(
      '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;\\u202e\\u000a',
    );
  });
});

describe('GET /_emulator/ and the store JSON', () => {
  let emu: TestEmulator;
  beforeAll(async () => {
    emu = await startTestEmulator({ orgs: ['acme'] });
  });
  afterAll(() => emu.close());
  beforeEach(() => emu.reset());

  it('serves the store as a page that loads nothing and runs no script, under the admin rules', async () => {
    await emu.putStore({
      orgs: { acme: [{ name: 'prod', type: 'S3', description: '<b>x</b> a & b' }] },
    });
    const page = (headers: Record<string, string> = {}, method: 'GET' | 'POST' = 'GET') =>
      send(`${emu.url}/_emulator/`, { dispatcher: emu.agent, headers, method });
    const response = await page();
    const { 'content-type': type, 'x-content-type-options': sniff } = response.headers;
    expect([response.status, type, sniff]).toEqual([200, 'text/html; charset=utf-8', 'nosniff']);
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toContain('script-src');
    expect(response.text).toContain('&lt;b&gt;x&lt;/b&gt; a &amp; b');
    expect(response.text).not.toContain('<b>');
    expect((await page({ 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await page({ host: 'evil.example:8080' })).status).toBe(403);
    const post = await page({}, 'POST');
    expect([post.status, post.headers.allow]).toEqual([405, 'GET, HEAD']);
  });

  it('answers GET /_emulator/store indented, one field a line, the same document', async () => {
    await emu.putStore({ orgs: { acme: [{ name: 'prod', type: 'S3', description: 'p' }] } });
    const response = await send(`${emu.url}/_emulator/store`, { dispatcher: emu.agent });
    expect(response.text).toContain('\n  "orgs": {\n');
    expect(response.text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(response.text)).toEqual(await emu.getStore());
  });
});
