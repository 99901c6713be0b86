import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const DIR = new URL('../../examples/github-actions/', import.meta.url);
const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

type Workflow = {
  env?: Record<string, string>;
  jobs: Record<string, { steps: { run?: string; env?: Record<string, string> }[] }>;
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
});
