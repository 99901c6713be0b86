import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { startFakeApi } from '../helpers/fake-api.ts';
import { ACME } from '../helpers/fixtures.ts';
import { BETA, json, putsAndGets, syncWorld, TOKEN } from '../helpers/sync-world.ts';

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
    expect(
      store.orgs['acme']?.map((e) => [
        e.name,
        e.type,
        e.description,
        e.include_scaling,
        e.policies,
      ]),
    ).toEqual([
      ['production', 'K8S', 'Production cluster', false, ['baseline', 'pci']],
      ['staging', 'S3', 'Staging bucket', false, []],
    ]);

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

  it('shows field-level old and new values for an update, then applies it', async () => {
    const api = await emulator({ profile });
    await manifests();
    expect((await run(api.url, ['sync'])).code).toBe(0);
    await writeFile(tmp().path('manifests/beta.yaml'), BETA.replace('Web tier', 'Web tier (new)'));
    const plan = await run(api.url, ['plan']);
    expect(plan.stdout).toContain('~ update web');
    expect(plan.stdout).toContain('description : "Web tier" -> "Web tier (new)"');
    const sync = await run(api.url, ['sync'], ['-o', 'json']);
    expect(json(sync.stdout).orgs.find((o) => o.org === 'beta')?.changes).toEqual([
      {
        action: 'update',
        cause: 'change',
        name: 'web',
        fields: { description: { from: 'Web tier', to: 'Web tier (new)' } },
        result: 'applied',
      },
    ]);
  });
});

