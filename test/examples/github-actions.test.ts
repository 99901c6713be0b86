import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { decide, readInputs } from '../../scripts/action/decide.ts';
import { envsyncInProcess } from '../helpers/cli.ts';

const DIR = new URL('../../examples/github-actions/', import.meta.url);
const ACTION_FILE = new URL('../../action.yml', import.meta.url);

type Step = {
  name?: string;
  id?: string;
  uses?: string;
  if?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
};
type Workflow = {
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  concurrency?: { group: string; 'cancel-in-progress': boolean };
  jobs: Record<string, { steps: Step[] }>;
};
type Action = {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
};

const workflow = async (file: string) =>
  parse(await readFile(new URL(file, DIR), 'utf8')) as Workflow;
const action = async () => parse(await readFile(ACTION_FILE, 'utf8')) as Action;
const steps = (w: Workflow) => Object.values(w.jobs).flatMap((job) => job.steps);
const ENVSYNC_ACTION = /^your-org\/envsync@(.+)$/;
/** The steps of a workflow that use the envsync action. */
const envsyncSteps = (w: Workflow) =>
  steps(w).filter((step) => ENVSYNC_ACTION.test(step.uses ?? ''));

describe('examples/github-actions', async () => {
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.yml'));

  it('holds a pull-request workflow and a sync-on-main workflow', () => {
    expect(files.sort()).toEqual(['pull-request.yml', 'sync-on-main.yml']);
  });

  it.each(files)(
    '%s runs envsync only through the action, at a ref that exists (main, or a pinned commit SHA), with inputs the action declares',
    async (file) => {
      const w = await workflow(file);
      const { inputs } = await action();
      const uses = envsyncSteps(w);
      expect(uses.length).toBeGreaterThan(0);
      for (const step of uses) {
        // The repository has no tags: a tag such as v0.1.0 would not resolve.
        expect(ENVSYNC_ACTION.exec(step.uses ?? '')?.[1]).toMatch(/^(main|[0-9a-f]{40})$/);
        for (const key of Object.keys(step.with ?? {})) expect(Object.keys(inputs)).toContain(key);
        expect(['validate', 'plan', 'sync']).toContain(step.with?.['command']);
        expect(step.with?.['token']).toBe('${{ secrets.ENVSYNC_TOKEN }}');
      }
      // No checkout of envsync by hand, no `node envsync/...` calls: the action does that.
      expect(JSON.stringify(w)).not.toMatch(/envsync\/src|ref: v\d/);
    },
  );

  it.each(files)(
    '%s: the envsync arguments each action step implies are accepted by the CLI',
    async (file) => {
      for (const step of envsyncSteps(await workflow(file))) {
        // The very arguments the action's script builds from these inputs.
        const variable = (input: string) => `INPUT_${input.toUpperCase().replaceAll('-', '_')}`;
        const env = Object.fromEntries(
          Object.entries(step.with ?? {}).map(([k, v]) => [variable(k), v]),
        );
        const { args } = decide(readInputs(env), undefined);
        // --help after the flags: the strict parser still rejects anything unknown, then exits 0
        // (before any file or network is touched, so the CLI's `main` runs in this process).
        const result = await envsyncInProcess([...args, '--summary-file', 'x.md', '--help']);
        expect(result.code, `${args.join(' ')}\n${result.stderr}`).toBe(0);
      }
    },
  );

  it('the pull request plan is saved for the merge and applied there with sync --plan', async () => {
    const pr = await workflow('pull-request.yml');
    const main = await workflow('sync-on-main.yml');
    const [plan] = envsyncSteps(pr);
    expect(plan?.with).toMatchObject({ command: 'plan', 'plan-file': 'plan.json' });
    const upload = steps(pr).find((s) => s.uses?.startsWith('actions/upload-artifact@'));
    expect(upload?.with?.['path']).toBe('plan.json');
    // Only a real plan is kept: a fork's validate-only run has none.
    expect(upload?.if).toBe(`steps.${plan?.id ?? ''}.outputs.mode == 'plan'`);
    const syncs = envsyncSteps(main);
    expect(syncs.map((s) => s.with?.['command'])).toEqual(['sync', 'sync']);
    expect(syncs[0]?.with?.['plan-file']).toBe('plan.json');
    expect(syncs[1]?.with?.['plan-file']).toBeUndefined();
    expect(syncs[0]?.if).toBe("steps.pr.outputs.number != ''");
    expect(syncs[1]?.if).toBe("steps.pr.outputs.number == ''");
  });

  it('the pull request workflow: pull_request (never pull_request_target), minimal permissions, one run per pull request', async () => {
    const pr = await workflow('pull-request.yml');
    expect(Object.keys(pr.on)).toEqual(['pull_request']);
    expect(pr.permissions).toEqual({ contents: 'read', 'pull-requests': 'write' });
    expect(pr.concurrency).toEqual({
      group: 'envsync-plan-${{ github.event.pull_request.number }}',
      'cancel-in-progress': true,
    });
    const main = await workflow('sync-on-main.yml');
    expect(main.permissions).toEqual({
      contents: 'read',
      actions: 'read',
      'pull-requests': 'read',
    });
    expect(main.concurrency).toEqual({ group: 'envsync-sync', 'cancel-in-progress': false });
  });

  it('the examples keep no cache of their own: the action carries the state', async () => {
    for (const file of files) {
      const uses = steps(await workflow(file)).map((s) => s.uses ?? '');
      expect(uses.filter((u) => u.startsWith('actions/cache'))).toEqual([]);
    }
    // Saved on main, so every later run (and every pull request's plan) can restore it: a cache
    // saved by a pull_request run would be visible to that pull request only.
    const main = await workflow('sync-on-main.yml');
    expect(Object.keys(main.on).sort()).toEqual(['push', 'workflow_dispatch']);
  });
});

