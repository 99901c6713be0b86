import { existsSync, readFileSync } from 'node:fs';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { startFakeGitHub } from '../helpers/fake-github.ts';
import { tempDir } from '../helpers/tmp.ts';
import { runProcess, SHELL_ENV, type CliResult } from '../helpers/cli.ts';

/**
 * action.yml's `run:` steps carried out as a runner does, on a copy of the checkout without
 * node_modules: "Install envsync" for real (the runtime dependencies only), then each step's
 * script with its `env:` evaluated, envsync against the emulator and the comment against a fake
 * GitHub. The `uses:` steps are GitHub's: test/examples/github-actions.test.ts checks their wiring.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Left out of the action's copy: installed, built or local to this checkout. */
const NOT_COPIED = new Set(['node_modules', '.git', 'dist', 'bench/out', 'coverage', '.envsync']);
const actionDir = await tempDir('envsync-action-checkout-');
const ROOT = actionDir.path('envsync');
const GITHUB_TOKEN = 'ghs_actionTestGitHubToken42';
const ENVSYNC_TOKEN = 'svc-token-7f3a9b2c1d';
const REPO = 'acme/infra';

interface ActionStep {
  name?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
}
interface ActionFile {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: ActionStep[] };
}

const ACTION = parse(readFileSync(`${REPO_ROOT}action.yml`, 'utf8')) as ActionFile;

interface Context {
  readonly inputs: Record<string, string>;
  readonly github: Record<string, string>;
}

/** Evaluates the `${{ ... }}` expressions this test knows; any other fails the test. */
function evaluate(text: string, ctx: Context): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    const input = /^inputs\.([\w-]+)$/.exec(expr);
    if (input?.[1] !== undefined) {
      const name = input[1];
      if (!(name in ACTION.inputs)) throw new Error(`action.yml uses an undeclared input ${name}`);
      return ctx.inputs[name] ?? evaluate(ACTION.inputs[name]?.default ?? '', ctx);
    }
    const github = /^github\.(\w+)$/.exec(expr);
    if (github?.[1] !== undefined && github[1] in ctx.github) return ctx.github[github[1]] ?? '';
    throw new Error(`this test does not evaluate \${{ ${expr} }}`);
  });
}

