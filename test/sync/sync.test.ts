import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ACME } from '../helpers/fixtures.ts';
import { BETA, json, putsAndGets, syncWorld } from '../helpers/sync-world.ts';

const { tmp, emulator, manifests, run, runProcess } = syncWorld();

describe.each(['spec', 'kosli'] as const)('sync against the %s profile', (profile) => {
  it('plans creates without writing, applies them, and a second run is a no-op', async () => {
    // One profile's runs are processes: the exit codes a CI step sees, through the real stdio.
    const cli = profile === 'spec' ? runProcess : run;
    const api = await emulator({ profile });
    await manifests();

    const plan = await cli(api.url, ['plan'], ['--output', 'json', '--detailed-exitcode']);
    expect(plan.code, plan.stderr).toBe(2);
    const planned = json(plan.stdout);
    expect(planned.dryRun).toBe(true);
    expect(planned.summary).toMatchObject({ create: 3, update: 0, applied: 0 });
    expect((await putsAndGets(api)).puts).toBe(0);

    const sync = await cli(api.url, ['sync'], ['--output', 'json']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(json(sync.stdout).summary).toMatchObject({
      create: 3,
      applied: 3,
      failed: 0,
      notConverged: 0,
    });

    const store = await api.getStore();
    expect(store.orgs['acme']?.map((e) => [e.name, e.type, e.description, e.policies])).toEqual([
      ['production', 'K8S', 'Production cluster', ['baseline', 'pci']],
      ['staging', 'S3', 'Staging bucket', []],
    ]);
    expect(store.orgs['acme']?.map((e) => e.include_scaling)).toEqual([false, false]);

    await api.reset().catch(() => undefined);
    await api.putStore(store);
    const before = await putsAndGets(api);
    // The second runs in this process for both profiles: exit codes 2 and 0 were the processes'.
    const again = await run(api.url, ['plan'], ['--detailed-exitcode']);
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toContain('Plan: 0 to create, 0 to update, 0 unverified, 3 unchanged');
    const second = await run(api.url, ['sync']);
    expect(second.code).toBe(0);
    const after = await putsAndGets(api);
    expect(after.puts - before.puts).toBe(0);
    // One GET per org per run, and in kosli's one of acme's policy documents (production
    // attaches two): no more.
    expect(after.gets - before.gets).toBe(profile === 'kosli' ? 6 : 4);
  });
});

describe('sync behaviour', () => {
  it('spec profile: declared fields the state file does not know are unverified, shown with the values sent once, then unchanged', async () => {
    const api = await emulator({ profile: 'spec' });
    const declared = `${BETA}    include_scaling: false\n    policies: [pci]\n`;
    await manifests({ 'beta.yaml': declared });
    await run(api.url, ['sync']);
    // Lose the state file: the listing cannot show include_scaling/policies.
    await writeFile(tmp().path('state.json'), 'garbage{');
    const plan = await run(api.url, ['plan'], ['-o', 'json', '--detailed-exitcode']);
    expect(plan.code).toBe(2);
    expect(plan.stderr).toContain('not valid JSON');
    expect(json(plan.stdout).orgs[0]?.changes).toEqual([
      {
        action: 'unverified',
        cause: 'change',
        name: 'web',
        fields: {
          include_scaling: { from: null, to: false, notShown: true },
          policies: { from: null, to: ['pci'], notShown: true },
        },
        unknown: ['include_scaling', 'policies'],
        result: 'planned',
      },
    ]);
    const text = await run(api.url, ['plan']);
    expect(text.stdout).toContain('include_scaling : (not shown by the service) -> false');
    expect(text.stdout).toContain('policies        : (not shown by the service) -> ["pci"]');
    const markdown = await run(api.url, ['plan', '-o', 'markdown']);
    expect(markdown.stdout).toContain(
      'include_scaling: _(not shown by the service)_ → <code>false</code>',
    );
    const sync = await run(api.url, ['sync'], ['-o', 'json']);
    expect(json(sync.stdout).summary).toMatchObject({ unverified: 1, applied: 1 });
    expect(JSON.parse(await readFile(tmp().path('state.json'), 'utf8'))).toEqual({
      version: 3,
      api: `${api.url}/`,
      orgs: {
        beta: [
          {
            include_scaling: false,
            policies: ['pci'],
            environments: ['web'],
            // What was applied, to tell drift from change later.
            fingerprints: [expect.any(Number)],
          },
        ],
      },
    });
    const again = await run(api.url, ['plan'], ['--detailed-exitcode']);
    expect(again.code).toBe(0);
  });

  it('leaves an org with invalid manifests alone, applies the others, and exits 1', async () => {
    const api = await emulator();
    await manifests({ 'acme.yaml': ACME.replace('type: S3', 'type: s3'), 'beta.yaml': BETA });
    const sync = await run(api.url, ['sync'], ['-o', 'json']);
    expect(sync.code).toBe(1);
    const report = json(sync.stdout);
    expect(report.orgs.map((o) => [o.org, o.status])).toEqual([
      ['acme', 'invalid'],
      ['beta', 'ok'],
    ]);
    expect(report.orgs[0]?.errors).toEqual([
      {
        file: 'manifests/acme.yaml',
        line: 8,
        column: 11,
        path: 'environments[1].type',
        message:
          '"s3" is not one of K8S, ECS, S3, lambda, server, docker, azure-apps, cloud-run, logical (did you mean "S3"?)',
      },
    ]);
    expect(report.summary).toMatchObject({ invalidOrgs: 1, applied: 1 });
    expect((await putsAndGets(api)).paths.some((p) => p.includes('/acme'))).toBe(false);
    expect((await api.getStore()).orgs['beta']).toHaveLength(1);
  });

  it('kosli profile, sent in the contract dialect: a value the service ignores is reported not-converged and not sent again', async () => {
    const api = await emulator({ profile: 'kosli' });
    await manifests({ 'beta.yaml': BETA });
    const contract = ['--api-dialect', 'contract'];
    expect((await run(api.url, ['sync'], contract)).code).toBe(0);
    await writeFile(
      tmp().path('manifests/beta.yaml'),
      BETA.replace('description: Web tier', 'description: ""\n    include_scaling: true'),
    );
    const first = await run(api.url, ['sync'], ['-o', 'json', ...contract]);
    expect(first.code).toBe(1);
    const change = json(first.stdout).orgs[0]?.changes[0];
    expect(change).toMatchObject({ action: 'update', result: 'not-converged' });
    expect(change?.error).toContain('description (sent "", it keeps "Web tier")');
    expect(change?.error).toContain('include_scaling (sent true, it keeps false)');
    const puts = (await putsAndGets(api)).puts;
    const second = await run(api.url, ['sync'], ['-o', 'json', ...contract]);
    expect(second.code).toBe(1);
    expect(json(second.stdout).orgs[0]?.changes[0]?.result).toBe('not-converged');
    expect((await putsAndGets(api)).puts).toBe(puts);
    // Fixing the manifest clears it.
    await writeFile(tmp().path('manifests/beta.yaml'), BETA);
    expect((await run(api.url, ['sync'], contract)).code).toBe(0);
  });

  it('cuts requests that never answer with --timeout, and retries them', async () => {
    const api = await emulator({ seed: 3, faults: { hangRate: 0.3 } });
    await manifests();
    const sync = await run(api.url, ['sync'], ['--timeout', '300ms', '--retries', '8']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stderr).toContain('no answer within 300 ms');
  });

  it('retries the 409s of a storm of creates to convergence and counts them; a 409 that persists fails that environment alone', async () => {
    const api = await emulator({ profile: 'kosli', seed: 5, faults: { conflictRate: 0.5 } });
    await manifests();
    const quick = ['--retry-delay', '1ms', '--retries'];
    const storm = await run(api.url, ['sync'], ['-o', 'json', ...quick, '20']);
    expect(storm.code, storm.stderr).toBe(0);
    const conflicts = json(storm.stdout).summary['conflicts'] ?? 0;
    expect(conflicts).toBe((await api.getStats()).faults.conflict);
    expect((await run(api.url, ['plan'], ['--detailed-exitcode'])).code).toBe(0);
    await api.setFaults({ conflictRate: 1 });
    await tmp().write('manifests/beta.yaml', `${BETA}  - {name: db, type: S3, description: d}\n`);
    const stuck = await run(api.url, ['sync'], [...quick, '2']);
    expect(stuck.code).toBe(1);
    // Each round of the run tries the create again: every 409 met is counted.
    const met = (await api.getStats()).faults.conflict - conflicts;
    expect(stuck.stdout).toContain(`, ${met} answered 409 (conflict) and retried`);
    expect(stuck.stdout).toMatch(
      /create db \[FAILED\][^]*: 409 Environment named 'db' is being created/,
    );
  });
});
