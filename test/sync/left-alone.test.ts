/**
 * A field that a manifest leaves out is never changed, and a plan shows every value a sync will
 * set: against the emulator in both profiles (the contract's `spec`, production's `kosli`) and
 * against fakes that answer in each listing shape and record the PUT bodies they receive.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { json, syncWorld, TOKEN } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

/** Production as it stood before the first sync: both optional fields set by hand. */
const PRODUCTION = {
  name: 'production',
  type: 'K8S',
  description: 'Production cluster',
  include_scaling: true,
  policies: ['baseline', 'pci'],
};

/** The exported manifest, edited: a new description, nothing said of the optional fields. */
const EDITED = `org: acme
environments:
  - name: production
    type: K8S
    description: Production cluster, v2
`;

describe.each(['spec', 'kosli'] as const)('the %s profile', (profile) => {
  it('a sync that changes the description leaves include_scaling and policies as they were', async () => {
    const api = await world.emulator({ profile });
    await api.putStore({ orgs: { acme: [PRODUCTION] } });
    await tmp().write('manifests/acme.yaml', EDITED);
    const plan = await run(api.url, ['plan', '-o', 'json']);
    expect(json(plan.stdout).orgs[0]?.changes).toEqual([
      {
        action: 'update',
        cause: 'change',
        name: 'production',
        fields: { description: { from: 'Production cluster', to: 'Production cluster, v2' } },
        result: 'planned',
      },
    ]);
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code, sync.stdout).toBe(0);
    const stored = (await api.getStore()).orgs['acme']?.[0];
    expect(stored).toMatchObject({
      description: 'Production cluster, v2',
      include_scaling: true,
      policies: ['baseline', 'pci'],
    });
    const again = await run(api.url, ['plan', '--detailed-exitcode']);
    expect(again.code, again.stdout).toBe(0);
  });

  it('export -> plan --detailed-exitcode with no state file exits 0, and a sync sends nothing', async () => {
    const api = await world.emulator({ profile });
    await api.putStore({
      orgs: {
        acme: [PRODUCTION, { name: 'bare', type: 'S3', description: '' }],
      },
    });
    const out = await envsyncInProcess(
      ['export', '--org', 'acme', '--out', 'manifests', '--api-url', api.url],
      { cwd: tmp().dir, env: { ENVSYNC_TOKEN: TOKEN } },
    );
    expect(out.code, out.stderr).toBe(0);
    const text = await readFile(tmp().path('manifests/acme.yaml'), 'utf8');
    // The spec listing shows neither field: both left out, and said once. Kosli shows both
    // (include_scaling always false: the service retired it).
    const shown = profile === 'kosli';
    expect(/^\s*include_scaling: false$/m.test(text)).toBe(shown);
    expect(/^\s*policies:/m.test(text)).toBe(shown);
    expect(out.stderr.includes('the listing does not show include_scaling, policies')).toBe(!shown);
    const plan = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(json(plan.stdout).summary).toMatchObject({
      create: 0,
      update: 0,
      unverified: 0,
      unchanged: 2,
    });
    const before = (await api.getRequests(1000)).filter((r) => r.method === 'PUT').length;
    expect((await run(api.url, ['sync'])).code).toBe(0);
    expect((await api.getRequests(1000)).filter((r) => r.method === 'PUT').length).toBe(before);
  });

  it('a declared field the service does not show is planned with the value a sync sends', async () => {
    const api = await world.emulator({ profile });
    await api.putStore({ orgs: { acme: [PRODUCTION] } });
    await tmp().write('manifests/acme.yaml', `${EDITED}    include_scaling: true\n`);
    const plan = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(plan.code).toBe(2);
    const field = json(plan.stdout).orgs[0]?.changes[0]?.fields['include_scaling'];
    // The spec listing does not show it (no state file yet); the kosli listing shows `false`
    // (the service retired the setting).
    expect(field).toEqual(
      profile === 'spec' ? { from: null, to: true, notShown: true } : { from: false, to: true },
    );
  });
});

