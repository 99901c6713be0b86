/** What CI sees: GitHub annotations, the step summary, export, a saved plan's binding, progress. */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { startTestEmulator } from '../helpers/emulator.ts';
import { CLI } from '../helpers/entry.ts';
import { tempDir } from '../helpers/tmp.ts';

const TOKEN = 'ci-token-4d5e6f';

let tmp: Awaited<ReturnType<typeof tempDir>>;

// One emulator for the file, emptied before each test (store, request log, faults).
const api = await startTestEmulator({ profile: 'kosli', tokens: [{ token: TOKEN, orgs: null }] });
afterAll(() => api.close());
beforeEach(async () => {
  tmp = await tempDir();
  await api.reset();
});
afterEach(() => tmp.cleanup());

const BAD =
  'org: acme\nenvironments:\n  - name: production\n    type: k8s\n    description: "a, b: c"\n';
const GOOD = 'org: beta\nenvironments:\n  - name: web\n    type: S3\n    description: Web\n';
/** The CLI in this process, in the test's folder, with the token. */
const cli = (...args: string[]) =>
  envsyncInProcess(args, { cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN } });
/** A plan or a sync of the manifests in `m`, against the emulator. */
const pass = (command: string, ...args: string[]) =>
  cli(command, '--manifests', 'm', '--api-url', api.url, '--state', 'state.json', ...args);
/** validate in `cwd`, with `env`. */
const validate = (cwd: string, env: Record<string, string>, ...args: string[]) =>
  envsyncInProcess(['validate', '--manifests', ...args], { cwd, env });

describe('GitHub annotations', () => {
  it('prints each manifest problem as ::error with the path relative to the repository root', async () => {
    await mkdir(tmp.path('repo/.git'), { recursive: true });
    await tmp.write('repo/deploy/manifests/acme.yaml', BAD);
    await tmp.write('repo/deploy/manifests/beta.yaml', GOOD);
    const result = await validate(tmp.path('repo/deploy'), { GITHUB_ACTIONS: 'true' }, 'manifests');
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
    const ws = tmp.path('ws');
    const forced = await validate(
      ws,
      { GITHUB_WORKSPACE: tmp.dir },
      'm',
      '--annotations',
      'github',
      '-o',
      'json',
    );
    expect(forced.stderr).toContain(
      '::error file=ws/m/acme.yaml,line=6,col=5,title=envsync%3A invalid manifest::environments[0].polices: unknown key "polices" (did you mean "policies"?)',
    );
    expect(() => JSON.parse(forced.stdout) as unknown).not.toThrow();
    for (const [env, args] of [
      [{ GITHUB_ACTIONS: 'true' }, ['--annotations', 'none']],
      [{}, []],
    ] as const) {
      const quiet = await validate(ws, env, 'm', ...args);
      expect(quiet.stdout + quiet.stderr).not.toContain('::error');
    }
  });

  it('annotates failed orgs and not-converged changes after a sync', async () => {
    await tmp.write('m/beta.yaml', GOOD);
    expect((await pass('sync')).code).toBe(0);
    await writeFile(tmp.path('m/beta.yaml'), GOOD.replace('description: Web', 'description: ""'));
    // The PUT of the contract dialect, which the kosli service ignores "" in (its PATCH clears it).
    const result = await pass('sync', '--annotations', 'github', '--api-dialect', 'contract');
    expect(result.stdout).toMatch(
      /^::warning title=envsync%3A beta\/web not-converged::the service did not take description/m,
    );
  });
});

