/**
 * Policy document uploads in a run's report: what they count for (summary, pending, exit code),
 * how two rounds merge, how each output shows them (escaped), and what the daemon's status keeps.
 */
import { describe, expect, it } from 'vitest';
import { orgErrorMessage, orgStatusAfter } from '../../src/daemon/status.ts';
import { RENDERERS } from '../../src/core/renderers.ts';
import {
  exitCode,
  hasPendingChanges,
  mergeOrgRounds,
  type OrgReport,
  type PolicyDocumentReport,
  REPORT_VERSION,
  type RunReport,
  summarize,
} from '../../src/core/report.ts';
import { renderStatusPage } from '../../src/daemon/page.ts';

const DIGEST_A = `sha256:${'a'.repeat(64)}`;
const DIGEST_B = `sha256:${'b'.repeat(64)}`;

const upload = (
  name: string,
  overrides: Partial<PolicyDocumentReport> = {},
): PolicyDocumentReport => ({
  action: 'update',
  name,
  version: 3,
  fields: { content: { from: DIGEST_A, to: DIGEST_B } },
  result: 'planned',
  ...overrides,
});

const org = (overrides: Partial<OrgReport> = {}): OrgReport => ({
  org: 'acme',
  status: 'ok',
  changes: [],
  unchanged: ['prod'],
  unmanaged: [],
  errors: [],
  ...overrides,
});

const run = (dryRun: boolean, orgs: OrgReport[]): RunReport => ({
  version: REPORT_VERSION,
  dryRun,
  summary: summarize(orgs),
  orgs,
  errors: [],
});

describe('what uploads count for', () => {
  it('the summary counts them apart from environments, and only when there are any', () => {
    expect(summarize([org()]).policyDocuments).toBeUndefined();
    const summary = summarize([
      org({
        policyDocuments: [
          upload('a', { action: 'create', result: 'applied' }),
          upload('b', { result: 'failed', error: 'no' }),
          upload('c'),
        ],
      }),
    ]);
    expect(summary.policyDocuments).toEqual({ create: 1, update: 2, applied: 1, failed: 1 });
    expect(summary).toMatchObject({ create: 0, update: 0, applied: 0, failed: 0 });
  });

  it.each([
    ['no upload', [], false, 0],
    ['an upload planned', [upload('a')], true, 2],
  ])('%s: pending %s, plan --detailed-exitcode %s', (_what, uploads, pending, code) => {
    const report = run(true, [org({ policyDocuments: uploads, policyDocumentsUnchanged: ['x'] })]);
    expect(hasPendingChanges(report)).toBe(pending);
    expect(exitCode(report, { detailed: true })).toBe(code);
  });

  it('a second round keeps what the first uploaded, and fails the org only for what failed last', () => {
    const first = org({
      status: 'failed',
      policyDocuments: [upload('a', { result: 'applied' }), upload('b', { result: 'failed' })],
      policyDocumentsUnchanged: [],
    });
    const second = org({
      policyDocuments: [upload('b', { result: 'applied' })],
      policyDocumentsUnchanged: ['a'],
    });
    const merged = mergeOrgRounds(first, second);
    expect(merged.status).toBe('ok');
    expect(merged.policyDocuments?.map((d) => [d.name, d.result])).toEqual([
      ['a', 'applied'],
      ['b', 'applied'],
    ]);
    expect(merged.policyDocumentsUnchanged).toEqual([]);
    const again = mergeOrgRounds(first, {
      ...second,
      policyDocuments: [upload('b', { result: 'failed' })],
    });
    expect(again.status).toBe('failed');
  });
});

