import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileScrub } from '../../src/core/redact.ts';
import type { ChangeReport, OrgReport } from '../../src/core/report.ts';
import {
  PAGE_SCRIPT,
  PAGE_STYLE,
  renderStatusPage,
  scrubDeep,
  type StatusPageModel,
} from '../../src/daemon/status-page.ts';
import {
  MAX_PENDING_CHANGES,
  orgStatusAfter,
  type DaemonStatus,
  type OrgState,
  type OrgStatus,
} from '../../src/core/daemon-status.ts';

const NOW = Date.parse('2026-11-23T02:00:00.000Z');

function orgStatus(
  overrides: Partial<OrgStatus & { state: OrgState }> = {},
): OrgStatus & { state: OrgState } {
  return {
    state: 'synced',
    suspended: false,
    environments: [],
    status: 'ok',
    lastSuccess: '2026-11-23T01:59:00.000Z',
    lastAttempt: '2026-11-23T01:59:30.000Z',
    lastError: null,
    pending: 0,
    pendingChanges: [],
    recentDrift: [],
    unmanaged: 0,
    unmanagedNames: [],
    failures: 0,
    nextAttemptAt: null,
    ...overrides,
  };
}

function daemonStatus(overrides: Partial<DaemonStatus> = {}): DaemonStatus {
  return {
    revision: null,
    manifests: 'manifests',
    ready: true,
    passes: 1,
    dialect: null,
    lastPass: {
      startedAt: '2026-11-23T01:59:29.000Z',
      finishedAt: '2026-11-23T01:59:30.000Z',
      durationMs: 1000,
      settleWaitMs: 0,
      result: 'success',
      trigger: ['start'],
    },
    passRunning: false,
    shard: null,
    errors: [],
    stateFile: { path: '/var/lib/envsync/state.json', writeError: null },
    mode: 'normal',
    window: null,
    health: { level: 'healthy', reason: null },
    orgs: { acme: orgStatus() },
    ...overrides,
  };
}

function model(status: DaemonStatus, extra: Partial<StatusPageModel> = {}): StatusPageModel {
  return {
    status,
    readiness: { ready: status.ready },
    health: { healthy: true },
    now: NOW,
    version: '0.1.0',
    ...extra,
  };
}

/** The page less its own constant script and style: what is left is markup and escaped text. */
function markupOf(html: string): string {
  expect(html.split(PAGE_SCRIPT)).toHaveLength(2);
  expect(html.split(PAGE_STYLE)).toHaveLength(2);
  // The page's own script and style elements, once each; any other is foreign.
  return html
    .replace(`<script>${PAGE_SCRIPT}</script>`, '')
    .replace(`<style>${PAGE_STYLE}</style>`, '');
}

const TAGS = new Set(
  'html head meta title noscript style body header h1 h2 h3 h4 p main table thead tbody tr th td code span time a ul li br section'.split(
    ' ',
  ),
);
const ATTRIBUTES = new Set(
  'lang charset name content http-equiv id role class datetime href scope'.split(' '),
);

