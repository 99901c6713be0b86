import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';
import { CLI } from '../helpers/entry.ts';

const TOKEN = 'ci-token-4d5e6f';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;

// One emulator for the file, emptied before each test (store, request log, faults).
beforeAll(async () => {
  api = await startTestEmulator({ profile: 'kosli', tokens: [{ token: TOKEN, orgs: null }] });
});
afterAll(async () => {
  await api.close();
});
beforeEach(async () => {
  tmp = await tempDir();
  await api.reset();
});
afterEach(async () => {
  await tmp.cleanup();
});

const BAD =
  'org: acme\nenvironments:\n  - name: production\n    type: k8s\n    description: "a, b: c"\n';
const GOOD = 'org: beta\nenvironments:\n  - name: web\n    type: S3\n    description: Web\n';
const shared = () => ['--api-url', api.url, '--state', tmp.path('state.json')];
const withToken = () => ({ cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN } });
/** The CLI in this process, in the test's folder, with the token. */
const cli = (...args: string[]) => envsyncInProcess(args, withToken());

describe('GitHub annotations', () => {
  it('prints each manifest problem as ::error with the path relative to the repository root', async () => {
    await mkdir(tmp.path('repo/.git'), { recursive: true });
    await tmp.write('repo/deploy/manifests/acme.yaml', BAD);
    await tmp.write('repo/deploy/manifests/beta.yaml', GOOD);
    const result = await envsyncInProcess(['validate', '--manifests', 'manifests'], {
      cwd: tmp.path('repo/deploy'),
      env: { GITHUB_ACTIONS: 'true' },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      '::error file=deploy/manifests/acme.yaml,line=4,col=11,title=envsync%3A invalid manifest::environments[0].type: "k8s" is not one of K8S, ECS, S3, lambda, server, docker, azure-apps, cloud-run, logical (did you mean "K8S"?)\n',
    );
  });

  it('uses GITHUB_WORKSPACE as the root, --annotations to force or silence them, and stderr under --output json', async () => {
    await tmp.write(
      'ws/m/acme.yaml',
      'org: acme\nenvironments:\n  - name: x\n    type: S3\n    description: "100%\\nsure"\n    polices: []\n',
    );
    const forced = await envsyncInProcess(
      ['validate', '--manifests', 'm', '--annotations', 'github', '-o', 'json'],
      { cwd: tmp.path('ws'), env: { GITHUB_WORKSPACE: tmp.dir } },
    );
    expect(forced.stderr).toContain(
      '::error file=ws/m/acme.yaml,line=6,col=5,title=envsync%3A invalid manifest::environments[0].polices: unknown key "polices" (did you mean "policies"?)',
    );
    expect(() => JSON.parse(forced.stdout) as unknown).not.toThrow();
    const silenced = await envsyncInProcess(
      ['validate', '--manifests', 'm', '--annotations', 'none'],
      {
        cwd: tmp.path('ws'),
        env: { GITHUB_ACTIONS: 'true' },
      },
    );
    expect(silenced.stdout + silenced.stderr).not.toContain('::error');
    const plain = await envsyncInProcess(['validate', '--manifests', 'm'], { cwd: tmp.path('ws') });
    expect(plain.stdout + plain.stderr).not.toContain('::error');
  });

  it('annotates failed orgs and not-converged changes after a sync', async () => {
    await tmp.write('m/beta.yaml', GOOD);
    expect((await cli('sync', '--manifests', 'm', ...shared())).code).toBe(0);
    await writeFile(tmp.path('m/beta.yaml'), GOOD.replace('description: Web', 'description: ""'));
    const result = await cli('sync', '--manifests', 'm', ...shared(), '--annotations', 'github');
    expect(result.stdout).toMatch(
      /^::warning title=envsync%3A beta\/web not-converged::the service did not take description/m,
    );
  });
});

describe('step summary', () => {
  it('appends the markdown plan to --summary-file, and to $GITHUB_STEP_SUMMARY by default', async () => {
    await tmp.write('m/beta.yaml', GOOD);
    await writeFile(tmp.path('summary.md'), '# earlier step\n');
    await cli('plan', '--manifests', 'm', ...shared(), '--summary-file', 'summary.md');
    await envsyncInProcess(['validate', '--manifests', 'm'], {
      cwd: tmp.dir,
      env: { GITHUB_STEP_SUMMARY: tmp.path('summary.md') },
    });
    const summary = await readFile(tmp.path('summary.md'), 'utf8');
    expect(summary.startsWith('# earlier step\n### envsync plan\n')).toBe(true);
    expect(summary).toContain('| beta | ✅ ok | 1 | 0 | 0 | 0 | 0 | 0 |');
    expect(summary).toContain(
      '### envsync validate\n\n✅ valid: 1 file(s), 1 org(s), 1 environment(s)',
    );
  });
});

describe('envsync export', () => {
  const env = (name: string, type: string, description: string, more: object = {}) => ({
    name,
    type,
    description,
    include_scaling: false,
    policies: [],
    ...more,
  });
  const tricky = [
    env('quotes', 'K8S', `He said "hi" and 'bye'`, {
      include_scaling: true,
      policies: ['pci', 'baseline'],
    }),
    env('hash', 'S3', 'not # a comment'),
    env('colons', 'logical', 'key: value, more: yes', { policies: ['sox'] }),
    env('newlines', 'K8S', 'line one\nline two\n'),
    env('leading', 'K8S', '   leading spaces and trailing '),
    env('looks-typed', 'K8S', 'true'),
    env('empty', 'K8S', ''),
    env('tasks', 'ECS', 'a production type beyond the contract'),
    env('legacy', 'mainframe', 'not manageable'),
  ];

  it('round trip: export, then plan shows nothing to create or update', async () => {
    // The policies the environments attach have their documents on the service.
    const documents = ['baseline', 'pci', 'sox'].map((name) => ({
      name,
      versions: [{ policy_yaml: `# ${name}\n` }],
    }));
    await api.putStore({ orgs: { acme: tricky }, policies: { acme: documents } });
    const exported = await cli('export', '--org', 'acme', '--out', 'm', '--api-url', api.url);
    expect(exported.code, exported.stderr).toBe(0);
    const text = await readFile(tmp.path('m/acme.yaml'), 'utf8');
    expect(text).toContain(
      '# Not exported: envsync manages only the types K8S, ECS, S3, lambda, server, docker, azure-apps, cloud-run, logical',
    );
    expect(text).toContain('"legacy" (type "mainframe")');
    expect(text).toContain('type: ECS');
    expect((await envsyncInProcess(['validate', '--manifests', 'm'], { cwd: tmp.dir })).code).toBe(
      0,
    );
    const plan = await cli(
      'plan',
      '--manifests',
      'm',
      ...shared(),
      '-o',
      'json',
      '--detailed-exitcode',
    );
    expect(plan.code, plan.stdout).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({
      summary: { create: 0, update: 0, unverified: 0, unchanged: 8, unmanaged: 1 },
    });
  });

  it('writes only what the listing shows and says once what it could not see; export -> plan --detailed-exitcode with no state exits 0; never overwrites by accident', async () => {
    const spec = await startTestEmulator({
      profile: 'spec',
      tokens: [{ token: TOKEN, orgs: null }],
    });
    try {
      await spec.putStore({ orgs: { acme: tricky.slice(0, 2), beta: [tricky[3]] } });
      const out = await cli('export', '--org', 'acme', '--org', 'beta', '--api-url', spec.url);
      expect(out.code).toBe(0);
      expect(out.stdout).toContain(
        '# The listing does not show include_scaling, policies, require_provenance, so they are left out where unseen:',
      );
      expect(out.stdout).not.toMatch(/include_scaling:|policies:/);
      expect(out.stdout.split('\n---\n')).toHaveLength(2);
      // Said once for the whole run, not once per org.
      expect(out.stderr.match(/does not show/g)).toHaveLength(1);
      expect(out.stderr).toContain(
        'the listing does not show include_scaling, policies, require_provenance (org acme, beta)',
      );
      await tmp.write('m/all.yaml', out.stdout);
      const plan = await cli(
        'plan',
        '--manifests',
        'm',
        '--api-url',
        spec.url,
        '-o',
        'json',
        '--detailed-exitcode',
      );
      expect(plan.code, plan.stdout).toBe(0);
      expect(JSON.parse(plan.stdout)).toMatchObject({
        summary: { create: 0, update: 0, unverified: 0, unchanged: 3 },
      });
      await tmp.write('out/acme.yaml', 'mine');
      const refused = await cli('export', '--org', 'acme', '--out', 'out', '--api-url', spec.url);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('already exists; pass --force');
      expect(await readFile(tmp.path('out/acme.yaml'), 'utf8')).toBe('mine');
    } finally {
      await spec.close();
    }
  });
});

describe('plan binding', () => {
  it('sync --plan applies exactly the saved plan, sealed with its integrity digest', async () => {
    await tmp.write('m/beta.yaml', GOOD);
    const plan = await cli('plan', '--manifests', 'm', ...shared(), '--out', 'plan.json');
    expect(plan.code).toBe(0);
    const saved: unknown = JSON.parse(await readFile(tmp.path('plan.json'), 'utf8'));
    expect(saved).toMatchObject({
      kind: 'envsync-plan',
      integrity: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      orgs: [{ org: 'beta', digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }],
    });
    const sync = await cli(
      'sync',
      '--manifests',
      'm',
      ...shared(),
      '--plan',
      'plan.json',
      '-o',
      'json',
    );
    expect(sync.code, sync.stderr).toBe(0);
    expect(JSON.parse(sync.stdout)).toMatchObject({ summary: { create: 1, applied: 1 } });
    expect((await api.getStore()).orgs['beta']?.[0]?.description).toBe('Web');
  });

  it('refuses with exit 1, saying what moved, when the live listing changed since the plan', async () => {
    await tmp.write('m/beta.yaml', GOOD);
    await cli('sync', '--manifests', 'm', ...shared());
    await writeFile(tmp.path('m/beta.yaml'), GOOD.replace('Web', 'Web v2'));
    await cli('plan', '--manifests', 'm', ...shared(), '--out', 'plan.json');
    // Someone changes the service by hand after the review.
    const store = await api.getStore();
    const web = store.orgs['beta']?.[0];
    if (web === undefined) throw new Error('expected web');
    await api.putStore({
      orgs: {
        beta: [
          { ...web, description: 'changed by hand' },
          { ...web, name: 'newcomer' },
        ],
      },
    });
    const puts = (await api.getRequests(1000)).filter((r) => r.method === 'PUT').length;
    const sync = await cli('sync', '--manifests', 'm', ...shared(), '--plan', 'plan.json');
    expect(sync.code).toBe(1);
    expect(sync.stderr).toContain(
      'refusing to apply plan.json: the service moved since the plan was made',
    );
    expect(sync.stderr).toContain('org beta: newcomer appeared; web changed (description)');
    expect((await api.getRequests(1000)).filter((r) => r.method === 'PUT').length).toBe(puts);
  });
});

describe('progress', () => {
  const many = `org: acme\nenvironments:\n${Array.from({ length: 60 }, (_, i) => `  - name: env-${i}\n    type: K8S\n    description: d${i}\n`).join('')}`;

  it('shows done / total, failures and rate on a terminal for a sync of more than 50 changes', async () => {
    await tmp.write('m/acme.yaml', many);
    const args = ['sync', '--manifests', 'm', '--api-url', api.url, '--state', 'state.json'];
    const command = [process.execPath, CLI, ...args, '--log-level', 'silent']
      .map((part) => `'${part}'`)
      .join(' ');
    // `script` runs the command in a pseudo-terminal, as a person's shell would.
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: tmp.dir,
      env: { PATH: process.env['PATH'] ?? '', ENVSYNC_TOKEN: TOKEN, TERM: 'dumb' },
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect(code).toBe(0);
    expect(output).toMatch(/applying: 60\/60 \(100%\), 0 failed, [\d.]+\/s/);
  });

  it('shows nothing extra when stderr is not a terminal', async () => {
    await tmp.write('m/acme.yaml', many);
    const result = await envsync(
      ['sync', '--manifests', 'm', ...shared(), '--log-level', 'silent'],
      withToken(),
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
  });
});
