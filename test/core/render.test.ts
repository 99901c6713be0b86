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
  REPORT_VERSION,
  type RunReport,
  summarize,
} from '../../src/core/report.ts';
import { RENDERERS } from '../../src/core/renderers.ts';

const org = (name: string, overrides: Partial<OrgReport> = {}): OrgReport => ({
  org: name,
  status: 'ok',
  changes: [],
  unchanged: [],
  unmanaged: [],
  errors: [],
  ...overrides,
});

const report = (
  dryRun: boolean,
  orgs: readonly OrgReport[],
  extra: Partial<Pick<RunReport, 'errors'>> & { throttledMs?: number } = {},
): RunReport => ({
  version: REPORT_VERSION,
  dryRun,
  summary: {
    ...summarize(orgs),
    ...(extra.throttledMs === undefined ? {} : { throttledMs: extra.throttledMs }),
  },
  orgs,
  errors: extra.errors ?? [],
});

const CREATE: ChangeReport = {
  action: 'create',
  cause: 'change',
  name: 'production',
  fields: {
    type: { from: null, to: 'K8S' },
    description: { from: null, to: 'Production cluster' },
    policies: { from: null, to: ['baseline', 'pci'] },
  },
  result: 'planned',
};
const UPDATE: ChangeReport = {
  action: 'update',
  cause: 'change',
  name: 'web',
  fields: { description: { from: 'Web tier', to: 'Web tier (new)' } },
  result: 'planned',
};
const UNVERIFIED: ChangeReport = {
  action: 'unverified',
  cause: 'change',
  name: 'db',
  fields: {
    include_scaling: { from: null, to: false, notShown: true },
    policies: { from: null, to: ['pci'], notShown: true },
  },
  unknown: ['include_scaling', 'policies'],
  result: 'planned',
};
/** The same update as drift: the service moved, the manifest stayed as last applied. */
const DRIFT: ChangeReport = {
  ...UPDATE,
  cause: 'drift',
  name: 'api',
  fields: { description: { from: 'edited by hand', to: 'API' } },
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
  const notConverged = org('acme', {
    status: 'failed',
    changes: [{ ...UPDATE, result: 'not-converged' }],
  });
  it.each([
    ['a plan with changes pending', 0, report(true, [pending]), false],
    ['a plan with changes pending, --detailed-exitcode', 2, report(true, [pending]), true],
    ['a plan with nothing to do, --detailed-exitcode', 0, report(true, [quiet]), true],
    ['a sync that applied its changes, --detailed-exitcode', 0, report(false, [pending]), true],
    ['an org that failed', 1, report(false, [quiet, failed]), false],
    [
      'an org that failed, in a plan with changes pending',
      1,
      report(true, [pending, failed]),
      true,
    ],
    ['an org with invalid manifests', 1, report(true, [invalid, pending]), true],
    ['a change that did not converge', 1, report(false, [notConverged]), false],
    [
      'a plan whose only change did not take before (a sync sends nothing), --detailed-exitcode',
      0,
      report(true, [org('acme', { changes: [{ ...UPDATE, knownNotConverged: true }] })]),
      true,
    ],
    [
      'a plan with a change known not to take and another to send, --detailed-exitcode',
      2,
      report(true, [
        org('acme', { changes: [{ ...UPDATE, knownNotConverged: true }, UNVERIFIED] }),
      ]),
      true,
    ],
    [
      'a plan with only values not shown by the service, --detailed-exitcode',
      2,
      report(true, [org('acme', { changes: [UNVERIFIED] })]),
      true,
    ],
    ['a manifest problem outside any org', 1, report(true, [quiet], { errors: [PROBLEM] }), false],
  ] as const)('%s: %i', (_what, code, run, detailed) => {
    expect(exitCode(run, { detailed })).toBe(code);
  });
});