describe('how each output shows them', () => {
  const hostile = 'line\nbreak \u001b[31mred\u001b[0m \u202eevil <b>*x*</b>';
  const report = (dryRun: boolean) =>
    run(dryRun, [
      org({
        policyDocuments: [
          upload('prod-requirements', {
            action: 'create',
            version: null,
            fields: {
              content: { from: null, to: DIGEST_B },
              description: { from: null, to: hostile },
            },
            result: dryRun ? 'planned' : 'applied',
          }),
          upload('baseline', {
            fields: {
              content: { from: DIGEST_A, to: DIGEST_B },
              description: { from: 'old', to: 'new' },
            },
            result: dryRun ? 'planned' : 'failed',
            ...(dryRun ? {} : { error: 'PUT /api/v2/policies/acme: 413' }),
          }),
        ],
        policyDocumentsUnchanged: ['kept'],
        policyDocumentsNotManaged: ['legacy'],
      }),
    ]);

  it('text: one line per upload, its fields, then the unchanged and the not managed', () => {
    const text = RENDERERS.text.run(report(true), { color: false });
    expect(text).toContain(
      [
        '  + policy document prod-requirements',
        `      content     = sha256:${'b'.repeat(12)}…`,
        '      description = "line\\nbreak \\u001b[31mred\\u001b[0m \\u202eevil <b>*x*</b>"',
        '  ~ policy document baseline (content, description)',
        `      content     : version 3 sha256:${'a'.repeat(12)}… -> sha256:${'b'.repeat(12)}…`,
        '      description : "old" -> "new"',
        '  = 1 policy document unchanged',
        '  policy documents not managed (on the service, in no manifest; never deleted): legacy',
      ].join('\n'),
    );
    expect(text).toContain('Policy documents: 1 to create, 1 to update.');
    // Nothing from the description reaches the terminal raw.
    expect(text.includes('\u001b') || text.includes('\u202e')).toBe(false);
    const synced = RENDERERS.text.run(report(false), { color: false });
    expect(synced).toContain('+ policy document prod-requirements [applied]');
    expect(synced).toContain('~ policy document baseline (content, description) [FAILED]');
    expect(synced).toContain('PUT /api/v2/policies/acme: 413');
    expect(synced).toContain('Policy documents: 1 applied, 1 failed (1 to create, 1 to update).');
  });

  it('markdown: a table per org, every cell escaped', () => {
    const markdown = RENDERERS.markdown.run(report(false), { color: false });
    expect(markdown).toContain('| action | policy document | fields | result |');
    expect(markdown).toContain('| ✏️ update | baseline |');
    expect(markdown).toContain('❌ failed: PUT /api/v2/policies/acme: 413');
    expect(markdown).toContain('description: "line\\\\nbreak \\\\u001b[31mred');
    expect(markdown).toContain('&lt;b&gt;\\*x\\*&lt;/b&gt;');
    expect(markdown).not.toContain('<b>*x');
    expect(markdown.includes('\u001b') || markdown.includes('\u202e')).toBe(false);
    expect(markdown).toContain(
      'Policy documents not managed (on the service, in no manifest; never deleted): <code>legacy</code>',
    );
  });

  it('JSON: the org-level list as the report holds it', () => {
    const parsed = JSON.parse(RENDERERS.json.run(report(true), { color: false })) as {
      orgs: OrgReport[];
    };
    expect(
      parsed.orgs[0]?.policyDocuments?.map((d) => [d.action, d.name, Object.keys(d.fields)]),
    ).toEqual([
      ['create', 'prod-requirements', ['content', 'description']],
      ['update', 'baseline', ['content', 'description']],
    ]);
  });
});

describe("the daemon's status keeps the uploads that did not go through", () => {
  it('lists them, says why the org failed, and shows them on the page', () => {
    const failed = org({
      status: 'failed',
      policyDocuments: [
        upload('a', { result: 'applied' }),
        upload('<b>', { result: 'failed', error: 'refused <script>' }),
      ],
    });
    expect(orgErrorMessage(failed)).toBe('policy document <b>: failed (refused <script>)');
    const status = orgStatusAfter(failed, undefined, 0, undefined);
    expect(status.pendingPolicyDocuments?.map((d) => d.name)).toEqual(['<b>']);
    expect(orgStatusAfter(org(), status, 1, undefined)).not.toHaveProperty(
      'pendingPolicyDocuments',
    );
    // An invalid org is left alone: what was pending stays.
    const invalid = orgStatusAfter(org({ status: 'invalid' }), status, 1, undefined);
    expect(invalid.pendingPolicyDocuments).toEqual(status.pendingPolicyDocuments);
    const html = renderStatusPage({
      status: {
        revision: null,
        manifests: 'manifests',
        ready: true,
        passes: 1,
        dialect: null,
        lastPass: null,
        passRunning: false,
        shard: null,
        errors: [],
        stateFile: { path: null, writeError: null },
        mode: 'normal',
        window: null,
        health: { level: 'healthy', reason: null },
        orgs: { acme: { ...status, state: 'synced', tokenSource: 'token-file' } },
      },
      readiness: { ready: true },
      liveness: { live: true },
      api: 'https://api.example.com',
      now: 0,
      version: '0.2.0',
    });
    expect(html).toContain('<h4>Pending policy documents</h4>');
    expect(html).toContain('<code>&lt;b&gt;</code>');
    expect(html).toContain('refused &lt;script&gt;');
    expect(html).not.toContain('<script>refused');
  });
});
