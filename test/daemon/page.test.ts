import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FieldValue } from '../../src/core/model.ts';
import type { DriftSeen } from '../../src/core/plan.ts';
import type { ChangeReport } from '../../src/core/report.ts';
import { renderStatusPage, type StatusPageModel } from '../../src/daemon/page.ts';
import { PAGE_SCRIPT, PAGE_STYLE, STATE_COLOURS } from '../../src/daemon/page-assets.ts';
import { MAX_ENVIRONMENT_ROWS, orgStatusAfter, ROW_STATES } from '../../src/daemon/status.ts';
import { SYNC_STATES, type DaemonStatus, type OrgState } from '../../src/daemon/status.ts';
import { orgReport, uploadReport } from '../helpers/builders.ts';

const NOW = Date.parse('2026-11-23T02:00:00.000Z');

type OrgEntry = DaemonStatus['orgs'][string];

/** An org reconciled 30 s ago, its last success a minute ago. */
function orgStatus(overrides: Partial<OrgEntry> = {}): OrgEntry {
  const status = orgStatusAfter(orgReport('acme'), undefined, NOW - 30_000, undefined);
  const lastSuccess = '2026-11-23T01:59:00.000Z';
  const both = { state: 'synced', health: 'healthy', sync: 'synced' } as const;
  return { ...status, lastSuccess, ...both, tokenSource: 'token-file', ...overrides };
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
    sync: 'synced',
    orgs: { acme: orgStatus() },
    ...overrides,
  };
}

/** The page of a status like `daemonStatus()`'s but for `status`, and a model but for `extra`. */
const page = (status: Partial<DaemonStatus> = {}, extra: Partial<StatusPageModel> = {}) =>
  renderStatusPage(model(daemonStatus(status), extra));

/** The page of one org, acme, with `overrides`. */
const acmePage = (overrides: Partial<OrgEntry>) => page({ orgs: { acme: orgStatus(overrides) } });

function model(status: DaemonStatus, extra: Partial<StatusPageModel> = {}): StatusPageModel {
  return {
    status,
    readiness: { ready: status.ready },
    liveness: { live: true },
    api: 'https://api.example.com/v2',
    now: NOW,
    version: '0.1.0',
    ...extra,
  };
}

/** The page less its own script and style (once each): what is left is markup and text. */
function markupOf(html: string): string {
  expect(html.split(PAGE_SCRIPT)).toHaveLength(2);
  expect(html.split(PAGE_STYLE)).toHaveLength(2);
  return html
    .replace(`<script>${PAGE_SCRIPT}</script>`, '')
    .replace(`<style>${PAGE_STYLE}</style>`, '');
}

const TAGS =
  'html|head|meta|title|noscript|style|body|header|footer|h1|h2|h3|h4|p|main|section|div|table|thead|tbody|tr|th|td|code|span|strong|time|a|ul|li|br|dl|dt|dd|details|summary';
const ATTRIBUTES =
  'lang|charset|name|content|http-equiv|id|role|class|datetime|title|href|scope|open|aria-labelledby|data-key|data-label';
/** A tag the renderer writes: one of its own, with only its own attributes. */
const OWN_TAG = new RegExp(`^</?(?:${TAGS})(?: (?:${ATTRIBUTES})(?:="[^"<>]*")?)*>$`);

/** The tags of `markup` that are not the renderer's own (or link anywhere but to /status). */
const foreignTags = (markup: string) =>
  [...markup.matchAll(/<[^>]*>/g)]
    .map(([tag]) => tag)
    .filter((tag) => tag !== '<!doctype html>')
    .filter((tag) => !OWN_TAG.test(tag) || /href="(?!status")/.test(tag));

/**
 * Every tag of the page is one of the renderer's own, with only its own attributes: no text put
 * into the page made an element or an attribute; and every `&` in the text starts an entity.
 */
