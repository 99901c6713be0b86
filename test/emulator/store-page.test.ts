/** The emulator's store page (GET /_emulator/) and its indented store JSON. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { escapeHtml, renderStorePage, STORE_PAGE_STYLE } from '../../src/emulator/store-page.ts';
import type { StoredEnvironment } from '../../src/emulator/store-document.ts';
import { send, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';

const NOW = Date.parse('2026-11-23T02:00:00.000Z');

function stored(overrides: Partial<StoredEnvironment> = {}): StoredEnvironment {
  return {
    org: 'acme',
    name: 'prod',
    type: 'K8S',
    description: 'Production',
    include_scaling: false,
    require_provenance: true,
    policies: ['baseline'],
    tags: { team: 'core' },
    last_modified_at: 1_763_000_000.5,
    last_reported_at: null,
    last_changed_at: 1_763_000_000.5,
    state: null,
    included_environments: null,
    archived: false,
    ...overrides,
  };
}

const TAGS = new Set(
  'html head meta title style body header h1 h2 h3 p main section div table thead tbody tr th td code span time wbr a'.split(
    ' ',
  ),
);

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
  it('lists every org and every environment with all its fields', () => {
    const html = renderStorePage(
      {
        version: 1,
        orgs: {
          acme: [
            stored(),
            stored({ name: 'old', archived: true, type: 'logical', included_environments: [] }),
          ],
          beta: [],
        },
      },
      NOW,
    );
    for (const field of [
      'name',
      'type',
      'description',
      'include_scaling',
      'require_provenance',
      'policies',
      'included_environments',
      'tags',
      'state',
      'archived',
      'last_modified_at',
      'last_changed_at',
      'last_reported_at',
    ])
      // Free to break after an underscore, so that the table fits the window.
      expect(html).toContain(`<th>${field.replaceAll('_', '_<wbr>')}</th>`);
    expect(html).toContain('<code>acme</code>');
    expect(html).toContain('(2 environments, 1 archived)');
    expect(html).toContain('<code>prod</code>');
    expect(html).toContain('<code>[&quot;baseline&quot;]</code>');
    expect(html).toContain('<code>{&quot;team&quot;:<wbr>&quot;core&quot;}</code>');
    // A time to the second, free to break before the T; the exact value in its attributes.
    expect(html).toContain(
      '<time datetime="2025-11-13T02:13:20.500Z" title="1763000000.5">2025-11-13<wbr>T02:13:20Z</time>',
    );
    expect(html).toContain('<div class="table"><table><thead>');
    expect(html).toContain('<tr class="archived">');
    expect(html).toContain('<code>beta</code>');
    expect(html).toContain('No environment.');
    expect(html).toContain('<title>Emulator store: 2 orgs, 2 environments</title>');
    expect(foreignTags(html)).toEqual([]);
  });

  it('shows the policy documents of each org, a row per version, and an org with only policies', () => {
    const html = renderStorePage(
      {
        version: 1,
        orgs: { acme: [stored()] },
        policies: {
          acme: [
            {
              name: 'baseline',
              description: 'The baseline',
              created_at: 1_763_000_000,
              versions: [
                { version: 1, policy_yaml: 'a: 1\n', timestamp: 1_763_000_000, created_by: 'me' },
                { version: 2, policy_yaml: 'a: 2\n', timestamp: 1_763_000_100, created_by: 'you' },
              ],
            },
          ],
          beta: [
            {
              name: 'lonely',
              description: '',
              created_at: 1,
              versions: [{ version: 1, policy_yaml: 'b: 1', timestamp: 1, created_by: 'me' }],
            },
          ],
        },
      },
      NOW,
    );
    for (const field of [
      'policy',
      'created_at',
      'version',
      'timestamp',
      'created_by',
      'policy_yaml',
    ])
      expect(html).toContain(`<th>${field.replaceAll('_', '_<wbr>')}</th>`);
    expect(html).toContain('Policy documents <span class="dim">(1)</span>');
    expect(html).toContain('<code>baseline</code>');
    // The YAML keeps its line breaks (shown with white-space: pre-wrap).
    expect(html).toContain('<code class="text">a: 1\n</code>');
    expect(html).toContain('<code class="text">a: 2\n</code>');
    expect(html).toContain('<code>you</code>');
    expect(html).toContain(`datetime="${new Date(1_763_000_100_000).toISOString()}"`);
    // beta has a policy document and no environment: it is shown all the same.
    expect(html).toContain('<code>beta</code>');
    expect(html).toContain('<code>lonely</code>');
    expect(html.match(/<tr><td><code>baseline/g)).toHaveLength(1);
    expect(foreignTags(html)).toEqual([]);
  });

  it('says when the store is empty', () => {
    expect(renderStorePage({ version: 1, orgs: {} }, NOW)).toContain('The store is empty');
  });

  it.each([
    '<script>window.__pwned=1</script>',
    '"onmouseover="alert(1)',
    "'><img src=x onerror=alert(1)>",
    'Tom & Jerry',
    'a\u202eb\nc',
  ])('shows the hostile text %j as text, never as markup', (text) => {
    const html = renderStorePage(
      {
        version: 1,
        orgs: {
          [text]: [
            stored({
              org: text,
              name: text,
              type: text,
              description: text,
              policies: [text],
              tags: { [text]: text },
              included_environments: [text],
            }),
          ],
        },
        policies: {
          [text]: [
            {
              name: text,
              description: text,
              created_at: 0,
              versions: [{ version: 1, policy_yaml: text, timestamp: 0, created_by: text }],
            },
          ],
        },
      },
      NOW,
    );
    expect(foreignTags(html)).toEqual([]);
    expect(html).not.toContain(text);
    expect(html).toContain(escapeHtml(text));
  });

  it('escapes HTML and shows control and bidirectional characters visibly', () => {
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

  it('serves the store as a page that loads nothing and runs no script', async () => {
    await emu.putStore({
      orgs: { acme: [{ name: 'prod', type: 'S3', description: '<b>x</b> a & b' }] },
    });
    const response = await send(`${emu.url}/_emulator/`, { dispatcher: emu.agent });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).not.toContain('script-src');
    expect(response.text).toContain('&lt;b&gt;x&lt;/b&gt; a &amp; b');
    expect(response.text).not.toContain('<b>');
  });

  it('keeps the admin rules: a page of another site or a foreign Host gets nothing', async () => {
    const crossSite = await send(`${emu.url}/_emulator/`, {
      dispatcher: emu.agent,
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.status).toBe(403);
    const rebound = await send(`${emu.url}/_emulator/`, {
      dispatcher: emu.agent,
      headers: { host: 'evil.example:8080' },
    });
    expect(rebound.status).toBe(403);
    const post = await send(`${emu.url}/_emulator/`, { dispatcher: emu.agent, method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('answers GET /_emulator/store indented, one field a line, the same document', async () => {
    await emu.putStore({ orgs: { acme: [{ name: 'prod', type: 'S3', description: 'p' }] } });
    const response = await send(`${emu.url}/_emulator/store`, { dispatcher: emu.agent });
    expect(response.text.split('\n').length).toBeGreaterThan(10);
    expect(response.text).toContain('\n  "orgs": {\n');
    expect(response.text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(response.text)).toEqual(await emu.getStore());
  });
});
