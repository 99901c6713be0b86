/**
 * What a run's report becomes: the exit code, the text, markdown and JSON outputs, and the GitHub
 * annotations, as tables over hand-made reports. The CLI's tests check that each command picks
 * these up (test/sync/, test/ci/); what each one decides is checked here.
 */
import { describe, expect, it } from 'vitest';
import { problemAnnotations, runAnnotations } from '../../src/commands/ci.ts';
import {
  type ChangeReport,
  commonFailure,
  exitCode,
  type OrgReport,
  type RunReport,
} from '../../src/core/report.ts';
import { RENDERERS } from '../../src/core/renderers.ts';
import {
  orgReport as org,
  runReport as report,
  uploadReport as upload,
} from '../helpers/builders.ts';

const text = (run: RunReport, color = false) => RENDERERS.text.run(run, { color });
const markdown = (run: RunReport) => RENDERERS.markdown.run(run, { color: false });
const raw = (out: string) => out.includes('\u001b') || out.includes('\u202e');

const change = (
  action: ChangeReport['action'],
  name: string,
  fields: ChangeReport['fields'],
  more: Partial<ChangeReport> = {},
): ChangeReport => ({ action, cause: 'change', name, fields, result: 'planned', ...more });
const CREATE = change('create', 'production', {
  type: { from: null, to: 'K8S' },
  description: { from: null, to: 'Production cluster' },
  policies: { from: null, to: ['baseline', 'pci'] },
});
const UPDATE = change('update', 'web', { description: { from: 'Web tier', to: 'Web tier (new)' } });
const UNVERIFIED = change(
  'unverified',
  'db',
  {
    include_scaling: { from: null, to: false, notShown: true },
    policies: { from: null, to: ['pci'], notShown: true },
  },
  { unknown: ['include_scaling', 'policies'] },
);
/** The service moved, the manifest stayed as last applied. */
const DRIFT: ChangeReport = {
  ...change('update', 'api', { description: { from: 'edited by hand', to: 'API' } }),
  cause: 'drift',
};
const PROBLEM = {
  file: 'manifests/acme.yaml',
  line: 9,
  column: 11,
  path: 'environments[1].type',
  message: '"s3" is not one of K8S, S3',
};

describe('the exit code of a plan or sync', () => {
  const pending = org('acme', { changes: [CREATE] });
  const quiet = org('acme', { unchanged: ['web'] });
  const failed = org('acme', { status: 'failed', error: 'cannot list the org: 503' });
  const invalid = org('acme', { status: 'invalid', errors: [PROBLEM] });
  const stuck = { ...UPDATE, result: 'not-converged' as const };
  const notConverged = org('acme', { status: 'failed', changes: [stuck] });
  const known = { ...UPDATE, knownNotConverged: true as const };
  const detailed = ', --detailed-exitcode';
  it.each([
    ['a plan with changes pending', 0, report(true, [pending])],
    [`a plan with changes pending${detailed}`, 2, report(true, [pending])],
    [`a plan with nothing to do${detailed}`, 0, report(true, [quiet])],
    [`a sync that applied its changes${detailed}`, 0, report(false, [pending])],
    ['an org that failed', 1, report(false, [quiet, failed])],
    [
      `an org that failed, in a plan with changes pending${detailed}`,
      1,
      report(true, [pending, failed]),
    ],
    [`an org with invalid manifests${detailed}`, 1, report(true, [invalid, pending])],
    ['a change that did not converge', 1, report(false, [notConverged])],
    [
      `a plan whose only change did not take before (a sync sends nothing)${detailed}`,
      0,
      report(true, [org('acme', { changes: [known] })]),
    ],
    [
      `a plan with a change known not to take and another to send${detailed}`,
      2,
      report(true, [org('acme', { changes: [known, UNVERIFIED] })]),
    ],
    [
      `a plan with only values not shown by the service${detailed}`,
      2,
      report(true, [org('acme', { changes: [UNVERIFIED] })]),
    ],
    ['a manifest problem outside any org', 1, report(true, [quiet], { errors: [PROBLEM] })],
  ] as const)('%s: %i', (what, code, run) => {
    expect(exitCode(run, { detailed: what.endsWith(detailed) })).toBe(code);
  });
});