function expectOnlyOwnMarkup(html: string): void {
  const markup = markupOf(html);
  expect(foreignTags(markup)).toEqual([]);
  expect(markup.replace(/<[^>]*>/g, '')).not.toMatch(/&(?!amp;|lt;|gt;|quot;|#39;)/);
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', quot: '"', '#39': "'", amp: '&' };

/** The text of some markup, as a reader sees it: tags dropped, entities read, spaces folded. */
function text(markup: string): string {
  const plain = markup.replace(/<br>/g, '\n').replace(/<[^>]*>/g, '');
  const read = plain.replace(/&(lt|gt|quot|#39|amp);/g, (_, name: string) => ENTITIES[name] ?? '');
  return read.replace(/[ \t]+/g, ' ').trim();
}

/** The card of one org (by its name as shown). */
function card(html: string, name: string): string {
  const cards = [...html.matchAll(/<section class="card[^"]*"[^>]*>[\s\S]*?<\/section>/g)].map(
    ([c]) => c,
  );
  const found = cards.filter((c) => text(/<h3[^>]*>([\s\S]*?)<\/h3>/.exec(c)?.[1] ?? '') === name);
  expect(found, `the card of ${name}`).toHaveLength(1);
  return found[0] ?? '';
}

/** The rows of the first table of class `name` in `markup`, each as its cells' text. */
function rows(markup: string, name: string): string[][] {
  const table = new RegExp(`<table class="${name}[ "][\\s\\S]*?</table>`).exec(markup)?.[0] ?? '';
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)]
    .filter(([row]) => row.includes('<td'))
    .map(([, row]) =>
      [...(row ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map(([, c]) => text(c ?? '')),
    );
}

/** The header's band: its level class and its words. */
function band(html: string): { className: string; words: string } {
  const match = /<div class="band ([a-z-]+)" id="health">.*?<h2[^>]*>([^<]*)</.exec(html);
  return { className: match?.[1] ?? '', words: match?.[2] ?? '' };
}

const HOSTILE = [
  '<script>window.__pwned=1</script>',
  '"onmouseover="window.__pwned=1',
  "'><img src=x onerror=alert(1)>",
  'Tom & Jerry &amp; &lt;',
  '</main><script>alert(1)</script>',
  '</details></section><style>*{}</style>',
  'a\u202eb\nc\u0000',
];

/**
 * Any text of up to 30 code points, printable ASCII the most likely, lone surrogates too (unlike
 * `fc.string({ unit: 'binary' })`, without the table it builds first: a second of CPU).
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

const drifted = (
  environment: string,
  field: string,
  found: FieldValue | null,
  declared: FieldValue,
  at: string,
): DriftSeen => ({ environment, field, found, declared, at });

const ORG_STATES = Object.keys(STATE_COLOURS) as OrgState[];

describe('the status page renderer', () => {
  it('shows a card per org with its state, last success, last attempt, token source and counts', () => {
    const html = page({
      health: { level: 'degraded', reason: '1 of 2 org(s) invalid or failed: globex' },
      orgs: {
        acme: orgStatus({
          environments: [
            { name: 'prod', type: 'K8S', state: 'synced' },
            { name: 'web', type: 'S3', state: 'pending' },
          ],
          pending: 1,
          pendingChanges: [change('web')],
          sync: 'out-of-sync',
        }),
        globex: orgStatus({
          status: 'failed',
          state: 'failed',
          health: 'failing',
          sync: 'unknown',
          lastSuccess: null,
          failures: 2,
          tokenSource: null,
        }),
        initech: orgStatus({ tokenSource: 'token-dir:initech' }),
      },
    });
    const acme = card(html, 'acme');
    expect(acme).toContain('<span class="badge st-synced">synced</span>');
    expect(text(acme)).toContain('2 environments1 synced1 pending1 pending change');
    expect(acme).toContain('<time datetime="2026-11-23T01:59:00.000Z"');
    expect(text(acme)).toContain('Last success 1m ago · last attempt 30s ago · token: token-file');
    expect(text(card(html, 'initech'))).toContain('· token: token-dir:initech');
    const globex = card(html, 'globex');
    expect(globex).toMatch(/^<section class="card st-failed"/);
    expect(text(globex)).toContain('Last success never · last attempt 30s ago · no token');
    expect(text(globex)).toContain('Failed passes in a row: 2');
    expect(text(globex)).toContain('Health: failing; sync: unknown.');
    const order = [...html.matchAll(/<h3 id="org-\d+"><code>([^<]*)/g)].map((m) => m[1]);
    expect(order).toEqual(['globex', 'acme', 'initech']);
    expect(html).toContain('<title>envsync: degraded, synced, 3 orgs, 1 failing</title>');
    expectOnlyOwnMarkup(html);
  });

  it.each(ORG_STATES)('shows the state %j as the badge and the colour of its card', (state) => {
    const html = acmePage({ state });
    const acme = card(html, 'acme');
    const className = /^<section class="card (st-[a-z-]+)/.exec(acme)?.[1];
    expect(acme).toContain(`<span class="badge ${className}">${state}</span>`);
    // The class gives the state's own colour, and no other state shares it.
    expect(PAGE_STYLE).toContain(`.${className} { --c: ${STATE_COLOURS[state]}; }`);
    expect(new Set(Object.values(STATE_COLOURS)).size).toBe(ORG_STATES.length);
    expect(text(html)).toContain(`1 org: 1 ${state}`);
  });

  it.each(ROW_STATES)('shows an environment in the state %j with its type', (state) => {
    const html = acmePage({
      environments: [{ name: 'prod', type: 'K8S', state, compliance: 'non-compliant' }],
    });
    expect(rows(card(html, 'acme'), 'envs')).toEqual([['prod', 'K8S', state, 'non-compliant']]);
    expect(card(html, 'acme')).toContain(`<span class="badge st-`);
    expect(text(card(html, 'acme'))).toContain(`1 environment1 ${state}`);
  });

  it("gives /status's rows a placeholder's name as unknown, and the listing's compliance", () => {
    const report = orgReport('acme', { unknown: ['db'], compliance: { web: 'compliant' } });
    const types = [
      ['db', 'K8S'],
      ['web', 'S3'],
    ] as const;
    expect(orgStatusAfter(report, undefined, NOW, undefined, types).environments).toEqual([
      { name: 'db', type: 'K8S', state: 'unknown' },
      { name: 'web', type: 'S3', state: 'synced', compliance: 'compliant' },
    ]);
  });

  it('lists every managed environment, open when they are few; and the unmanaged ones by name', () => {
    const few = orgStatus({
      environments: [{ name: 'prod', type: 'K8S', state: 'synced' }],
      unmanaged: 205,
      unmanagedNames: ['legacy', 'old-bucket'],
    });
    const many = orgStatus({
      environments: Array.from({ length: MAX_ENVIRONMENT_ROWS }, (_, i) => ({
        name: `env-${String(i).padStart(3, '0')}`,
        type: 'S3',
        state: 'synced' as const,
      })),
    });
    const html = page({ orgs: { few, many } });
    expect(card(html, 'few')).toContain('<details data-key="few/environments" open>');
    expect(text(card(html, 'few'))).toContain('Unmanaged environments (205)');
    expect(card(html, 'few')).toContain(
      '<ul class="names"><li><code>legacy</code></li><li><code>old-bucket</code></li></ul><p class="dim">and 203 more</p>',
    );
    expect(card(html, 'many')).toContain('<details data-key="many/environments">');
    expect(rows(card(html, 'many'), 'envs')).toHaveLength(MAX_ENVIRONMENT_ROWS);
    expect(text(card(html, 'many'))).toContain(
      `The first ${MAX_ENVIRONMENT_ROWS} in name order are listed.`,
    );
    expectOnlyOwnMarkup(html);
  });

  it('shows in the header the API address, the dialect, the revision, the mode and the last pass', () => {
    const html = page(
      {
        revision: 'abc123def',
        dialect: { dialect: 'kosli', from: 'listing' },
        lastPass: {
          startedAt: '2026-11-23T01:59:00.000Z',
          finishedAt: '2026-11-23T01:59:02.000Z',
          durationMs: 1500,
          settleWaitMs: 500,
          result: 'partial',
          trigger: ['file manifests/acme.yaml', 'interval'],
        },
      },
      { api: 'https://app.example.com/api/v2' },
    );
    expect(html).toContain('<dt>API</dt><dd><code>https://app.example.com/api/v2</code></dd>');
    expect(html).toContain(
      '<dt>API dialect</dt><dd>kosli (auto: read from the listing&#39;s shape)</dd>',
    );
    expect(html).toContain('<dt>Revision</dt><dd><code>abc123def</code></dd>');
    expect(html).toContain('<dt>Mode</dt><dd><strong>Normal</strong>: changes are sent</dd>');
    expect(html).toContain('<span class="badge st-drifted">partial</span>');
    expect(html).toContain(
      '<time datetime="2026-11-23T01:59:02.000Z">2026-11-23 01:59:02 UTC</time>',
    );
    expect(html).toContain(
      'took 1500ms; trigger <code>file manifests/acme.yaml</code>, <code>interval</code>',
    );
    const unknown = page();
    expect(unknown).toContain('not known yet (no listing read)');
    expect(unknown).toContain('none (not a git-sync checkout)');
  });

  it('says observe mode, and where the sync windows stand with when they open or close', () => {
    const mode = (status: Partial<DaemonStatus>) =>
      text(/<dt>Mode<\/dt><dd>([\s\S]*?)<\/dd>/.exec(page(status))?.[1] ?? '');
    expect(mode({ mode: 'observe' })).toBe('Observe: nothing is ever sent (--observe)');
    expect(mode({ window: { open: true, closesAt: '2026-11-23T05:00:00.000Z' } })).toBe(
      'Inside a sync window: changes are sent; closes at 2026-11-23 05:00:00 UTC (in 3h)',
    );
    expect(mode({ window: { open: false, opensAt: '2026-11-25T09:00:00.000Z' } })).toBe(
      'Outside the sync windows: changes wait; opens at 2026-11-25 09:00:00 UTC (in 48h)',
    );
    expect(
      mode({ mode: 'observe', window: { open: false, opensAt: '2026-11-23T02:30:00.000Z' } }),
    ).toBe(
      'Observe: nothing is ever sent (--observe)\nSync window closed; opens at 2026-11-23 02:30:00 UTC (in 30m)',
    );
    // A pending org in observe mode is not said to be sent by the next pass.
    const observed = page({ mode: 'observe', orgs: { acme: orgStatus({ state: 'pending' }) } });
    expect(text(card(observed, 'acme'))).toContain('observe mode sends nothing');
  });

  const OK = 'No org is invalid or failed, and the last pass ended.';
  const WEDGED = 'The loop is wedged: a pass has been running for 1200 s';
  it.each([
    ['healthy', true, 'lv-healthy', 'Healthy', OK],
    ['degraded', true, 'lv-degraded', 'Degraded', 'Why'],
    ['failing', true, 'lv-failing', 'Failing', 'Why'],
    ['healthy', false, 'lv-failing', 'Failing', WEDGED],
  ] as const)('shows the level %s (live: %s) in words and colour', (level, live, ...expected) => {
    const wedged = { live: false, reason: 'a pass has been running for 1200 s' };
    const reason = level === 'healthy' ? null : 'why';
    const html = page({ health: { level, reason } }, { liveness: live ? { live } : wedged });
    const [className, words, why] = expected;
    expect(band(html)).toEqual({ className, words });
    expect(text(html)).toContain(why);
  });

  it.each(SYNC_STATES)('shows sync %s in its own colour, green only if synced', (sync) => {
    const syncBand = /<div class="band ([a-z-]+)" id="sync">.*?<h2[^>]*>([^<]*)</;
    const [, className, words] = syncBand.exec(page({ sync })) ?? [];
    expect(words?.toLowerCase()).toBe(sync);
    expect(className === 'st-synced').toBe(sync === 'synced');
    expect(PAGE_STYLE).toContain(`.${className} { --c: #`);
  });

  it('lists the pending changes: environment, action, fields and error, and says how many more there are', () => {
    const html = acmePage({
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
    });
    expect(rows(html, 'pending')).toEqual([
      ['prod', 'create', 'planned', 'type = "K8S"', ''],
      ['stage', 'update', 'failed', 'description: "old" → "new"', 'the service said 422'],
      // A value the service does not show is still shown with the value a sync sets.
      ['dev', 'unverified', 'planned', 'policies: (not shown by the service) → ["pci"]', ''],
    ]);
    expect(html).toContain(
      '<code>description</code>: <code>&quot;old&quot;</code> → <code>&quot;new&quot;</code>',
    );
    expect(text(html)).toContain('and 57 more (the first 3 are listed)');
    expectOnlyOwnMarkup(html);
  });

  it('lists policies and tags sent through their own operations a line each, escaped', () => {
    const hostile = '<script>x</script>';
    const html = acmePage({
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
    });
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
    const OLD = '2026-11-23T01:00:00Z';
    const html = page({
      orgs: {
        acme: orgStatus({
          pending: 1,
          pendingChanges: [change('stage', { cause: 'drift', result: 'failed' })],
          recentDrift: [
            drifted('stage', 'description', 'old', 'new', '2026-11-23T01:59:30.000Z'),
            drifted('prod', 'policies', null, ['pci'], '2026-11-23T01:00:00.000Z'),
          ],
        }),
        globex: orgStatus(),
        initech: orgStatus({ recentDrift: [drifted('w', 'tags', 'a', 'b', OLD)] }),
      },
    });
    const acme = card(html, 'acme');
    expect(acme).toContain(
      '<td data-label="Action">update <span class="drift-mark">(drift)</span></td>',
    );
    expect(rows(acme, 'drift')).toEqual([
      ['stage', 'description', '"old"', '"new"', '2026-11-23 01:59:30 UTC (30s ago)'],
      ['prod', 'policies', '(none)', '["pci"]', '2026-11-23 01:00:00 UTC (1h ago)'],
    ]);
    expect(acme).toContain('<time datetime="2026-11-23T01:59:30.000Z">');
    // globex has seen none: no table.
    expect(card(html, 'globex')).not.toMatch(/Recent drift|Pending changes/);
    expect(card(html, 'initech')).toMatch(/^<section class="card st-synced" /); // old drift: not wide
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
    const html = page({
      errors: [{ ...problem, file: 'manifests/stray.yaml', line: 1, column: 1, path: '' }],
      orgs: {
        acme: orgStatus({
          status: 'invalid',
          state: 'invalid',
          lastError: {
            message: 'invalid manifests (1 problem)',
            at: '2026-11-23T01:59:30.000Z',
            errors: [problem],
          },
        }),
      },
    });
    expect(card(html, 'acme')).toContain(
      '<code>acme.yaml:4:11</code> <code>environments[0].type</code>',
    );
    expect(html).toContain('<code>stray.yaml:1:1</code>');
    expect(text(card(html, 'acme'))).not.toContain('invalid manifests');
    expect(html).toContain('Problems that belong to no org (1)');
    expect(html).toContain('&quot;k8s&quot; is not one of K8S, S3, logical');
  });

  it('shows the daemon: readiness, the shard, the state file and its write error', () => {
    const html = page(
      {
        shard: { index: 1, count: 3 },
        ready: false,
        passRunning: true,
        stateFile: { path: '/data/state.json', writeError: 'EACCES: permission denied' },
      },
      { readiness: { ready: false, reason: 'no org is reconciled without error' } },
    );
    expect(html).toContain('<span class="badge st-invalid">not ready</span>');
    expect(text(html)).toContain('not ready no org is reconciled without error');
    expect(html).toContain('1 of 3');
    expect(html).toContain('<code>/data/state.json</code>');
    expect(text(html)).toContain('The state file could not be written: EACCES: permission denied');
    expect(text(html)).toContain('A pass is running now.');
  });

  it('says when no pass has finished and no org is known yet', () => {
    const html = page({ lastPass: null, passRunning: true, orgs: {}, passes: 0 });
    expect(html).toContain('No pass has finished yet.');
    expect(html).toContain('A pass is running now.');
    expect(html).toContain('No org yet');
  });

  /** A page with `text` in every slot that shows value from outside. */
  const everySlot = (value: string) =>
    page(
      {
        revision: value,
        manifests: value,
        errors: [{ file: value, line: 1, column: 2, path: value, message: value }],
        stateFile: { path: value, writeError: value },
        lastPass: {
          startedAt: value,
          finishedAt: value,
          durationMs: 1,
          settleWaitMs: 0,
          result: 'error',
          trigger: [value],
          error: value,
        },
        health: { level: 'failing', reason: value },
        window: { open: false, opensAt: value },
        orgs: {
          [value]: orgStatus({
            status: 'failed',
            state: 'failed',
            tokenSource: value,
            lastError: {
              message: value,
              at: value,
              errors: [{ file: value, line: 1, column: 1, path: value, message: value }],
            },
            lastSuccess: value,
            nextAttemptAt: value,
            pending: 1,
            pendingChanges: [
              change(value, {
                error: value,
                cause: 'drift',
                fields: { description: { from: value, to: value } },
              }),
            ],
            recentDrift: [
              { environment: value, field: value, found: value, declared: [value], at: value },
            ],
            environments: [{ name: value, type: value, state: 'failed' }],
            unmanaged: 1,
            unmanagedNames: [value],
            pendingArchives: [{ name: value, ownedBy: ['tag'], result: 'failed', error: value }],
            pendingPolicyDocuments: [
              uploadReport(value, {
                result: 'failed',
                error: value,
                fields: { description: { from: null, to: value } },
              }),
            ],
          }),
        },
      },
      {
        readiness: { ready: false, reason: value },
        liveness: { live: false, reason: value },
        api: value,
        version: value,
      },
    );

  it.each(HOSTILE)('shows the hostile text %j as text, never as markup', (hostile) => {
    const html = everySlot(hostile);
    expectOnlyOwnMarkup(html);
    expect(markupOf(html)).not.toContain(hostile);
  });

  it('escapes any text in every slot (property)', () => {
    fc.assert(
      fc.property(anyText, fc.constantFrom(...HOSTILE), (random, hostile) => {
        expectOnlyOwnMarkup(everySlot(`${random}${hostile}`));
      }),
      { numRuns: 40 },
    );
  });
});