describe('the text output', () => {
  const text = (run: RunReport, color = false) => RENDERERS.text.run(run, { color });

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
    const out = text(
      report(false, [
        org('acme', { status: 'invalid', errors: [PROBLEM] }),
        org('beta', {
          status: 'failed',
          changes: [
            { ...CREATE, result: 'applied' },
            { ...UPDATE, result: 'not-converged', error: 'description (sent "", it keeps "x")' },
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
      '  ~ update web [NOT CONVERGED]\n      description : "Web tier" -> "Web tier (new)"\n      description (sent "", it keeps "x")\n',
    );
    expect(out).toContain(
      'org gamma (failed)\n  error: cannot list the org: the token was refused (401)\n',
    );
    expect(out).toMatch(
      /\nSync: 1 applied, 0 failed, 1 not converged \(1 to create, 1 to update, 0 unverified, 0 unchanged, 0 unmanaged\)\. Errors: 1 invalid org, 1 org\(s\) failed\.\n$/,
    );
  });

  it('names drift as drift, in the plan and in what a sync did; a change is not marked', () => {
    const plan = text(report(true, [org('acme', { changes: [DRIFT, UPDATE] })]));
    expect(plan).toContain(
      '  ~ update api (drift: changed on the service, not in the manifests)\n' +
        '      description : "edited by hand" -> "API"\n' +
        '  ~ update web\n',
    );
    expect(plan).toContain('\nPlan: 0 to create, 2 to update (1 drift), 0 unverified,');
    const sync = text(
      report(false, [
        org('acme', {
          changes: [
            { ...DRIFT, result: 'applied' },
            { ...DRIFT, name: 'db', result: 'failed', error: 'HTTP 500' },
            { ...UPDATE, result: 'applied' },
          ],
        }),
      ]),
    );
    expect(sync).toContain(
      '  ~ update api (drift: changed on the service, not in the manifests) [applied]\n',
    );
    expect(sync).toContain('\nSync: 2 applied (1 drift healed), 1 failed, 0 not converged (');
    expect(sync).toContain('3 to update (2 drift)');
    const quiet = text(
      report(false, [org('acme', { changes: [{ ...UPDATE, result: 'applied' }] })]),
    );
    expect(quiet).not.toContain('drift');
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
  const markdown = (run: RunReport) => RENDERERS.markdown.run(run, { color: false });

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
      '| org | status | create | update | unverified | unchanged | unmanaged | errors |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n' +
        '| acme | ✅ ok | 1 | 0 | 0 | 0 | 0 | 0 |\n' +
        '| beta | ✅ ok | 0 | 0 | 0 | 1 | 1 | 0 |\n' +
        '| gamma | ❌ failed | 0 | 0 | 0 | 0 | 0 | 1 |\n',
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
    const out = markdown(
      report(false, [
        org('acme', {
          status: 'failed',
          changes: [
            { ...UPDATE, result: 'failed', error: 'HTTP 400' },
            { ...UNVERIFIED, result: 'applied' },
          ],
        }),
      ]),
    );
    expect(out.startsWith('### envsync sync\n\n**1** applied, **1** failed')).toBe(true);
    expect(out).toContain(
      '| action | environment | fields | result |\n| --- | --- | --- | --- |\n' +
        '| ✏️ update | web | description: <code>"Web tier"</code> → <code>"Web tier \\(new\\)"</code> | ❌ failed: HTTP 400 |\n' +
        '| ❔ unverified | db | include_scaling: _(not shown by the service)_ → <code>false</code><br>policies: _(not shown by the service)_ → <code>["pci"]</code> | ✅ applied |',
    );
  });
});

describe('the markdown output, with drift', () => {
  it('marks drift in the action, counts it and says what it means; a change is not marked', () => {
    const md = (run: RunReport) => RENDERERS.markdown.run(run, { color: false });
    const plan = md(report(true, [org('acme', { changes: [DRIFT, UPDATE] })]));
    expect(plan).toContain('**2** to update (**1** drift)');
    expect(plan).toContain('_Drift_: changed on the service since envsync applied it');
    expect(plan).toContain(
      '| ✏️ update (drift) | api | description: <code>"edited by hand"</code> → <code>"API"</code> |\n' +
        '| ✏️ update | web |',
    );
    const sync = md(report(false, [org('acme', { changes: [{ ...DRIFT, result: 'applied' }] })]));
    expect(
      sync.startsWith('### envsync sync\n\n**1** applied (**1** drift healed), **0** failed'),
    ).toBe(true);
    const none = md(report(true, [org('acme', { changes: [UPDATE] })]));
    expect(none).not.toContain('drift');
    expect(none).not.toContain('Drift');
  });
});

describe('the JSON output', () => {
  it('carries the cause of each change and counts drift in the summary', () => {
    const run = report(false, [
      org('acme', { changes: [{ ...DRIFT, result: 'applied' }, CREATE] }),
    ]);
    const json = JSON.parse(RENDERERS.json.run(run, { color: false })) as RunReport;
    expect(json.orgs[0]?.changes.map((c) => [c.name, c.cause])).toEqual([
      ['api', 'drift'],
      ['production', 'change'],
    ]);
    expect(json.summary).toMatchObject({ drift: 1, driftHealed: 1, update: 1, create: 1 });
  });

  it('is the report itself, versioned', () => {
    const run = report(true, [org('acme', { changes: [CREATE], unmanaged: ['old'] })]);
    expect(JSON.parse(RENDERERS.json.run(run, { color: false }))).toEqual(run);
  });
});

/** A kosli update: policies and tags through their operations, the description by the PUT. */
const KOSLI: ChangeReport = {
  action: 'update',
  cause: 'change',
  name: 'prod',
  fields: {
    description: { from: 'Old', to: 'New' },
    policies: { from: ['legacy', 'pci'], to: ['baseline', 'pci'] },
    tags: {
      from: { env: 'staging', legacy: 'yes', team: 'platform' },
      to: { env: 'production', owner: 'a b', team: 'platform' },
    },
  },
  policies: { attach: ['baseline'], detach: ['legacy'] },
  tags: { set: { env: 'production', owner: 'a b' }, remove: ['legacy'] },
  result: 'planned',
};
/** A kosli create with tags and a policy; names and tags that could mislead or inject. */
const KOSLI_CREATE: ChangeReport = {
  action: 'create',
  cause: 'change',
  name: 'web',
  fields: {
    type: { from: null, to: 'K8S' },
    description: { from: null, to: 'Web' },
    policies: { from: null, to: ['<b>pci</b>'] },
    tags: { from: null, to: { 'k=v': '', team: '\u001b[31mred\u202e' } },
  },
  policies: { attach: ['<b>pci</b>'], detach: [] },
  tags: { set: { 'k=v': '', team: '\u001b[31mred\u202e' }, remove: [] },
  result: 'planned',
};

describe('policies and tags sent through their own operations (the kosli dialect)', () => {
  const run = report(true, [org('acme', { changes: [KOSLI, KOSLI_CREATE] })]);

  it('text: a line per policy attached or detached and per tag set, changed or removed', () => {
    expect(RENDERERS.text.run(run, { color: false })).toContain(
      [
        '  ~ update prod',
        '      description : "Old" -> "New"',
        '      + policy baseline',
        '      - policy legacy',
        '      ~ tag env: staging -> production',
        '      + tag owner="a b"',
        '      - tag legacy',
        '  + create web',
        '      type        = "K8S"',
        '      description = "Web"',
        '      + policy <b>pci</b>',
        '      + tag "k=v"=""',
        '      + tag team="\\u001b[31mred\\u202e"',
        '',
      ].join('\n'),
    );
    const colored = RENDERERS.text.run(run, { color: true });
    expect(colored).toContain('\u001b[32m+ policy baseline\u001b[0m');
    expect(colored).toContain('\u001b[31m- tag legacy\u001b[0m');
    expect(colored).toContain('\u001b[33m~ tag env: staging -> production\u001b[0m');
  });

  it('markdown: the same lines in the fields cell, names and values as code, escaped', () => {
    const out = RENDERERS.markdown.run(run, { color: false });
    expect(out).toContain(
      '| ✏️ update | prod | description: <code>"Old"</code> → <code>"New"</code><br>' +
        '+ policy <code>baseline</code><br>- policy <code>legacy</code><br>' +
        '~ tag <code>env</code>: <code>staging</code> → <code>production</code><br>' +
        '+ tag <code>owner="a b"</code><br>- tag <code>legacy</code> |',
    );
    expect(out).toContain('+ policy <code>&lt;b&gt;pci&lt;/b&gt;</code>');
    expect(out).toContain('+ tag <code>team="\\\\u001b[31mred\\\\u202e"</code>');
    expect(out).not.toContain('\u001b');
    expect(out).not.toContain('\u202e');
  });

  it('JSON: fields keep from and to; the change says what it attaches, detaches, sets, removes', () => {
    const json = JSON.parse(RENDERERS.json.run(run, { color: false })) as RunReport;
    expect(json.orgs[0]?.changes[0]).toMatchObject({
      fields: { policies: { from: ['legacy', 'pci'], to: ['baseline', 'pci'] } },
      policies: { attach: ['baseline'], detach: ['legacy'] },
      tags: { set: { env: 'production', owner: 'a b' }, remove: ['legacy'] },
    });
  });

  it('a contract change (no requests beside the PUT) keeps the from -> to line of policies', () => {
    expect(
      RENDERERS.text.run(report(true, [org('acme', { changes: [CREATE] })]), { color: false }),
    ).toContain('      policies    = ["baseline","pci"]');
  });
});

describe('GitHub annotations', () => {
  it('escapes messages and properties as GitHub requires', () => {
    expect(
      problemAnnotations(
        [{ file: 'a,b:c.yaml', line: 2, column: 3, path: 'x', message: '50% done\nnext' }],
        (f) => f,
      ),
    ).toEqual([
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

describe('every org failed for one cause: said once, with what to check', () => {
  const cause = { kind: 'refused', code: 'ECONNREFUSED', host: '127.0.0.1:9' } as const;
  const refused = (name: string): OrgReport =>
    org(name, {
      status: 'failed',
      error: `cannot list the org: GET /api/v2/environments/${name}: connection refused by 127.0.0.1:9 (ECONNREFUSED)`,
      cause,
    });
  const orgs = [
    refused('acme'),
    org('bad', { status: 'invalid', errors: [PROBLEM] }),
    refused('beta'),
  ];
  const failed = commonFailure(orgs);
  const run: RunReport = { ...report(true, orgs), ...(failed ? { failure: failed } : {}) };
  const count = (text: string, part: string) => text.split(part).length - 1;

  it('text: the cause once at the top with its hint and orgs; no section per org it names', () => {
    const text = RENDERERS.text.run(run, { color: false });
    expect(text).toContain(
      'error: all 2 orgs with valid manifests failed the same way: the API at 127.0.0.1:9 refused the connection (ECONNREFUSED)\n' +
        '  Is --api-url right? Nothing accepts connections at that address: a wrong host or port, or the service is down.\n' +
        '  orgs: acme, beta\n',
    );
    expect(count(text, 'ECONNREFUSED')).toBe(1);
    expect(text).not.toContain('org acme');
    expect(text).not.toContain('org beta');
    // An org with problems of its own still shows them.
    expect(text).toContain('org bad (invalid)');
    expect(text).toContain('Errors: 1 invalid org, 2 org(s) failed.');
  });

  it('markdown: the cause once above the table; the table keeps a row per org, no section for those it names', () => {
    const markdown = RENDERERS.markdown.run(run, { color: false });
    expect(count(markdown, 'ECONNREFUSED')).toBe(1);
    expect(markdown).toContain('Is --api-url right?');
    expect(markdown).toMatch(/\| acme \| ❌ failed \|/);
    expect(markdown).toMatch(/\| beta \| ❌ failed \|/);
    expect(markdown).not.toContain('<b>acme</b>');
    expect(markdown).toContain('<b>bad</b>');
  });

  it('JSON: a top-level failure, and each org keeps its error and cause', () => {
    const json = JSON.parse(RENDERERS.json.run(run, { color: false })) as RunReport;
    expect(json.failure).toMatchObject({ ...cause, orgs: ['acme', 'beta'] });
    expect(json.orgs.map((o) => [o.org, o.cause?.kind, o.error?.includes('ECONNREFUSED')])).toEqual(
      [
        ['acme', 'refused', true],
        ['bad', undefined, undefined],
        ['beta', 'refused', true],
      ],
    );
  });

  it('annotations: one for the cause, none per org it names', () => {
    const lines = runAnnotations(run, (file) => file);
    expect(lines.filter((line) => line.includes('ECONNREFUSED'))).toEqual([
      expect.stringMatching(
        /^::error title=envsync%3A every org failed::all 2 orgs .*Is --api-url right\?/,
      ),
    ]);
  });

  it('without one cause, each org says its own error, as before', () => {
    const mixed = [
      refused('acme'),
      org('beta', { status: 'failed', error: 'cannot list the org: 500' }),
    ];
    expect(commonFailure(mixed)).toBeUndefined();
    const text = RENDERERS.text.run(report(true, mixed), { color: false });
    expect(text).toContain('org acme (failed)');
    expect(count(text, 'ECONNREFUSED')).toBe(1);
    expect(text).toContain('org beta (failed)');
  });
});