describe('the text output', () => {
  it('shows a plan as terraform does: one line per change, its fields aligned, then the summary', () => {
    const out = text(
      report(true, [
        org('acme', { changes: [CREATE], unmanaged: ['hand-made'] }),
        org('beta', { changes: [UPDATE, UNVERIFIED], unchanged: ['api', 'ui'] }),
        org('gamma', { unchanged: ['web'] }),
      ]),
    );
    expect(out).toBe(
      [
        'org acme',
        '  + create production',
        '      type        = "K8S"',
        '      description = "Production cluster"',
        '      policies    = ["baseline","pci"]',
        '  unmanaged (in the service, not in the manifests; never changed): hand-made',
        '',
        'org beta',
        '  ~ update web',
        '      description : "Web tier" -> "Web tier (new)"',
        '  ? unverified db (include_scaling, policies not shown by the service and not in the state file; sync sends the values below once)',
        '      include_scaling : (not shown by the service) -> false',
        '      policies        : (not shown by the service) -> ["pci"]',
        '  = 2 unchanged',
        '',
        'org gamma',
        '  = 1 unchanged',
        '  no changes',
        '',
        'Plan: 1 to create, 1 to update, 1 unverified, 3 unchanged, 1 unmanaged.',
        '',
      ].join('\n'),
    );
  });

  it('shows what a sync did to each change, and why an org failed or was left alone', () => {
    const error = 'description (sent "", it keeps "x")';
    const out = text(
      report(false, [
        org('acme', { status: 'invalid', errors: [PROBLEM] }),
        org('beta', {
          status: 'failed',
          changes: [
            { ...CREATE, result: 'applied' },
            { ...UPDATE, result: 'not-converged', error },
          ],
        }),
        org('gamma', {
          status: 'failed',
          error: 'cannot list the org: the token was refused (401)',
        }),
      ]),
    );
    expect(out).toContain(
      'org acme (invalid)\n  manifests/acme.yaml:9:11 environments[1].type: "s3" is not one of K8S, S3\n  left alone: no request is made for an org whose manifests have errors\n',
    );
    expect(out).toContain('  + create production [applied]\n');
    expect(out).toContain(
      `  ~ update web [NOT CONVERGED]\n      description : "Web tier" -> "Web tier (new)"\n      ${error}\n`,
    );
    expect(out).toContain(
      'org gamma (failed)\n  error: cannot list the org: the token was refused (401)\n',
    );
    expect(out).toMatch(
      /\nSync: 1 applied, 0 failed, 1 not converged \(1 to create, 1 to update, 0 unverified, 0 unchanged, 0 unmanaged\)\. Errors: 1 invalid org, 1 org\(s\) failed\.\n$/,
    );
  });

  it('says how long requests waited because the service asked, only when they did', () => {
    const quiet = [org('acme', { unchanged: ['web'] })];
    expect(text(report(true, quiet, { throttledMs: 1234 }))).toMatch(
      /\nThrottled: requests waited 1\.2 s because the service asked them to \(Retry-After\)\.\n$/,
    );
    expect(text(report(true, quiet, { throttledMs: 0 }))).not.toContain('Throttled');
    expect(text(report(true, quiet))).not.toContain('Throttled');
  });

  it('is coloured only when asked to (a terminal), and then marks changes and errors', () => {
    const run = report(false, [
      org('acme', { changes: [{ ...CREATE, result: 'applied' }] }),
      org('beta', { status: 'failed', error: 'boom' }),
    ]);
    expect(text(run)).not.toContain('\u001b[');
    const coloured = text(run, true);
    expect(coloured).toContain(
      '\u001b[32m+ create\u001b[0m production [\u001b[32mapplied\u001b[0m]',
    );
    expect(coloured).toContain('\u001b[31merror: boom\u001b[0m');
    // oxlint-disable-next-line no-control-regex -- the colour codes are what is taken out
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toBe(text(run));
  });
});