describe('the kosli profile, policies: null', () => {
  it('reads as none: `policies: []` is unchanged with no state file, and a policy to attach is an update', async () => {
    const api = await world.emulator({ profile: 'kosli' });
    await api.putStore({ orgs: { acme: [{ ...PRODUCTION, policies: null }] } });
    const listed = await request(`${api.url}/api/v2/environments/acme`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(((await listed.body.json()) as { policies: unknown }[])[0]?.policies).toBeNull();
    await tmp().write(
      'manifests/acme.yaml',
      `${EDITED.replace('Production cluster, v2', 'Production cluster')}    policies: []\n`,
    );
    const clean = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(clean.code, clean.stdout).toBe(0);
    await tmp().write(
      'manifests/acme.yaml',
      `${EDITED.replace('Production cluster, v2', 'Production cluster')}    policies: [pci]\n`,
    );
    const plan = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(plan.code).toBe(2);
    expect(json(plan.stdout).orgs[0]?.changes[0]?.fields).toEqual({
      policies: { from: [], to: ['pci'] },
    });
  });
});

/** What a fake service received in its PUT bodies, in order. */
type Bodies = Record<string, unknown>[];

/**
 * A fake service holding one environment, listing it in `shape`; PUT bodies are recorded and
 * merged into what it holds (as an upsert that keeps what a body leaves out).
 */
async function fakeService(shape: 'contract' | 'bare' | 'envelope', held: Record<string, unknown>) {
  const bodies: Bodies = [];
  let env = { ...held };
  const listed = () => {
    const entry: Record<string, unknown> = {
      org: 'acme',
      name: env['name'],
      type: env['type'],
      description: env['description'],
    };
    if (shape === 'contract') return { env: [entry] };
    const full = {
      ...entry,
      include_scaling: env['include_scaling'] ?? false,
      // Production lists "no policy" as null.
      policies:
        Array.isArray(env['policies']) && (env['policies'] as unknown[]).length > 0
          ? env['policies']
          : null,
      included_environments: null,
      tags: {},
      last_modified_at: 1_763_800_000.5,
    };
    if (shape === 'bare') return [full];
    return {
      page: 1,
      per_page: 20,
      total_pages: 1,
      total_count: 1,
      environments: [full],
      _links: { self: { href: '/api/v2/environments/acme?page=1' } },
    };
  };
  const fake = await startFakeApi(
    (req: IncomingMessage & { body: string }, res: ServerResponse) => {
      if (req.method === 'PUT') {
        const body = JSON.parse(req.body) as Record<string, unknown>;
        bodies.push(body);
        env = { ...env, ...body };
        res.writeHead(201, { 'content-type': 'application/json' }).end('"OK"');
        return;
      }
      // Production's policy documents: none.
      const body = req.url?.startsWith('/api/v2/policies/') === true ? [] : listed();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    },
  );
  return { ...fake, bodies, held: () => env };
}

describe.each(['contract', 'bare', 'envelope'] as const)('a service listing as %s', (shape) => {
  it('a PUT for the description carries what the listing shows of the rest, and leaves out what it does not', async () => {
    const fake = await fakeService(shape, PRODUCTION);
    try {
      await tmp().write('manifests/acme.yaml', EDITED);
      const sync = await run(fake.url, ['sync', '-o', 'json']);
      expect(sync.code, sync.stdout).toBe(0);
      // Production's shapes are the kosli dialect: its PUT never carries policies, kept or not.
      expect(fake.bodies).toEqual([
        shape === 'contract'
          ? { name: 'production', type: 'K8S', description: 'Production cluster, v2' }
          : {
              name: 'production',
              type: 'K8S',
              description: 'Production cluster, v2',
              include_scaling: true,
            },
      ]);
      expect(fake.held()).toMatchObject({ include_scaling: true, policies: ['baseline', 'pci'] });
    } finally {
      await fake.close();
    }
  });

  it('a reviewed plan applied with sync --plan carries the same values', async () => {
    const fake = await fakeService(shape, PRODUCTION);
    try {
      await tmp().write('manifests/acme.yaml', EDITED);
      const saved = await run(fake.url, ['plan', '--out', 'plan.json']);
      expect(saved.code, saved.stderr).toBe(0);
      const sync = await run(fake.url, ['sync', '--plan', 'plan.json']);
      expect(sync.code, sync.stdout + sync.stderr).toBe(0);
      expect(fake.bodies).toHaveLength(1);
      expect(Object.keys(fake.bodies[0] ?? {}).sort()).toEqual(
        shape === 'contract'
          ? ['description', 'name', 'type']
          : ['description', 'include_scaling', 'name', 'type'],
      );
      expect(fake.held()).toMatchObject({ include_scaling: true, policies: ['baseline', 'pci'] });
    } finally {
      await fake.close();
    }
  });

  it('export -> plan --detailed-exitcode with no state file exits 0; policies: null reads as none', async () => {
    const fake = await fakeService(shape, { ...PRODUCTION, policies: [] });
    try {
      const out = await envsyncInProcess(['export', '--org', 'acme', '--api-url', fake.url], {
        cwd: tmp().dir,
        env: { ENVSYNC_TOKEN: TOKEN },
      });
      expect(out.code, out.stderr).toBe(0);
      // The contract's listing does not show policies; production's shows null, read as none.
      expect(out.stdout.includes('policies: []')).toBe(shape !== 'contract');
      await tmp().write('manifests/acme.yaml', out.stdout);
      const plan = await run(fake.url, ['plan', '-o', 'json', '--detailed-exitcode']);
      expect(plan.code, plan.stdout).toBe(0);
      expect(json(plan.stdout).summary).toMatchObject({ create: 0, update: 0, unverified: 0 });
      expect(fake.bodies).toEqual([]);
    } finally {
      await fake.close();
    }
  });
});