it('appends the markdown plan to --summary-file, and to $GITHUB_STEP_SUMMARY by default', async () => {
  await tmp.write('m/beta.yaml', GOOD);
  await writeFile(tmp.path('summary.md'), '# earlier step\n');
  await pass('plan', '--summary-file', 'summary.md');
  await validate(tmp.dir, { GITHUB_STEP_SUMMARY: tmp.path('summary.md') }, 'm');
  const summary = await readFile(tmp.path('summary.md'), 'utf8');
  expect(summary.startsWith('# earlier step\n### envsync plan\n')).toBe(true);
  expect(summary).toContain('| beta | ✅ ok | 1 | 0 | 0 | 0 | 0 | 0 |');
  expect(summary).toContain(
    '### envsync validate\n\n✅ valid: 1 file(s), 1 org(s), 1 environment(s)',
  );
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
    expect((await validate(tmp.dir, {}, 'm')).code).toBe(0);
    const plan = await pass('plan', '-o', 'json', '--detailed-exitcode');
    expect(plan.code, plan.stdout).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({
      summary: { create: 0, update: 0, unverified: 0, unchanged: 8, unmanaged: 1 },
    });
  });

  it('writes only what the listing shows and says once what it could not see, for several orgs; export -> plan --detailed-exitcode with no state exits 0', async () => {
    const spec = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: null }] });
    try {
      await spec.putStore({ orgs: { acme: tricky.slice(0, 2), beta: [tricky[3]] } });
      const out = await cli('export', '--org', 'acme', '--org', 'beta', '--api-url', spec.url);
      expect(out.code).toBe(0);
      expect(out.stdout).toContain(
        '# The listing does not show include_scaling, policies, require_provenance, so they are left out where unseen:',
      );
      expect(out.stdout).not.toMatch(/include_scaling:|policies:/);
      expect(out.stdout.split('\n---\n')).toHaveLength(2);
      expect(out.stderr.match(/does not show/g)).toHaveLength(1);
      expect(out.stderr).toContain(
        'the listing does not show include_scaling, policies, require_provenance (org acme, beta)',
      );
      await tmp.write('spec/all.yaml', out.stdout);
      const args = ['plan', '--manifests', 'spec', '--api-url', spec.url, '-o', 'json'];
      const plan = await cli(...args, '--detailed-exitcode');
      expect(plan.code, plan.stdout).toBe(0);
      expect(JSON.parse(plan.stdout)).toMatchObject({
        summary: { create: 0, update: 0, unverified: 0, unchanged: 3 },
      });
    } finally {
      await spec.close();
    }
  });
});

it('a saved plan is sealed, and refused with exit 1, saying what moved, when the live listing changed since', async () => {
  await tmp.write('m/beta.yaml', GOOD);
  await pass('sync');
  await writeFile(tmp.path('m/beta.yaml'), GOOD.replace('Web', 'Web v2'));
  expect((await pass('plan', '--out', 'plan.json')).code).toBe(0);
  expect(JSON.parse(await readFile(tmp.path('plan.json'), 'utf8'))).toMatchObject({
    kind: 'envsync-plan',
    integrity: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    orgs: [{ org: 'beta', digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }],
  });
  // Someone changes the service by hand after the review.
  const web = (await api.getStore()).orgs['beta']?.[0];
  if (web === undefined) throw new Error('expected web');
  const changed = [
    { ...web, description: 'changed by hand' },
    { ...web, name: 'newcomer' },
  ];
  await api.putStore({ orgs: { beta: changed } });
  const puts = async () => (await api.getRequests(1000)).filter((r) => r.method === 'PUT').length;
  const before = await puts();
  const sync = await pass('sync', '--plan', 'plan.json');
  expect(sync.code).toBe(1);
  expect(sync.stderr).toContain(
    'refusing to apply plan.json: the service moved since the plan was made',
  );
  expect(sync.stderr).toContain('org beta: newcomer appeared; web changed (description)');
  expect(await puts()).toBe(before);
});

describe('progress', () => {
  const many = `org: acme\nenvironments:\n${Array.from({ length: 60 }, (_, i) => `  - name: env-${i}\n    type: K8S\n    description: d${i}\n`).join('')}`;
  const args = ['sync', '--manifests', 'm', '--state', 'state.json', '--log-level', 'silent'];

  it('shows done / total, failures and rate on a terminal for a sync of more than 50 changes', async () => {
    await tmp.write('m/acme.yaml', many);
    const command = [process.execPath, CLI, ...args, '--api-url', api.url]
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
    const env = { ENVSYNC_TOKEN: TOKEN };
    const result = await envsync([...args, '--api-url', api.url], { cwd: tmp.dir, env });
    expect(result).toMatchObject({ code: 0, stderr: '' });
  });
});