describe('action.yml', async () => {
  const a = await action();
  const runSteps = a.runs.steps;
  const index = (predicate: (s: Step) => boolean) => runSteps.findIndex(predicate);
  const restore = index((s) => s.uses?.startsWith('actions/cache/restore@') === true);
  const save = index((s) => s.uses?.startsWith('actions/cache/save@') === true);
  const envsync = index((s) => s.id === 'envsync');

  it('is a composite action that sets up Node 24 and installs envsync from its own checkout, runtime dependencies only', () => {
    expect(a.runs.using).toBe('composite');
    expect(runSteps[0]?.uses).toMatch(/^actions\/setup-node@[0-9a-f]{40}$/);
    expect(runSteps[0]?.with?.['node-version']).toBe('${{ inputs.node-version }}');
    expect(a.inputs['node-version']?.default).toBe('24');
    const install = runSteps.find((s) => s.name === 'Install envsync');
    expect(install?.run).toBe(
      'cd "$GITHUB_ACTION_PATH" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund',
    );
    expect(runSteps[envsync]?.run).toBe('node "$GITHUB_ACTION_PATH/scripts/action/main.ts"');
  });

  it('passes inputs to shell steps only as variables, never spliced into the script', () => {
    for (const step of runSteps.filter((s) => s.run !== undefined)) {
      expect(step.run).not.toContain('${{');
      expect(step.shell).toBe('bash');
    }
    for (const name of Object.keys(a.inputs).filter(
      (n) => !['node-version', 'cache-state', 'cache-key-prefix', 'github-token'].includes(n),
    ))
      expect(runSteps[envsync]?.env?.[`INPUT_${name.toUpperCase().replaceAll('-', '_')}`]).toBe(
        `\${{ inputs.${name} }}`,
      );
    expect(runSteps[envsync]?.env?.['GITHUB_TOKEN']).toBe('${{ inputs.github-token }}');
    expect(a.inputs['github-token']?.default).toBe('${{ github.token }}');
  });

  it('keeps the state across failed runs: restored before envsync, saved after it by every sync (always()) under a key of its own', () => {
    expect(restore).toBeGreaterThanOrEqual(0);
    expect(restore).toBeLessThan(envsync);
    expect(save).toBe(runSteps.length - 1);
    expect(runSteps[save]?.if).toMatch(/^always\(\) && /);
    expect(runSteps[save]?.if).toContain("inputs.command == 'sync'");
    expect(runSteps[restore]?.if).toContain("inputs.command != 'validate'");
    for (const step of [runSteps[restore], runSteps[save]])
      expect(step?.with?.['path']).toBe('${{ inputs.state }}');
    expect(a.inputs['state']?.default).toBe('.envsync/state.json');
    // Caches are immutable: a key per run, attempt and job, the newest found by its prefix.
    const key = runSteps[save]?.with?.['key'] ?? '';
    expect(key).toContain('${{ github.run_id }}');
    expect(key).toContain('${{ github.run_attempt }}');
    expect(key.startsWith('${{ inputs.cache-key-prefix }}')).toBe(true);
    expect(runSteps[restore]?.with?.['key']).toBe(key);
    expect(runSteps[restore]?.with?.['restore-keys']).toBe('${{ inputs.cache-key-prefix }}');
    expect(a.inputs['cache-key-prefix']?.default).toBe('envsync-state-');
    // actions/cache itself saves only when the job succeeds.
    expect(runSteps.filter((s) => (s.uses ?? '').startsWith('actions/cache@'))).toEqual([]);
  });

  it('every output comes from the envsync step', () => {
    expect(Object.keys(a.outputs).sort()).toEqual(
      ['changes-pending', 'comment-url', 'exit-code', 'mode', 'plan-file', 'report'].sort(),
    );
    for (const [name, output] of Object.entries(a.outputs))
      expect(output.value).toBe(`\${{ steps.envsync.outputs.${name} }}`);
  });
});