describe('the markdown output', () => {
  it('shows a plan as a table of orgs, then each org with changes open', () => {
    const out = markdown(
      report(true, [
        org('acme', { changes: [CREATE] }),
        org('beta', { unchanged: ['web'], unmanaged: ['old'] }),
        org('gamma', { status: 'failed', error: 'cannot list the org: 503' }),
      ]),
    );
    expect(out.startsWith('### envsync plan\n\n**1** to create, **0** to update')).toBe(true);
    expect(out).toContain(
      '| org | status | create | update | rename | archive | unverified | unchanged | unmanaged | errors |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n' +
        '| acme | ✅ ok | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 |\n' +
        '| beta | ✅ ok | 0 | 0 | 0 | 0 | 0 | 1 | 1 | 0 |\n' +
        '| gamma | ❌ failed | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 |\n',
    );
    expect(out).toContain('<details open><summary><b>acme</b>: 1 change</summary>');
    expect(out).toContain(
      '| action | environment | fields |\n| --- | --- | --- |\n| ➕ create | production | type: <code>"K8S"</code><br>description: <code>"Production cluster"</code><br>policies: <code>["baseline","pci"]</code> |',
    );
    expect(out).toContain('<details><summary><b>beta</b>: no changes</summary>');
    expect(out).toContain('<details open><summary><b>gamma</b>: failed</summary>');
    expect(out).toContain('> ❌ cannot list the org: 503');
  });

  it('adds a result column to a sync', () => {
    const changes = [
      { ...UPDATE, result: 'failed' as const, error: 'HTTP 400' },
      { ...UNVERIFIED, result: 'applied' as const },
    ];
    const out = markdown(report(false, [org('acme', { status: 'failed', changes })]));
    expect(out.startsWith('### envsync sync\n\n**1** applied, **1** failed')).toBe(true);
    expect(out).toContain(
      '| action | environment | fields | result |\n| --- | --- | --- | --- |\n' +
        '| ✏️ update | web | description: <code>"Web tier"</code> → <code>"Web tier \\(new\\)"</code> | ❌ failed: HTTP 400 |\n' +
        '| ❔ unverified | db | include_scaling: _(not shown by the service)_ → <code>false</code><br>policies: _(not shown by the service)_ → <code>["pci"]</code> | ✅ applied |',
    );
  });

  it('says what drift means and counts it healed, only when there is drift', () => {
    const plan = markdown(report(true, [org('acme', { changes: [DRIFT, UPDATE] })]));
    expect(plan).toContain('_Drift_: changed on the service since envsync applied it');
    const healed = { ...DRIFT, result: 'applied' as const };
    const sync = markdown(report(false, [org('acme', { changes: [healed] })]));
    expect(sync).toContain('**1** applied (**1** drift healed), **0** failed');
    expect(markdown(report(true, [org('acme', { changes: [UPDATE] })]))).not.toMatch(/drift/i);
  });
});

it('the JSON output is the report itself, versioned, with the cause of each change and drift counted', () => {
  const run = report(false, [org('acme', { changes: [{ ...DRIFT, result: 'applied' }, CREATE] })]);
  expect(JSON.parse(RENDERERS.json.run(run, { color: false }))).toEqual(run);
  expect(run.summary).toMatchObject({ drift: 1, driftHealed: 1, update: 1, create: 1 });
});

it('policies and tags sent by their own operations: names and values that could mislead are quoted and escaped', () => {
  const sent = change(
    'create',
    'web',
    { type: { from: null, to: 'K8S' } },
    {
      policies: { attach: ['<b>pci</b>'], detach: ['old'] },
      tags: { set: { 'k=v': '', team: '\u001b[31mred\u202e' }, remove: [] },
    },
  );
  const run = report(true, [org('acme', { changes: [sent] })]);
  expect(text(run)).toContain(
    '      + policy <b>pci</b>\n      - policy old\n      + tag "k=v"=""\n      + tag team="\\u001b[31mred\\u202e"\n',
  );
  const colored = text(run, true);
  expect(colored).toContain('\u001b[32m+ policy <b>pci</b>\u001b[0m');
  expect(colored).toContain('\u001b[31m- policy old\u001b[0m');
  const out = markdown(run);
  expect(out).toContain('+ policy <code>&lt;b&gt;pci&lt;/b&gt;</code>');
  expect(out).toContain('+ tag <code>team="\\\\u001b[31mred\\\\u202e"</code>');
  expect(raw(out)).toBe(false);
});

