import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { json } from '../helpers/sync-world.ts';
import { tempDir } from '../helpers/tmp.ts';

const TOKEN = 'faults-token-c4d2e9';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator | undefined;

beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await api?.close();
  api = undefined;
  await tmp.cleanup();
});

const orgName = (o: number) => `org-${String(o).padStart(2, '0')}`;

/** The policy documents of every policy the manifests name: kosli attaches only those. */
const documentsFor = (orgs: number) =>
  Object.fromEntries(
    Array.from({ length: orgs }, (_, o) => [
      orgName(o),
      ['baseline', 'p0', 'p1', 'p2', 'p3', 'p4'],
    ]),
  );

/** Writes `orgs` x `envs` manifests with varied fields; returns what they declare. */
async function writeManifests(orgs: number, envs: number) {
  const declared = new Map<string, { policies: string[] }[]>();
  for (let o = 0; o < orgs; o++) {
    const environments = Array.from({ length: envs }, (_, e) => ({
      name: `env-${String(e).padStart(3, '0')}`,
      type: ['K8S', 'S3', 'logical'][(o + e) % 3] ?? 'K8S',
      description: `Environment ${e} of ${orgName(o)}: "quoted", #hash, colon: yes`,
      // The kosli profile keeps include_scaling false (the service retired it).
      include_scaling: false,
      policies: e % 3 === 0 ? [] : ['baseline', `p${e % 5}`],
    }));
    declared.set(orgName(o), environments);
    await tmp.write(
      `manifests/${orgName(o)}.yaml`,
      JSON.stringify({ org: orgName(o), environments }),
    );
  }
  return declared;
}

/**
 * The CLI against `url`: its `main` in this process, or with `inChild` in a child process (the
 * large run, as production runs it).
 */
function run(url: string, command: string[], extra: string[] = [], { inChild = false } = {}) {
  const flags = `--manifests manifests --api-url ${url} --state state.json --retry-delay 20ms`;
  return (inChild ? envsync : envsyncInProcess)([...command, ...flags.split(' '), ...extra], {
    env: { ENVSYNC_TOKEN: TOKEN },
    cwd: tmp.dir,
    timeoutMs: 120_000,
  });
}

describe('faults converge, nothing lost', () => {
  it('20 orgs x 25 environments against 20% 503s, 5% resets and latency: one sync exits 0 and the store equals the manifests field for field', async () => {
    api = await startTestEmulator({
      profile: 'kosli',
      tokens: [{ token: TOKEN, orgs: null }],
      seed: 2026,
      faults: { failRate: 0.2, resetRate: 0.05, latencyMs: { min: 1, max: 15 } },
      policyDocuments: documentsFor(20),
    });
    const declared = await writeManifests(20, 25);
    const sync = await run(api.url, ['sync'], ['-o', 'json', '--concurrency', '16'], {
      inChild: true,
    });
    const report = json(sync.stdout);
    const problems = report.orgs
      .flatMap((o) => [
        o.error,
        ...o.changes.filter((c) => c.result !== 'applied').map((c) => c.error),
      ])
      .filter(Boolean);
    expect(problems).toEqual([]);
    expect(sync.code).toBe(0);
    expect(report.summary).toMatchObject({ applied: 500, failed: 0, notConverged: 0 });
    // A create is a PUT and then an attach: when the attach still fails after its retries, the
    // org's next round finds the environment there and attaches as an update.
    expect((report.summary['create'] ?? 0) + (report.summary['update'] ?? 0)).toBe(500);
    // Some 1,170 requests: about 235 of them answered 503 and 50 reset with this seed.
    const stats = await api.getStats();
    expect(stats.faults.fail).toBeGreaterThan(100);
    expect(stats.faults.reset).toBeGreaterThan(20);

    const store = await api.getStore();
    for (const [org, envs] of declared) {
      const held = (store.orgs[org] ?? []).map((e) => ({ ...e, policies: e.policies?.toSorted() }));
      expect(held, org).toMatchObject(envs.map((e) => ({ ...e, policies: e.policies.toSorted() })));
    }
    await api.setFaults({ failRate: 0, resetRate: 0 });
    const plan = await run(api.url, ['plan'], ['--detailed-exitcode']);
    expect(plan.code, plan.stdout.slice(-500)).toBe(0);
  });

  it('a 429 storm with Retry-After of seconds: throttled answers stay bounded and the run converges', async () => {
    api = await startTestEmulator({
      profile: 'kosli',
      tokens: [{ token: TOKEN, orgs: null }],
      faults: { rateLimit: 40 },
      policyDocuments: documentsFor(4),
    });
    await writeManifests(4, 25);
    const sync = await run(api.url, ['sync'], ['--concurrency', '16', '-o', 'json']);
    expect(sync.code, sync.stderr.slice(-2000)).toBe(0);
    expect(json(sync.stdout).summary['applied']).toBe(100);
    const throttled = (await api.getStats()).throttled;
    // 176 requests at 40 per second (4 listings, 4 reads of policy documents, 100 PUTs, 64
    // attaches of policies, 4 listings to verify). Independent retry loops would meet a 429 per
    // request or more; the shared gate meets one burst (the requests in flight, at most the
    // concurrency) and then paces to the admitted rate.
    expect(throttled).toBeGreaterThan(0);
    expect(throttled).toBeLessThanOrEqual(32);
  });

  it.each([
    ['truncated JSON', 'application/json', '[{"name": "web", "type": "K8S", "descr', /not JSON/],
    [
      'an HTML error page',
      'text/html',
      '<!doctype html><h1>502 Bad Gateway</h1>',
      /not JSON \(200, content-type text\/html\)/,
    ],
    [
      'the wrong shape',
      'application/json',
      '{"environment": []}',
      /unexpected shape \(object with keys environment\)/,
    ],
    [
      'a name listed twice, out of order',
      'application/json',
      '[{"name":"b","type":"K8S","description":""},{"name":"c","type":"K8S","description":""},{"name":"b","type":"S3","description":""}]',
      /shows environment "b" twice/,
    ],
  ])(
    'a listing that is %s fails that org clearly: no crash, no PUT, other orgs go on',
    async (_title, type, body, message) => {
      let good = '[]';
      const fake = await startFakeApi((req, res) => {
        if (req.url?.startsWith('/api/v2/environments/bad'))
          res.writeHead(200, { 'content-type': type }).end(body);
        else if (req.method === 'GET')
          res.writeHead(200, { 'content-type': 'application/json' }).end(`{"env": ${good}}`);
        else {
          good = '[{"org": "good", "name": "web", "type": "K8S", "description": "w"}]';
          res.writeHead(201, { 'content-type': 'application/json' }).end('"OK"');
        }
      });
      for (const org of ['bad', 'good'])
        await tmp.write(
          `manifests/${org}.yaml`,
          `org: ${org}\nenvironments: [{name: web, type: K8S, description: w}]\n`,
        );
      const sync = await run(fake.url, ['sync'], ['-o', 'json']);
      await fake.close();
      expect(sync.code).toBe(1);
      expect(sync.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(json(sync.stdout).orgs).toMatchObject([
        { org: 'bad', status: 'failed', error: expect.stringMatching(message) },
        { org: 'good', status: 'ok' },
      ]);
      expect(fake.requests.filter((r) => r.method === 'PUT').map((r) => r.url)).toEqual([
        '/api/v2/environments/good',
      ]);
    },
  );
});