describe('sync behaviour', () => {
  it('reports unmanaged environments and never changes them', async () => {
    const api = await emulator({ profile: 'kosli' });
    await manifests({ 'beta.yaml': BETA });
    await run(api.url, ['sync']);
    const store = await api.getStore();
    const extra = { ...store.orgs['beta']![0]!, name: 'hand-made', description: 'made by hand' };
    await api.putStore({
      ...store,
      orgs: { ...store.orgs, beta: [...store.orgs['beta']!, extra] },
    });
    const sync = await run(api.url, ['sync'], ['-o', 'json']);
    expect(sync.code).toBe(0);
    expect(json(sync.stdout).orgs[0]?.unmanaged).toEqual(['hand-made']);
    expect(
      (await api.getStore()).orgs['beta']?.find((e) => e.name === 'hand-made')?.description,
    ).toBe('made by hand');
  });

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
    const state = JSON.parse(await readFile(tmp().path('state.json'), 'utf8')) as {
      version: number;
      orgs: Record<string, unknown>;
    };
    expect(state).toEqual({
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

  it('spec profile: fields a manifest leaves out are never unverified, so a fresh CI job is clean', async () => {
    const api = await emulator({ profile: 'spec' });
    await manifests({ 'beta.yaml': BETA });
    await run(api.url, ['sync']);
    await writeFile(tmp().path('state.json'), 'garbage{');
    const plan = await run(api.url, ['plan'], ['-o', 'json', '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(json(plan.stdout).summary).toMatchObject({ unverified: 0, unchanged: 1 });
  });

  it('spec profile: a policies change is found through the state file', async () => {
    const api = await emulator({ profile: 'spec' });
    await manifests({ 'acme.yaml': ACME });
    await run(api.url, ['sync']);
    await writeFile(tmp().path('manifests/acme.yaml'), ACME.replace('[pci, baseline]', '[pci]'));
    const plan = await run(api.url, ['plan'], ['-o', 'json']);
    expect(json(plan.stdout).orgs[0]?.changes[0]).toMatchObject({
      action: 'update',
      name: 'production',
      fields: { policies: { from: ['baseline', 'pci'], to: ['pci'] } },
    });
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
        line: 9,
        column: 11,
        path: 'environments[1].type',
        message:
          '"s3" is not one of K8S, ECS, S3, lambda, server, docker, azure-apps, cloud-run, logical (did you mean "S3"?)',
      },
    ]);
    expect(report.summary).toMatchObject({ invalidOrgs: 1, applied: 1 });
    const { paths } = await putsAndGets(api);
    expect(paths.some((p) => p.includes('/acme'))).toBe(false);
    expect((await api.getStore()).orgs['beta']).toHaveLength(1);
  });

  it('kosli profile: a value the service ignores is reported not-converged and not sent again', async () => {
    const api = await emulator({ profile: 'kosli' });
    await manifests({ 'beta.yaml': BETA });
    expect((await run(api.url, ['sync'])).code).toBe(0);
    await writeFile(
      tmp().path('manifests/beta.yaml'),
      BETA.replace('description: Web tier', 'description: ""\n    include_scaling: true'),
    );
    const first = await run(api.url, ['sync'], ['-o', 'json']);
    expect(first.code).toBe(1);
    const change = json(first.stdout).orgs[0]?.changes[0];
    expect(change).toMatchObject({ action: 'update', result: 'not-converged' });
    expect(change?.error).toContain('description (sent "", it keeps "Web tier")');
    expect(change?.error).toContain('include_scaling (sent true, it keeps false)');
    const puts = (await putsAndGets(api)).puts;
    const second = await run(api.url, ['sync'], ['-o', 'json']);
    expect(second.code).toBe(1);
    expect(json(second.stdout).orgs[0]?.changes[0]?.result).toBe('not-converged');
    expect((await putsAndGets(api)).puts).toBe(puts);
    // Fixing the manifest clears it.
    await writeFile(tmp().path('manifests/beta.yaml'), BETA);
    expect((await run(api.url, ['sync'])).code).toBe(0);
  });

  it('a refused token (401) fails each org once, with a clear message and no retry', async () => {
    const api = await emulator();
    await manifests();
    const sync = await run(api.url, ['sync'], ['-o', 'json'], {
      ENVSYNC_TOKEN: 'wrong-token-value',
    });
    expect(sync.code).toBe(1);
    const report = json(sync.stdout);
    expect(report.orgs.map((o) => o.status)).toEqual(['failed', 'failed']);
    expect(report.orgs[0]?.error).toMatch(/token was refused \(401\)/);
    expect((await putsAndGets(api)).gets).toBe(2);
  });

  it('a token limited to other orgs (403) fails only that org', async () => {
    const api = await emulator({ tokens: [{ token: TOKEN, orgs: ['beta'] }] });
    await manifests();
    const sync = await run(api.url, ['sync'], ['-o', 'json']);
    expect(sync.code).toBe(1);
    const report = json(sync.stdout);
    expect(report.orgs.map((o) => [o.org, o.status])).toEqual([
      ['acme', 'failed'],
      ['beta', 'ok'],
    ]);
    expect(report.orgs[0]?.error).toMatch(/token was refused \(403\)/);
  });

  it('retries 503s and resets until the service matches', async () => {
    const api = await emulator({
      profile: 'kosli',
      seed: 7,
      faults: { failRate: 0.3, resetRate: 0.1 },
    });
    await manifests();
    const sync = await run(api.url, ['sync'], ['--retries', '8', '-o', 'json']);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    await api.setFaults({ failRate: 0, resetRate: 0 });
    expect((await run(api.url, ['plan'], ['--detailed-exitcode'])).code).toBe(0);
    const stats = await api.getStats();
    expect(stats.byStatus['503'] ?? 0).toBeGreaterThan(0);
  });

  it('cuts requests that never answer with --timeout, and retries them', async () => {
    const api = await emulator({ seed: 3, faults: { hangRate: 0.3 } });
    await manifests();
    const sync = await run(api.url, ['sync'], ['--timeout', '300ms', '--retries', '8']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stderr).toContain('no answer within 300 ms');
  });

  it('a 429 storm pauses everyone (one shared gate) and still converges', async () => {
    const api = await emulator({ profile: 'kosli', faults: { rateLimit: 10 } });
    const many = `org: acme\nenvironments:\n${Array.from({ length: 30 }, (_, i) => `  - name: env-${i}\n    type: K8S\n    description: d${i}\n`).join('')}`;
    await manifests({ 'acme.yaml': many });
    const sync = await run(api.url, ['sync'], ['--concurrency', '8', '-o', 'json']);
    expect(sync.code, sync.stderr).toBe(0);
    expect(json(sync.stdout).summary.applied).toBe(30);
    const stats = await api.getStats();
    const throttled = stats.byStatus['429'] ?? 0;
    // 31 requests at 10 per second. Only the requests already in flight when the bucket first runs
    // dry meet a 429 (at most the concurrency); after that the gate paces to the admitted rate.
    // Eight independent retry loops would meet one 429 per success, or more.
    expect(throttled).toBeGreaterThan(0);
    expect(throttled).toBeLessThanOrEqual(16);
  });

  it('refuses a listing it cannot read, never PUTting on a guess', async () => {
    const bodies: Record<string, [number, string, string]> = {
      '/api/v2/environments/acme': [200, 'text/html', '<html><body>Bad gateway</body></html>'],
      '/api/v2/environments/beta': [
        200,
        'application/json',
        '[{"name": "web", "type": "logical", "descr',
      ],
    };
    const fake = await startFakeApi((req, res) => {
      const [status, type, body] = bodies[req.url ?? ''] ?? [
        404,
        'application/json',
        '{"message":"no"}',
      ];
      res.writeHead(status, { 'content-type': type }).end(body);
    });
    await manifests();
    const sync = await run(fake.url, ['sync'], ['-o', 'json']);
    await fake.close();
    expect(sync.code).toBe(1);
    const report = json(sync.stdout);
    expect(report.orgs[0]?.error).toContain(
      'not JSON (200, content-type text/html): <html><body>Bad gateway',
    );
    expect(report.orgs[1]?.error).toContain('not JSON');
    expect(fake.requests.filter((r) => r.method === 'PUT')).toEqual([]);
  });

  it('follows a paginated listing and does not follow redirects', async () => {
    const page = (n: number) => ({
      page: n,
      per_page: 1,
      total_pages: 2,
      total_count: 2,
      environments: [
        n === 1
          ? {
              name: 'web',
              type: 'logical',
              description: 'Web tier',
              include_scaling: false,
              policies: [],
            }
          : { name: 'old', type: 'ECS', description: 'x', include_scaling: false, policies: null },
      ],
      _links: { self: { href: '' } },
    });
    const fake = await startFakeApi((req, res) => {
      if (req.url?.startsWith('/api/v2/environments/beta')) {
        const n = req.url.includes('page=2') ? 2 : 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(page(n)));
      } else res.writeHead(302, { location: 'http://127.0.0.2/elsewhere' }).end();
    });
    await manifests();
    const plan = await run(fake.url, ['plan'], ['-o', 'json']);
    await fake.close();
    const report = json(plan.stdout);
    expect(report.orgs[1]).toMatchObject({
      org: 'beta',
      status: 'ok',
      unchanged: ['web'],
      unmanaged: ['old'],
    });
    expect(report.orgs[0]?.error).toContain('does not follow redirects');
    expect(fake.requests.map((r) => r.url)).toEqual(
      expect.arrayContaining([
        '/api/v2/environments/beta',
        '/api/v2/environments/beta?page=2&per_page=1',
      ]),
    );
    expect(fake.requests.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });
});