describe('policy document uploads, in each output', () => {
  const [a, b] = ['a', 'b'].map((c) => `sha256:${c.repeat(64)}`) as [string, string];
  const hostile = 'line\nbreak \u001b[31mred\u001b[0m \u202eevil <b>*x*</b>';
  const error = 'PUT /api/v2/policies/acme: 413';
  const uploads = (dryRun: boolean) =>
    report(dryRun, [
      org('acme', {
        unchanged: ['prod'],
        policyDocuments: [
          upload('prod-requirements', {
            action: 'create',
            version: null,
            fields: { content: { from: null, to: b }, description: { from: null, to: hostile } },
            result: dryRun ? 'planned' : 'applied',
          }),
          upload('baseline', {
            fields: { content: { from: a, to: b }, description: { from: 'old', to: 'new' } },
            ...(dryRun ? {} : { result: 'failed', error }),
          }),
        ],
        policyDocumentsUnchanged: ['kept'],
        policyDocumentsNotManaged: ['legacy'],
      }),
    ]);

  it('text: one line per upload, its fields, then the unchanged and the not managed', () => {
    const planned = text(uploads(true));
    expect(planned).toContain(
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
    expect(planned).toContain('Policy documents: 1 to create, 1 to update.');
    expect(raw(planned)).toBe(false);
    const synced = text(uploads(false));
    expect(synced).toContain('+ policy document prod-requirements [applied]');
    expect(synced).toContain(`~ policy document baseline (content, description) [FAILED]`);
    expect(synced).toContain(error);
    expect(synced).toContain('Policy documents: 1 applied, 1 failed (1 to create, 1 to update).');
  });

  it('markdown: a table per org, every cell escaped', () => {
    const out = markdown(uploads(false));
    expect(out).toContain('| action | policy document | fields | result |');
    expect(out).toContain('| ✏️ update | baseline |');
    expect(out).toContain(`❌ failed: ${error}`);
    expect(out).toContain('description: "line\\\\nbreak \\\\u001b[31mred');
    expect(out).toContain('&lt;b&gt;\\*x\\*&lt;/b&gt;');
    expect(out).not.toContain('<b>*x');
    expect(raw(out)).toBe(false);
    expect(out).toContain(
      'Policy documents not managed (on the service, in no manifest; never deleted): <code>legacy</code>',
    );
  });
});

describe('GitHub annotations', () => {
  it('escape messages and properties as GitHub requires', () => {
    const odd = { file: 'a,b:c.yaml', line: 2, column: 3, path: 'x', message: '50% done\nnext' };
    expect(problemAnnotations([odd], (f) => f)).toEqual([
      '::error file=a%2Cb%3Ac.yaml,line=2,col=3,title=envsync%3A invalid manifest::x: 50%25 done%0Anext',
    ]);
  });

  it('give each manifest problem its place, and each failed org and change a line', () => {
    const run = report(false, [
      org('acme', { status: 'invalid', errors: [PROBLEM] }),
      org('beta', {
        status: 'failed',
        changes: [
          { ...CREATE, result: 'applied' },
          { ...UPDATE, result: 'failed', error: 'HTTP 400' },
          { ...UNVERIFIED, result: 'not-converged', error: 'policies' },
        ],
      }),
      org('gamma', { status: 'failed', error: 'token refused' }),
    ]);
    expect(runAnnotations(run, (file) => `deploy/${file}`)).toEqual([
      '::error file=deploy/manifests/acme.yaml,line=9,col=11,title=envsync%3A invalid manifest::environments[1].type: "s3" is not one of K8S, S3',
      '::error title=envsync%3A beta/web failed::HTTP 400',
      '::warning title=envsync%3A beta/db not-converged::policies',
      '::error title=envsync%3A org gamma failed::token refused',
    ]);
  });
});

it('every org failed for one cause: text, markdown and annotations say it once, with what to check', () => {
  const cause = { kind: 'refused', code: 'ECONNREFUSED', host: '127.0.0.1:9' } as const;
  const refused = (name: string): OrgReport =>
    org(name, { status: 'failed', error: `cannot list ${name}: refused (ECONNREFUSED)`, cause });
  const orgs = [
    refused('acme'),
    org('bad', { status: 'invalid', errors: [PROBLEM] }),
    refused('beta'),
  ];
  const failure = commonFailure(orgs);
  const run: RunReport = { ...report(true, orgs), ...(failure && { failure }) };
  const count = (out: string) => out.split('ECONNREFUSED').length - 1;
  const out = text(run);
  expect(out).toContain(
    'error: all 2 orgs with valid manifests failed the same way: the API at 127.0.0.1:9 refused the connection (ECONNREFUSED)\n' +
      '  Is --api-url right? Nothing accepts connections at that address: a wrong host or port, or the service is down.\n' +
      '  orgs: acme, beta\n',
  );
  expect(count(out)).toBe(1);
  expect(out).not.toMatch(/^org (acme|beta)/m);
  // An org with problems of its own still shows them.
  expect(out).toContain('org bad (invalid)');
  expect(out).toContain('Errors: 1 invalid org, 2 org(s) failed.');
  // Markdown keeps a row per org in the table.
  const md = markdown(run);
  expect(count(md)).toBe(1);
  expect(md).toMatch(/\| acme \| ❌ failed \|[^]*\| beta \| ❌ failed \|/);
  expect(md).not.toContain('<b>acme</b>');
  expect(md).toContain('<b>bad</b>');
  expect(runAnnotations(run, (file) => file).filter((line) => count(line) > 0)).toEqual([
    expect.stringMatching(
      /^::error title=envsync%3A every org failed::all 2 orgs .*Is --api-url right\?/,
    ),
  ]);
});
