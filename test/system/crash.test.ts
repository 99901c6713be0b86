import { readdir, readFile } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsync, startEnvsync } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';

const TOKEN = 'crash-token-0b7c1d';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;

beforeEach(async () => {
  tmp = await tempDir();
  api = await startTestEmulator({
    profile: 'spec',
    tokens: [{ token: TOKEN, orgs: null }],
    faults: { latencyMs: { min: 2, max: 25 } },
  });
});
afterEach(async () => {
  await api.close();
  await tmp.cleanup();
});

async function writeManifests(version: number) {
  for (const org of ['alpha', 'beta', 'gamma']) {
    const envs = Array.from({ length: 40 }, (_, i) => ({
      name: `env-${i}`,
      type: 'K8S',
      description: `v${version} ${org} ${i}`,
      include_scaling: (i + version) % 2 === 0,
      policies: (i + version) % 3 === 0 ? ['pci'] : [],
    }));
    await tmp.write(`manifests/${org}.yaml`, JSON.stringify({ org, environments: envs }));
  }
}

const args = (command: string, url = api.url, extra: string[] = []) => [
  ...`${command} --manifests manifests --api-url ${url} --state state/state.json`.split(' '),
  '--retry-delay',
  '10ms',
  ...extra,
];
const inFolder = () => ({ cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN } });

/** Runs sync and SIGKILLs it after `afterMs`; resolves when it is gone. */
async function killedSync(afterMs: number): Promise<void> {
  const live = startEnvsync(args('sync'), inFolder());
  const timer = setTimeout(() => live.child.kill('SIGKILL'), afterMs);
  await live.exited;
  clearTimeout(timer);
}

async function stateIsValid(): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(tmp.path('state/state.json'), 'utf8');
  } catch {
    return true; // not written yet: valid (empty)
  }
  type Group = { include_scaling?: unknown; policies?: unknown; environments: unknown[] };
  const state = JSON.parse(text) as {
    version: number;
    orgs: Record<string, (Group & { fingerprints?: unknown[] })[]>;
  };
  // Version 3: groups of environments sharing a record of the fields the manifests declare,
  // each with its fingerprint (a number, or null where unknown) when any is known.
  return (
    state.version === 3 &&
    Object.values(state.orgs).every((groups) =>
      groups.every(
        (g) =>
          (g.include_scaling === undefined || typeof g.include_scaling === 'boolean') &&
          (g.policies === undefined || Array.isArray(g.policies)) &&
          g.environments.every((name) => typeof name === 'string') &&
          (g.fingerprints === undefined ||
            (g.fingerprints.length === g.environments.length &&
              g.fingerprints.every((f) => f === null || typeof f === 'number'))),
      ),
    )
  );
}

describe('crash consistency', () => {
  it(
    'SIGKILL at random moments, many times: the state file is always valid and a rerun converges',
    { timeout: 180_000 },
    async () => {
      let seed = 42;
      const random = () => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed / 2147483648;
      };
      for (let round = 1; round <= 8; round++) {
        await writeManifests(round);
        await killedSync(250 + Math.floor(random() * 900));
        expect(await stateIsValid(), `round ${round}`).toBe(true);
      }
      const final = await envsync(args('sync'), inFolder());
      expect(final.code, final.stderr.slice(-1000)).toBe(0);
      const plan = await envsync(args('plan', api.url, ['--detailed-exitcode']), inFolder());
      expect(plan.code, plan.stdout.slice(-1000)).toBe(0);
      // A killed writer's temp files are cleaned up by the next run.
      const files = await readdir(tmp.path('state'));
      expect(files.filter((name) => name.endsWith('.tmp'))).toEqual([]);
      // The service holds exactly the last manifests, field for field (the spec profile's listing
      // hides include_scaling and policies: only a state file that never lies gets them right).
      const store = await api.getStore();
      const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);
      for (const org of ['alpha', 'beta', 'gamma']) {
        const manifest = await readFile(tmp.path(`manifests/${org}.yaml`), 'utf8');
        const declared = (JSON.parse(manifest) as { environments: { name: string }[] })
          .environments;
        const held = (store.orgs[org] ?? []).toSorted(byName);
        expect(held, org).toMatchObject(declared.toSorted(byName));
      }
    },
  );
});

describe('the state file never hides a difference', () => {
  it('a PUT that timed out but landed leaves no record of the old value, so reverting the manifest is still sent', async () => {
    // A service that applies each PUT at once but answers slowly when told to, listing as the
    // spec does (no include_scaling, no policies): only the state file knows the policies.
    type Env = { name: string; type: string; description: string; policies: string[] };
    const held = new Map<string, Env>();
    let answerAfterMs = 0;
    const fake = await startFakeApi((req, res) => {
      if (req.method === 'GET') {
        const env = [...held.values()].map(({ name, type, description }) => {
          return { org: 'alpha', name, type, description };
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ env }));
        return;
      }
      const body = JSON.parse(req.body) as Env;
      held.set(body.name, body);
      setTimeout(
        () => res.writeHead(201, { 'content-type': 'application/json' }).end('"OK"'),
        answerAfterMs,
      );
    });
    const run = (command: string, extra: string[] = []) =>
      envsync(args(command, fake.url, extra), inFolder());
    const manifestWith = (policies: string[]) =>
      tmp.write(
        'manifests/alpha.yaml',
        JSON.stringify({
          org: 'alpha',
          environments: [{ name: 'web', type: 'K8S', description: 'w', policies }],
        }),
      );
    try {
      await manifestWith(['a']);
      expect((await run('sync')).code).toBe(0);

      // The PUT of ["b"] lands, but its answer comes after envsync gave up waiting.
      await manifestWith(['b']);
      answerAfterMs = 800;
      expect((await run('sync', ['--timeout', '200ms', '--retries', '0'])).code).toBe(1);
      answerAfterMs = 0;
      expect(held.get('web')?.policies).toEqual(['b']);
      // The record stays (the inventory), cut down to what it still knows: no policies, no
      // fingerprint.
      const state = JSON.parse(await readFile(tmp.path('state/state.json'), 'utf8')) as {
        orgs: Record<string, unknown>;
      };
      expect(state.orgs['alpha']).toEqual([{ environments: ['web'] }]);

      // Back to ["a"]: a stale record of ["a"] would call this unchanged and leave ["b"] in place.
      await manifestWith(['a']);
      const plan = await run('plan', ['-o', 'json']);
      const { summary } = JSON.parse(plan.stdout) as { summary: Record<string, number> };
      expect(summary).toMatchObject({ unverified: 1, unchanged: 0 });
      expect((await run('sync')).code).toBe(0);
      expect(held.get('web')?.policies).toEqual(['a']);
    } finally {
      await fake.close();
    }
  });
});