/** The tags of `markup` that are not the renderer's own, or carry an attribute it never writes. */
function foreignTags(markup: string): string[] {
  const foreign: string[] = [];
  for (const [tag] of markup.matchAll(/<[^>]*>/g)) {
    if (tag === '<!doctype html>') continue;
    const match = /^<\/?([a-z0-9]+)((?: [a-z-]+="[^"<>]*")*)>$/.exec(tag);
    const own =
      match !== null &&
      TAGS.has(match[1] ?? '') &&
      [...(match[2] ?? '').matchAll(/ ([a-z-]+)="/g)].every(([, a]) => ATTRIBUTES.has(a ?? '')) &&
      !/href="(?!status")/.test(tag);
    if (!own) foreign.push(tag);
  }
  return foreign;
}

/**
 * Every tag of the page is one of the renderer's own, with only its own attributes: no text put
 * into the page made an element or an attribute; and every `&` in the text starts an entity.
 */
function expectOnlyOwnMarkup(html: string): void {
  const markup = markupOf(html);
  expect(foreignTags(markup)).toEqual([]);
  expect(markup.replace(/<[^>]*>/g, '')).not.toMatch(/&(?!amp;|lt;|gt;|quot;|#39;)/);
}

const HOSTILE = [
  '<script>window.__pwned=1</script>',
  '"onmouseover="window.__pwned=1',
  "'><img src=x onerror=alert(1)>",
  'Tom & Jerry &amp; &lt;',
  '</main><script>alert(1)</script>',
  'a\u202eb\nc\u0000',
];

/**
 * Any text of up to 30 code points, printable ASCII the most likely: the code points of
 * fast-check's `fc.string({ unit: 'binary' })`, and lone surrogates too, without the table of every
 * code point that arbitrary builds on first use (over a second of CPU, for 40 runs).
 */
const anyText = fc
  .array(
    fc
      .integer({ min: 0, max: 0x10ffff })
      .map((i) => String.fromCodePoint(i < 95 ? i + 0x20 : i <= 0x7e ? i - 95 : i)),
    { maxLength: 30 },
  )
  .map((chars) => chars.join(''));

const change = (name: string, extra: Partial<ChangeReport> = {}): ChangeReport => ({
  action: 'update',
  cause: 'change',
  name,
  fields: { description: { from: 'old', to: 'new' } },
  result: 'planned',
  ...extra,
});

describe('the status page renderer', () => {
  it('shows every org with its status, last success, last attempt and pending count', () => {
    const html = renderStatusPage(
      model(
        daemonStatus({
          orgs: {
            acme: orgStatus(),
            globex: orgStatus({ status: 'failed', lastSuccess: null, failures: 2 }),
          },
        }),
      ),
    );
    expect(html).toContain('<code>acme</code>');
    expect(html).toContain('<code>globex</code>');
    expect(html).toContain('2026-11-23T01:59:00.000Z');
    expect(html).toContain('2026-11-23T01:59:30.000Z');
    expect(html).toContain('<span class="badge st-failed">failed</span>');
    expect(html).toContain('never');
    expect(html).toContain('<title>envsync: ready, 2 orgs, 1 failing</title>');
    expectOnlyOwnMarkup(html);
  });

  it('shows the API dialect and where it came from, or that no listing was read yet', () => {
    const known = renderStatusPage(
      model(daemonStatus({ dialect: { dialect: 'kosli', from: 'listing' } })),
    );
    expect(known).toContain(
      '<th scope="row">API dialect</th><td>kosli (auto: read from the listing&#39;s shape)</td>',
    );
    const unknown = renderStatusPage(model(daemonStatus()));
    expect(unknown).toContain('not known yet (no listing read)');
  });

  it('lists the pending changes: environment, action, fields and error, and says how many more there are', () => {
    const html = renderStatusPage(
      model(
        daemonStatus({
          orgs: {
            acme: orgStatus({
              pending: 60,
              pendingChanges: [
                change('prod', { action: 'create', fields: { type: { from: null, to: 'K8S' } } }),
                change('stage', { result: 'failed', error: 'the service said 422' }),
                change('dev', {
                  action: 'unverified',
                  fields: { policies: { from: null, to: ['pci'], notShown: true } },
                  unknown: ['policies'],
                }),
              ],
            }),
          },
        }),
      ),
    );
    expect(html).toContain(
      '<tr><td><code>prod</code></td><td>create</td><td>planned</td><td><code>type</code> = <code>&quot;K8S&quot;</code></td>',
    );
    expect(html).toContain(
      '<code>description</code>: <code>&quot;old&quot;</code> → <code>&quot;new&quot;</code>',
    );
    expect(html).toContain('the service said 422');
    // A value the service does not show is still shown with the value a sync sets.
    expect(html).toContain(
      '<code>policies</code>: <span class="dim">(not shown by the service)</span> → <code>[&quot;pci&quot;]</code>',
    );
    expect(html).toContain('and 57 more (the first 3 are listed)');
    expectOnlyOwnMarkup(html);
  });

  it('lists policies and tags sent through their own operations a line each, escaped', () => {
    const hostile = '<script>x</script>';
    const html = renderStatusPage(
      model(
        daemonStatus({
          orgs: {
            acme: orgStatus({
              pending: 1,
              pendingChanges: [
                change('prod', {
                  fields: {
                    policies: { from: ['legacy'], to: ['pci'] },
                    tags: { from: { env: 'dev', old: 'x' }, to: { env: 'prod', [hostile]: 'a' } },
                  },
                  policies: { attach: ['pci'], detach: ['legacy'] },
                  tags: { set: { env: 'prod', [hostile]: 'a' }, remove: ['old'] },
                }),
              ],
            }),
          },
        }),
      ),
    );
    expect(html).toContain(
      '+ policy <code>pci</code><br>- policy <code>legacy</code><br>' +
        '~ tag <code>env</code>: <code>dev</code> → <code>prod</code><br>' +
        '+ tag <code>&lt;script&gt;x&lt;/script&gt;=a</code><br>- tag <code>old</code>',
    );
    // The whole sets and maps are not shown again as `from -> to`.
    expect(html).not.toContain('<code>policies</code>');
    expect(html).not.toContain('<code>tags</code>');
    expectOnlyOwnMarkup(html);
  });

  it('lists the last drifts of each org: environment, field, value found, value declared, when; and marks pending drift', () => {
    const html = renderStatusPage(
      model(
        daemonStatus({
          orgs: {
            acme: orgStatus({
              pending: 1,
              pendingChanges: [change('stage', { cause: 'drift', result: 'failed' })],
              recentDrift: [
                {
                  environment: 'stage',
                  field: 'description',
                  found: 'old',
                  declared: 'new',
                  at: '2026-11-23T01:59:30.000Z',
                },
                {
                  environment: 'prod',
                  field: 'policies',
                  found: null,
                  declared: ['pci'],
                  at: '2026-11-23T01:00:00.000Z',
                },
              ],
            }),
            globex: orgStatus(),
          },
        }),
      ),
    );
    expect(html).toContain(
      '<tr><td><code>stage</code></td><td>update <span class="st-pending">(drift)</span></td><td>failed</td>',
    );
    expect(html).toContain(
      '<tr><td><code>stage</code></td><td><code>description</code></td><td><code>&quot;old&quot;</code></td><td><code>&quot;new&quot;</code></td><td><time datetime="2026-11-23T01:59:30.000Z">2026-11-23T01:59:30.000Z</time> <span class="dim">(30 s ago)</span></td></tr>' +
        '<tr><td><code>prod</code></td><td><code>policies</code></td><td><span class="dim">(none)</span></td><td><code>[&quot;pci&quot;]</code></td>',
    );
    // globex has seen none.
    expect(html).toContain('No drift found.');
    expectOnlyOwnMarkup(html);
  });

  it('shows each manifest error with file:line:col, inside an org and outside any', () => {
    const problem = {
      file: 'manifests/acme.yaml',
      line: 4,
      column: 11,
      path: 'environments[0].type',
      message: '"k8s" is not one of K8S, S3, logical',
    };
    const html = renderStatusPage(
      model(
        daemonStatus({
          errors: [{ ...problem, file: 'manifests/stray.yaml', line: 1, column: 1, path: '' }],
          orgs: {
            acme: orgStatus({
              status: 'invalid',
              lastError: {
                message: 'invalid manifests (1 problem)',
                at: '2026-11-23T01:59:30.000Z',
                errors: [problem],
              },
            }),
          },
        }),
      ),
    );
    expect(html).toContain(
      '<code>manifests/acme.yaml:4:11</code> <code>environments[0].type</code>',
    );
    expect(html).toContain('<code>manifests/stray.yaml:1:1</code>');
    expect(html).toContain('Problems that belong to no org (1)');
    expect(html).toContain('&quot;k8s&quot; is not one of K8S, S3, logical');
  });

  it('shows the last pass (result, times, trigger), the revision, the shard, state file errors and readiness', () => {
    const html = renderStatusPage(
      model(
        daemonStatus({
          revision: 'abc123def',
          shard: { index: 1, count: 3 },
          ready: false,
          stateFile: { path: '/data/state.json', writeError: 'EACCES: permission denied' },
          lastPass: {
            startedAt: '2026-11-23T01:59:00.000Z',
            finishedAt: '2026-11-23T01:59:02.000Z',
            durationMs: 1500,
            settleWaitMs: 500,
            result: 'partial',
            trigger: ['file manifests/acme.yaml', 'interval'],
          },
        }),
        { readiness: { ready: false, reason: 'no org is reconciled without error' } },
      ),
    );
    expect(html).toContain('<code>abc123def</code>');
    expect(html).toContain('1 of 3');
    expect(html).toContain('write failed');
    expect(html).toContain('EACCES: permission denied');
    expect(html).toContain('<span class="badge st-not-ready">not ready</span>');
    expect(html).toContain('no org is reconciled without error');
    expect(html).toContain('<span class="badge st-partial">partial</span>');
    expect(html).toContain('2026-11-23T01:59:02.000Z');
    expect(html).toContain('<code>file manifests/acme.yaml</code>, <code>interval</code>');
    expect(html).toContain('1500 ms');
  });

  it('says when no pass has finished and no org is known yet', () => {
    const html = renderStatusPage(
      model(daemonStatus({ lastPass: null, passRunning: true, orgs: {}, passes: 0 })),
    );
    expect(html).toContain('No pass has finished yet.');
    expect(html).toContain('A pass is running now.');
    expect(html).toContain('No org yet');
  });

  it.each(HOSTILE)('shows the hostile text %j as text, never as markup', (text) => {
    const html = renderStatusPage(
      model(
        daemonStatus({
          revision: text,
          manifests: text,
          errors: [{ file: text, line: 1, column: 2, path: text, message: text }],
          stateFile: { path: text, writeError: text },
          orgs: {
            [text]: orgStatus({
              status: 'failed',
              lastError: { message: text, at: text, errors: [] },
              pending: 1,
              pendingChanges: [
                change(text, { error: text, fields: { description: { from: text, to: text } } }),
              ],
              recentDrift: [
                { environment: text, field: text, found: text, declared: [text], at: text },
              ],
            }),
          },
        }),
        { readiness: { ready: false, reason: text }, health: { healthy: false, reason: text } },
      ),
    );
    expectOnlyOwnMarkup(html);
    expect(markupOf(html)).not.toContain(text);
  });

  it('escapes any text in every slot (property)', () => {
    fc.assert(
      fc.property(anyText, fc.constantFrom(...HOSTILE), (random, hostile) => {
        const text = `${random}${hostile}`;
        const html = renderStatusPage(
          model(
            daemonStatus({
              revision: text,
              orgs: {
                [text]: orgStatus({
                  pending: 1,
                  pendingChanges: [change(text, { error: text, cause: 'drift' })],
                  recentDrift: [
                    { environment: text, field: text, found: text, declared: text, at: text },
                  ],
                }),
              },
            }),
          ),
        );
        expectOnlyOwnMarkup(html);
      }),
      { numRuns: 40 },
    );
  });

  it('shows no secret: the model is scrubbed before it is escaped, keys included', () => {
    const secret = 'tok<&>"en-5f3a9c1e7b';
    const status = daemonStatus({
      revision: `rev ${secret}`,
      orgs: {
        [`org-${secret}`]: orgStatus({
          status: 'failed',
          lastError: {
            message: `the service echoed Bearer ${secret}`,
            at: '2026-11-23T01:59:30.000Z',
          },
        }),
      },
    });
    const scrub = compileScrub([secret]);
    const html = renderStatusPage(model(scrubDeep(status, scrub)));
    expect(html).not.toContain('5f3a9c1e7b');
    expect(html).toContain('Bearer [REDACTED]');
    expect(html).toContain('<code>org-[REDACTED]</code>');
  });
});

describe('pending changes in the status model', () => {
  const report = (changes: ChangeReport[], status: OrgReport['status'] = 'ok'): OrgReport => ({
    org: 'acme',
    status,
    changes,
    unchanged: [],
    unmanaged: [],
    errors: [],
  });

  it('lists the changes not applied, in order, at most MAX_PENDING_CHANGES of them, next to their count', () => {
    const changes = Array.from({ length: MAX_PENDING_CHANGES + 7 }, (_, i) =>
      change(`env-${String(i).padStart(3, '0')}`, { result: i === 0 ? 'applied' : 'planned' }),
    );
    const status = orgStatusAfter(report(changes), undefined, NOW, undefined);
    expect(status.pending).toBe(MAX_PENDING_CHANGES + 6);
    expect(status.pendingChanges).toHaveLength(MAX_PENDING_CHANGES);
    expect(status.pendingChanges[0]?.name).toBe('env-001');
    expect(status.pendingChanges.every((c) => c.result !== 'applied')).toBe(true);
  });

  it('keeps what was pending while the org is invalid (it is left alone)', () => {
    const before = orgStatusAfter(report([change('prod')]), undefined, NOW, undefined);
    const after = orgStatusAfter(report([], 'invalid'), before, NOW + 1000, undefined);
    expect(after.pending).toBe(1);
    expect(after.pendingChanges).toEqual(before.pendingChanges);
  });

  it('remembers the drifts found, newest first, and keeps them while the org is invalid', () => {
    const drift = change('prod', {
      cause: 'drift',
      result: 'applied',
      fields: { description: { from: 'by hand', to: 'declared' } },
    });
    const first = orgStatusAfter(report([drift]), undefined, NOW, undefined);
    expect(first.recentDrift).toEqual([
      {
        environment: 'prod',
        field: 'description',
        found: 'by hand',
        declared: 'declared',
        at: new Date(NOW).toISOString(),
      },
    ]);
    const invalid = orgStatusAfter(report([], 'invalid'), first, NOW + 1000, undefined);
    expect(invalid.recentDrift).toEqual(first.recentDrift);
    const quiet = orgStatusAfter(
      report([change('web', { result: 'applied' })]),
      invalid,
      NOW + 2000,
      undefined,
    );
    expect(quiet.recentDrift).toEqual(first.recentDrift);
  });

  it('is empty once everything is applied', () => {
    const status = orgStatusAfter(
      report([change('prod', { result: 'applied' })]),
      undefined,
      NOW,
      undefined,
    );
    expect(status).toMatchObject({ pending: 0, pendingChanges: [] });
  });
});
