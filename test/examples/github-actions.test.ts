import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const DIR = new URL('../../examples/github-actions/', import.meta.url);
const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

type Step = {
  name?: string;
  uses?: string;
  if?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
};
type Workflow = {
  on: Record<string, unknown>;
  env?: Record<string, string>;
  jobs: Record<string, { steps: Step[] }>;
};

/** Every `$ENVSYNC <command> <flags>` line of a workflow, split into words. */
function envsyncCalls(workflow: Workflow): string[][] {
  return Object.values(workflow.jobs)
    .flatMap((job) => job.steps)
    .flatMap((step) => (step.run ?? '').split('\n'))
    .map((line) => line.trim())
    .filter((line) => line.startsWith('$ENVSYNC '))
    .map((line) =>
      line
        .replace(/\s*>.*$/, '')
        .split(/\s+/)
        .slice(1),
    );
}

describe('examples/github-actions', async () => {
  const files = (await readdir(DIR)).filter((f) => f.endsWith('.yml'));

  it('holds a pull-request workflow and a sync-on-main workflow', () => {
    expect(files.sort()).toEqual(['pull-request.yml', 'sync-on-main.yml']);
  });

  it.each(files)(
    '%s: every envsync call uses only commands and flags envsync accepts',
    async (file) => {
      const workflow = parse(await readFile(new URL(file, DIR), 'utf8')) as Workflow;
      expect(workflow.env?.['ENVSYNC']).toBe('node envsync/src/cli.ts');
      const calls = envsyncCalls(workflow);
      expect(calls.length).toBeGreaterThan(0);
      for (const args of calls) {
        // --help after the flags: the strict parser still rejects anything unknown, then exits 0.
        const result = spawnSync(process.execPath, [CLI, ...args, '--help'], { encoding: 'utf8' });
        expect(result.status, `${args.join(' ')}\n${result.stderr}`).toBe(0);
      }
    },
  );

  it('the pull request plan is saved for the merge and applied with sync --plan', async () => {
    const pr = envsyncCalls(
      parse(await readFile(new URL('pull-request.yml', DIR), 'utf8')) as Workflow,
    );
    const main = envsyncCalls(
      parse(await readFile(new URL('sync-on-main.yml', DIR), 'utf8')) as Workflow,
    );
    expect(pr).toContainEqual([
      'plan',
      '--detailed-exitcode',
      '--out',
      'plan.json',
      '--output',
      'markdown',
    ]);
    expect(main).toContainEqual(['sync', '--plan', 'plan.json']);
  });

  it('sync-on-main keeps the state across failed runs: restored first, saved by every run (if: always()) under a key of its own', async () => {
    const workflow = parse(await readFile(new URL('sync-on-main.yml', DIR), 'utf8')) as Workflow;
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    // actions/cache itself saves only when the job succeeds.
    expect(steps.filter((step) => (step.uses ?? '').startsWith('actions/cache@'))).toEqual([]);
    const restore = steps.findIndex((step) => step.uses?.startsWith('actions/cache/restore@'));
    const save = steps.findIndex((step) => step.uses?.startsWith('actions/cache/save@'));
    const sync = steps.findIndex((step) => /\$ENVSYNC sync\b/.test(step.run ?? ''));
    expect(restore).toBeGreaterThanOrEqual(0);
    expect(restore).toBeLessThan(sync);
    expect(save).toBe(steps.length - 1);
    expect(steps[save]?.if).toBe('always()');
    expect(steps[save]?.with?.['path']).toBe('.envsync');
    expect(workflow.env?.['ENVSYNC_STATE']).toBe('.envsync/state.json');
    // Caches are immutable: a key per run (and attempt), the newest found by its prefix.
    expect(steps[save]?.with?.['key']).toContain('${{ github.run_id }}');
    expect(steps[save]?.with?.['key']).toContain('${{ github.run_attempt }}');
    expect(steps[restore]?.with?.['key']).toBe(steps[save]?.with?.['key']);
    expect(steps[restore]?.with?.['restore-keys']).toBe('envsync-state-');
    // Saved on main, so every later run (and every pull request's plan) can restore it: a cache
    // saved by a pull_request run would be visible to that pull request only.
    expect(Object.keys(workflow.on).sort()).toEqual(['push', 'workflow_dispatch']);
  });

  it('the pull request plan reads the state main kept, and never saves it', async () => {
    const workflow = parse(await readFile(new URL('pull-request.yml', DIR), 'utf8')) as Workflow;
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const restore = steps.findIndex((step) => step.uses?.startsWith('actions/cache/restore@'));
    const plan = steps.findIndex((step) => /\$ENVSYNC plan\b/.test(step.run ?? ''));
    expect(restore).toBeGreaterThanOrEqual(0);
    expect(restore).toBeLessThan(plan);
    expect(steps[restore]?.with?.['restore-keys']).toBe('envsync-state-');
    expect(steps.filter((step) => /^actions\/cache(\/save)?@/.test(step.uses ?? ''))).toEqual([]);
  });
});
