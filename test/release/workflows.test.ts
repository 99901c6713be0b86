/**
 * The repository's own workflows and the Action as a supply chain: actions pinned by commit, each
 * job with the permissions its steps need and no more, and nothing published before the tests
 * pass. test/examples/validators.test.ts checks the same files against GitHub's schema.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKFLOWS = '.github/workflows/';

type Permissions = Record<string, string>;
type Step = { uses?: string; run?: string; with?: Record<string, unknown> };
type Job = { needs?: string | string[]; permissions?: Permissions; uses?: string; steps?: Step[] };
type Workflow = {
  on: Record<string, unknown>;
  permissions?: Permissions;
  jobs: Record<string, Job>;
};

const text = (file: string) => readFileSync(`${ROOT}${file}`, 'utf8');
const workflowFiles = readdirSync(`${ROOT}${WORKFLOWS}`)
  .filter((f) => /\.ya?ml$/.test(f))
  .map((f) => `${WORKFLOWS}${f}`);
const workflow = (file: string) => parse(text(file)) as Workflow;
const ci = workflow(`${WORKFLOWS}ci.yml`);
const release = workflow(`${WORKFLOWS}release.yml`);
const runOf = (job: Job) => (job.steps ?? []).map((s) => s.run ?? '').join('\n');
const needs = (job: Job) => [job.needs ?? []].flat();

/** What a job does that needs a permission beyond reading the repository. */
const SIGNS = /npm publish --provenance|cosign sign/;
const PUSHES = /helm push/;
const WRITES_REPOSITORY = /gh release create|gh api --method (PATCH|POST) "repos\//;

describe('the workflows and the Action, as a supply chain', () => {
  it.each([...workflowFiles, 'action.yml'])(
    '%s pins every third-party action by a full commit, with its version beside it',
    (file) => {
      const uses = [...text(file).matchAll(/^\s*(?:-\s+)?uses:\s*(.+)$/gm)].map((m) => m[1] ?? '');
      expect(uses.length).toBeGreaterThan(0);
      for (const use of uses) {
        if (use.startsWith('./')) continue; // this repository's own workflow
        expect(use).toMatch(/^[\w.-]+\/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
      }
    },
  );

  it('an action is pinned to the same commit in every workflow', () => {
    const pins = new Map<string, Set<string>>();
    for (const file of workflowFiles)
      for (const [, action = '', sha = ''] of text(file).matchAll(
        /uses:\s*([^@\s]+)@([0-9a-f]{40})/g,
      ))
        pins.set(action, (pins.get(action) ?? new Set()).add(sha));
    for (const [action, shas] of pins) expect([...shas], action).toHaveLength(1);
  });

  it.each(workflowFiles)('%s grants nothing at the top beyond reading the repository', (file) => {
    const { permissions } = workflow(file);
    expect([{}, { contents: 'read' }]).toContainEqual(permissions);
  });

  it('each release job names its own permissions: a signature needs id-token, a push packages, a release contents', () => {
    for (const [name, job] of Object.entries(release.jobs)) {
      const run = runOf(job);
      const usesPush = (job.steps ?? []).some((s) => s.with?.['push'] === true);
      const expected: Record<string, string> = { contents: 'read' };
      if (SIGNS.test(run)) expected['id-token'] = 'write';
      if (PUSHES.test(run) || usesPush) expected['packages'] = 'write';
      if (WRITES_REPOSITORY.test(run)) expected['contents'] = 'write';
      expect(job.permissions, name).toEqual(expected);
    }
    // The check reads what it should: three jobs sign, two push, one writes the repository.
    const granted = (permission: string) =>
      Object.values(release.jobs).filter((job) => job.permissions?.[permission] === 'write');
    expect(granted('id-token')).toHaveLength(3);
    expect(granted('packages')).toHaveLength(2);
    expect(granted('contents')).toHaveLength(1);
  });

  it('ci.yml runs .ci/run on every pull request and push, and is what a release runs first', () => {
    expect(Object.keys(ci.on).sort()).toEqual(['pull_request', 'push', 'workflow_call']);
    expect(runOf(ci.jobs['ci'] ?? {})).toMatch(/\bbash \.ci\/run$/m);
    expect(release.jobs['ci']?.uses).toBe('./.github/workflows/ci.yml');
    // Nothing is published or signed before the tests have passed.
    const afterCi = (job: Job) =>
      needs(job).some((n) => n === 'ci' || needs(release.jobs[n] ?? {}).includes('ci'));
    const publishing = Object.entries(release.jobs).filter(
      ([, job]) => SIGNS.test(runOf(job)) || WRITES_REPOSITORY.test(runOf(job)),
    );
    expect(publishing.map(([name]) => name)).toEqual(['npm', 'image', 'chart', 'github-release']);
    expect(publishing.filter(([, job]) => !afterCi(job)).map(([name]) => name)).toEqual([]);
  });

  it('release.yml runs on version tags only, and its steps never keep git credentials', () => {
    expect(release.on).toEqual({ push: { tags: ['v[0-9]+.[0-9]+.[0-9]+'] } });
    const checkouts = workflowFiles.flatMap((file) =>
      Object.values(workflow(file).jobs).flatMap((job) =>
        (job.steps ?? []).filter((step) => step.uses?.startsWith('actions/checkout@') === true),
      ),
    );
    expect(checkouts.length).toBeGreaterThan(5);
    expect(checkouts.filter((step) => step.with?.['persist-credentials'] !== false)).toEqual([]);
  });
});