/** Runs one step's script as the runner does (shell: bash). */
const bash = (
  script: string,
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
) => runProcess('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], options);

beforeAll(async () => {
  await cp(REPO_ROOT, ROOT, {
    recursive: true,
    filter: (source) => !NOT_COPIED.has(path.relative(REPO_ROOT, source)),
  });
  const install = ACTION.runs.steps.find((step) => step.name === 'Install envsync');
  const run = await bash(install?.run ?? 'false', {
    cwd: actionDir.dir,
    env: { ...SHELL_ENV, GITHUB_ACTION_PATH: ROOT },
    timeoutMs: 400_000,
  });
  if (run.code !== 0)
    throw new Error(`Install envsync exited ${run.code}\n${run.stdout}\n${run.stderr}`);
}, 500_000);
afterAll(() => actionDir.cleanup());

let tmp: Awaited<ReturnType<typeof tempDir>>;
let emulator: TestEmulator;
let github: Awaited<ReturnType<typeof startFakeGitHub>>;

beforeEach(async () => {
  tmp = await tempDir('envsync-action-');
  emulator = await startTestEmulator({ tokens: [{ token: ENVSYNC_TOKEN, orgs: null }] });
  github = await startFakeGitHub({ token: GITHUB_TOKEN });
});
afterEach(async () => {
  await github.close();
  await emulator.close();
  await tmp.cleanup();
});

interface StepRun extends CliResult {
  readonly outputs: Record<string, string>;
  readonly summary: string;
}

/** A pull request event (same repository unless `headRepo` says otherwise). */
function pullRequest(number: number, headRepo: string | null = REPO) {
  return {
    name: 'pull_request',
    payload: {
      number,
      pull_request: {
        number,
        head: {
          sha: 'f'.repeat(40),
          repo: headRepo === null ? null : { full_name: headRepo, fork: headRepo !== REPO },
        },
        base: { repo: { full_name: REPO } },
      },
    },
  };
}
const push = { name: 'push', payload: { ref: 'refs/heads/main' } };

/** Runs action.yml's `run:` steps (but the install) in order, as a runner would. */
async function runAction(
  inputs: Record<string, string>,
  event: { name: string; payload: unknown },
): Promise<StepRun> {
  const n = Math.random().toString(36).slice(2);
  const [output, summary, eventFile] = [`output-${n}`, `summary-${n}`, `event-${n}.json`].map(
    (name) => tmp.path(name),
  ) as [string, string, string];
  await writeFile(eventFile, JSON.stringify(event.payload));
  for (const file of [output, summary]) await writeFile(file, '');
  for (const dir of ['runner-temp', 'work']) await tmp.write(`${dir}/.keep`, '');
  const run = { token: GITHUB_TOKEN, run_id: '4242', run_attempt: '1', job: 'plan' };
  const ctx: Context = { inputs, github: { ...run, action_path: ROOT } };
  const runner: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '',
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_ACTION_PATH: ROOT,
    GITHUB_WORKSPACE: tmp.path('work'),
    GITHUB_OUTPUT: output,
    GITHUB_STEP_SUMMARY: summary,
    GITHUB_EVENT_NAME: event.name,
    GITHUB_EVENT_PATH: eventFile,
    GITHUB_REPOSITORY: REPO,
    GITHUB_API_URL: github.url,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_RUN_ID: '4242',
    GITHUB_SHA: 'f'.repeat(40),
    RUNNER_TEMP: tmp.path('runner-temp'),
  };
  let last: CliResult = { code: 0, stdout: '', stderr: '' };
  for (const step of ACTION.runs.steps) {
    if (step.run === undefined || step.name === 'Install envsync') continue;
    expect(step.shell).toBe('bash');
    const env = { ...runner };
    for (const [name, value] of Object.entries(step.env ?? {})) env[name] = evaluate(value, ctx);
    last = await bash(evaluate(step.run ?? '', ctx), {
      cwd: tmp.path('work'),
      env,
      timeoutMs: 50_000,
    });
    if (last.code !== 0) break;
  }
  const outputs = Object.fromEntries(
    (await readFile(output, 'utf8'))
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return { ...last, outputs, summary: await readFile(summary, 'utf8') };
}

const ACME = `org: acme
environments:
  - name: production
    type: K8S
    description: "Production <b>cluster</b> | eu"
    include_scaling: true
    policies: [baseline]
  - name: staging
    type: S3
    description: Staging
`;
const BROKEN =
  'org: acme\nenvironments:\n  - name: production\n    type: k8s\n    description: x\n';

const withApi = () => ({ 'api-url': emulator.url, token: ENVSYNC_TOKEN });

describe('action.yml run as a runner would, against the emulator and a fake GitHub', () => {
  it('"Install envsync" installed the runtime dependencies only, in the action\'s checkout', () => {
    expect(existsSync(path.join(ROOT, 'node_modules', 'pino', 'package.json'))).toBe(true);
    expect(existsSync(path.join(ROOT, 'node_modules', 'vitest'))).toBe(false);
    expect(existsSync(path.join(ROOT, 'node_modules', 'typescript'))).toBe(false);
  });

  it('a pull request plan: summary, outputs, one comment; after the sync, the same comment says nothing is pending', async () => {
    await tmp.write('work/manifests/acme.yaml', ACME);
    const plan = await runAction({ ...withApi(), 'plan-file': 'plan.json' }, pullRequest(12));
    expect(plan.code, plan.stdout + plan.stderr).toBe(0);
    expect(plan.outputs).toMatchObject({
      'exit-code': '2',
      'changes-pending': 'true',
      mode: 'plan',
      'plan-file': 'plan.json',
      'comment-url': expect.stringContaining('issuecomment-') as unknown,
    });
    expect(plan.summary).toContain('### envsync plan');
    expect(plan.summary).toContain('| acme | ✅ ok | 2 |');
    // The log has the text report; the summary and the comment have envsync's escaped markdown.
    expect(plan.stdout).toContain('+ create production');
    const [comment, ...more] = github.comments(12);
    expect(more).toEqual([]);
    expect(comment?.body.startsWith('<!-- envsync:plan -->\n### envsync plan')).toBe(true);
    expect(comment?.body).toContain(plan.summary.trim());
    expect(comment?.body).toContain('&lt;b&gt;cluster&lt;/b&gt;');
    expect(comment?.body).not.toContain('<b>cluster</b>');
    expect(comment?.body).toContain('https://github.com/acme/infra/actions/runs/4242');
    expect(JSON.parse(await readFile(tmp.path('work/plan.json'), 'utf8'))).toBeTypeOf('object');
    expect(github.requests.every((r) => r.authorization === `Bearer ${GITHUB_TOKEN}`)).toBe(true);

    const sync = await runAction({ ...withApi(), command: 'sync', 'plan-file': 'plan.json' }, push);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    expect(sync.outputs).toMatchObject({ 'exit-code': '0', mode: 'sync', 'comment-url': '' });
    expect(sync.summary).toContain('### envsync sync');
    expect((await emulator.getStore()).orgs['acme']).toBeDefined();

    const again = await runAction(withApi(), pullRequest(12));
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.outputs).toMatchObject({ 'exit-code': '0', 'changes-pending': 'false' });
    expect(github.comments(12)).toHaveLength(1);
    expect(github.comments(12)[0]?.body).toContain('**0** to create');
    expect(github.comments(12)[0]?.id).toBe(comment?.id);

    for (const run of [plan, sync, again]) {
      expect(run.stdout + run.stderr + run.summary).not.toContain(ENVSYNC_TOKEN);
      expect(run.stdout + run.stderr + run.summary).not.toContain(GITHUB_TOKEN);
    }
    expect(JSON.stringify(github.bodies)).not.toContain(ENVSYNC_TOKEN);
  });

  it('a pull request from a fork is validated only: no plan, no request to the service or GitHub, and the log and summary say why', async () => {
    await tmp.write('work/manifests/acme.yaml', ACME);
    const run = await runAction(
      { 'api-url': emulator.url, token: '' },
      pullRequest(5, 'someone/infra'),
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const validateOnly = { 'exit-code': '0', mode: 'validate-only', 'changes-pending': 'false' };
    expect(run.outputs).toMatchObject(validateOnly);
    expect(run.stdout).toMatch(
      /^::notice title=envsync%3A no plan::No plan: this pull request comes from a fork/m,
    );
    expect(run.summary).toContain('### envsync: validated only, no plan');
    expect(run.summary).toContain(
      'GitHub gives the workflows of pull requests from forks no secrets',
    );
    expect(run.summary).toContain('### envsync validate');
    expect(await emulator.getRequests()).toEqual([]);
    expect(github.requests).toEqual([]);
  });

  it('a pull request with an empty token is validated only, and says how to give it one', async () => {
    await tmp.write('work/manifests/acme.yaml', BROKEN);
    const run = await runAction({ 'api-url': emulator.url }, pullRequest(6));
    expect(run.code).toBe(1);
    expect(run.outputs).toMatchObject({ 'exit-code': '1', mode: 'validate-only' });
    expect(run.stdout).toContain('No plan: no token for the service reached this job');
    expect(run.summary).toContain('secrets.ENVSYNC_TOKEN');
    // The manifest problem is still an annotation on the diff.
    expect(run.stdout).toContain('::error file=manifests/acme.yaml,line=4,col=11');
    expect(github.requests).toEqual([]);
  });

  it('invalid manifests on a pull request: the step fails, and the comment shows where', async () => {
    await tmp.write('work/manifests/acme.yaml', BROKEN);
    const run = await runAction(withApi(), pullRequest(8));
    expect(run.code).toBe(1);
    expect(run.outputs).toMatchObject({ 'exit-code': '1', mode: 'plan' });
    expect(run.stdout).toContain('::error file=manifests/acme.yaml,line=4,col=11');
    expect(github.comments(8)[0]?.body).toContain('manifests/acme.yaml:4:11');
  });

  it('a comment GitHub refuses fails the step with what to do, and the plan is still in the summary', async () => {
    await tmp.write('work/manifests/acme.yaml', ACME);
    github.failNext.push(403);
    const run = await runAction(withApi(), pullRequest(9));
    expect(run.code).toBe(1);
    expect(run.outputs).toMatchObject({ 'exit-code': '2', 'comment-url': '' });
    expect(run.stdout).toMatch(
      /^::error title=envsync%3A comment::the plan comment on pull request #9 was not written: .*HTTP 403.*pull-requests: write/m,
    );
    expect(run.summary).toContain('### envsync plan');
    expect(run.stdout + run.summary).not.toContain(GITHUB_TOKEN);
  });

  it('no comment when the comment input is false, or for validate', async () => {
    await tmp.write('work/manifests/acme.yaml', ACME);
    const plan = await runAction({ ...withApi(), comment: 'false' }, pullRequest(11));
    expect(plan.outputs['exit-code']).toBe('2');
    const validate = await runAction({ command: 'validate' }, pullRequest(11));
    expect(validate.code).toBe(0);
    expect(validate.outputs['mode']).toBe('validate');
    expect(github.requests).toEqual([]);
  });

  it('extra args reach envsync: --org limits the plan', async () => {
    await tmp.write('work/manifests/acme.yaml', ACME);
    await tmp.write(
      'work/manifests/beta.yaml',
      'org: beta\nenvironments: [{name: web, type: S3, description: W}]\n',
    );
    const run = await runAction({ ...withApi(), args: '--org beta' }, push);
    expect(run.outputs['exit-code']).toBe('2');
    expect(run.summary).toContain('| beta |');
    expect(run.summary).not.toContain('| acme |');
  });
});
