/**
 * A field a manifest leaves out is never changed, and a plan shows every value a sync sets: in
 * both profiles, and against fakes that list in each shape and record the PUT bodies.
 */
import { readFile, rm } from 'node:fs/promises';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startFakeApi } from '../helpers/fake-api.ts';
import { json, putsAndGets, syncWorld, TOKEN } from '../helpers/sync-world.ts';

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
  it('a sync that empties the description leaves include_scaling and policies as they were; kosli sends one PATCH', async () => {
    const api = await world.emulator({ profile });
    await api.putStore({ orgs: { acme: [PRODUCTION] } });
    await tmp().write('manifests/acme.yaml', EDITED.replace('Production cluster, v2', '""'));
    const plan = await run(api.url, ['plan', '-o', 'json']);
    // The kosli PUT ignores an empty description: its PATCH clears it.
    const patch = profile === 'kosli' ? { patch: ['description'] } : {};
    expect(json(plan.stdout).orgs[0]?.changes).toEqual([
      {
        action: 'update',
        cause: 'change',
        name: 'production',
        fields: { description: { from: 'Production cluster', to: '' } },
        ...patch,
        result: 'planned',
      },
    ]);
    expect((await run(api.url, ['plan'])).stdout).toContain(
      `~ update production\n      description : "Production cluster" -> ""${profile === 'kosli' ? ' (PATCH)' : ''}\n`,
    );
    const before = (await api.getRequests(1000)).length;
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code, sync.stdout).toBe(0);
    expect(json(sync.stdout).orgs[0]?.changes[0]?.result).toBe('applied');
    const write = profile === 'kosli' ? 'PATCH /api/v2/environments/acme/production' : 'PUT';
    expect((await putsAndGets(api, before)).writes).toEqual([expect.stringContaining(write)]);
    const stored = (await api.getStore()).orgs['acme']?.[0];
    expect(stored).toMatchObject({
      description: '',
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
        acme: [
          PRODUCTION,
          { name: 'bare', type: 'S3', description: '', tags: { team: 'platform', 'a b': '1' } },
          { name: 'all', type: 'logical', description: 'All' },
        ],
      },
    });
    const out = await world.cli(
      `export --org acme --out manifests --api-url ${api.url}`.split(' '),
    );
    expect(out.code, out.stderr).toBe(0);
    const text = await readFile(tmp().path('manifests/acme.yaml'), 'utf8');
    // The spec listing shows none of the optional fields: all left out, and said once. Kosli
    // shows them, but include_scaling, which its service retired.
    const shown = profile === 'kosli';
    expect(/^\s*include_scaling:/m.test(text)).toBe(false);
    expect(/^\s*policies:/m.test(text)).toBe(shown);
    expect(/^\s*included_environments:/m.test(text)).toBe(shown);
    // Tags, which the contract never shows or takes: those the listing shows, none as {}.
    expect(text.includes('    tags:\n      a b: "1"\n      team: platform\n')).toBe(shown);
    expect(text.includes('    tags: {}\n')).toBe(shown);
    expect(text.includes('tags')).toBe(shown);
    expect(out.stderr.includes('the listing does not show include_scaling, policies')).toBe(!shown);
    expect(
      text.includes(
        '# The listing does not show include_scaling, policies, require_provenance, included_environments',
      ),
    ).toBe(!shown);
    const plan = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(json(plan.stdout).summary).toMatchObject({
      create: 0,
      update: 0,
      unverified: 0,
      unchanged: 3,
    });
    const before = (await putsAndGets(api)).puts;
    expect((await run(api.url, ['sync'])).code).toBe(0);
    expect((await putsAndGets(api)).puts).toBe(before);
  });

  it('a declared field the service does not show is planned with the value a sync sends; kosli warns of include_scaling, retired, and converges', async () => {
    const api = await world.emulator({ profile });
    await api.putStore({ orgs: { acme: [PRODUCTION] } });
    await tmp().write('manifests/acme.yaml', `${EDITED}    include_scaling: true\n`);
    const plan = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(plan.code).toBe(2);
    const org = json(plan.stdout).orgs[0];
    // The spec listing does not show it (no state file yet); kosli neither compares nor sends it.
    expect(org?.changes[0]?.fields['include_scaling']).toEqual(
      profile === 'spec' ? { from: null, to: true, notShown: true } : undefined,
    );
    const warning = `manifests/acme.yaml:6:5 environments[0].include_scaling: retired by the service on 2026-08-19; it always reports false; remove the key (envsync migrate does)`;
    const text = await run(api.url, ['plan']);
    expect(text.stdout.includes(`  warning: ${warning}\n`)).toBe(profile === 'kosli');
    expect(text.stderr.includes(warning)).toBe(profile === 'kosli');
    const strict = await run(api.url, ['plan', '-o', 'json', '--strict']);
    expect(json(strict.stdout).orgs[0]?.status).toBe(profile === 'kosli' ? 'invalid' : 'ok');
    expect((await run(api.url, ['sync'])).code).toBe(0);
    const again = await run(api.url, ['plan', '--detailed-exitcode']);
    expect(again.code, again.stdout).toBe(0);
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
    const unedited = EDITED.replace(', v2', '');
    await tmp().write('manifests/acme.yaml', `${unedited}    policies: []\n`);
    const clean = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(clean.code, clean.stdout).toBe(0);
    await tmp().write('manifests/acme.yaml', `${unedited}    policies: [pci]\n`);
    const plan = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(plan.code).toBe(2);
    expect(json(plan.stdout).orgs[0]?.changes[0]?.fields).toEqual({
      policies: { from: [], to: ['pci'] },
    });
  });
});

/**
 * A fake service listing what it holds in `shape`, as production does in its own shapes (policies
 * as objects, "none" as null, members and fields not set as null). PUT bodies are recorded and
 * merged into what it holds (an upsert that keeps what a body leaves out); policies are attached
 * and detached through their endpoint; it holds the documents of pci, sox and baseline.
 */
type Held = {
  name: string;
  type: string;
  description: string;
  include_scaling?: boolean;
  policies?: string[];
  require_provenance?: boolean;
  included_environments?: string[];
};

async function fakeService(shape: 'contract' | 'bare' | 'envelope', ...held: Held[]) {
  const bodies: Held[] = [];
  const store = new Map(held.map((env) => [env.name, { ...env }]));
  const entry = ({ name, type, description, policies = [], ...rest }: Held) => {
    const listed = { org: 'acme', name, type, description };
    if (shape === 'contract') return listed;
    return {
      ...listed,
      include_scaling: rest.include_scaling ?? null,
      policies:
        policies.length === 0 ? null : policies.map((policy) => ({ name: policy, created: 1 })),
      require_provenance: rest.require_provenance ?? null,
      included_environments: type === 'logical' ? (rest.included_environments ?? []) : null,
      tags: {},
      last_modified_at: 1_763_800_000.5,
    };
  };
  const listing = () => {
    const entries = [...store.values()].sort((a, b) => a.name.localeCompare(b.name)).map(entry);
    if (shape === 'contract') return { env: entries };
    if (shape === 'bare') return entries;
    const page = { page: 1, per_page: 20, total_pages: 1, total_count: entries.length };
    return { ...page, environments: entries, _links: { self: { href: '' } } };
  };
  const documents = ['pci', 'sox', 'baseline'].map((name) => ({
    name,
    description: '',
    created_at: 1,
    versions: [{ version: 1, policy_yaml: `# ${name}\n`, timestamp: 1, created_by: 'x' }],
  }));
  const fake = await startFakeApi((req, res) => {
    const reply = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const attach = /^\/api\/v2\/environments\/acme\/([^/]+)\/policies$/.exec(req.url ?? '');
    if (attach !== null) {
      const env = store.get(decodeURIComponent(attach[1] ?? ''));
      const names = (JSON.parse(req.body) as { policy_names: string[] }).policy_names;
      const kept = (env?.policies ?? []).filter((n) => !names.includes(n));
      if (env !== undefined) env.policies = req.method === 'POST' ? [...kept, ...names] : kept;
      reply(200, 'OK');
    } else if (req.method === 'PUT' || req.method === 'PATCH') {
      const body = JSON.parse(req.body) as Held;
      bodies.push(body);
      const name = body.name ?? decodeURIComponent(req.url?.split('/').pop() ?? '');
      store.set(name, { ...store.get(name), ...body });
      reply(201, 'OK');
    } else reply(200, req.url?.startsWith('/api/v2/policies/') === true ? documents : listing());
  });
  return { ...fake, bodies, held: () => store.get('production') };
}

describe.each(['contract', 'bare', 'envelope'] as const)('a service listing as %s', (shape) => {
  it('a write for the description, reviewed or not: the PUT carries what the listing shows of the rest, and leaves out what it does not; the PATCH only the description', async () => {
    // Production's shapes are the kosli dialect: it updates the description with a PATCH alone.
    const { include_scaling: _, policies: __, ...fields } = PRODUCTION;
    const kept = shape === 'contract' ? fields : {};
    await tmp().write('manifests/acme.yaml', EDITED);
    for (const reviewed of [false, true]) {
      const fake = await fakeService(shape, PRODUCTION);
      try {
        await rm(tmp().path('state.json'), { force: true });
        const planned = reviewed ? await run(fake.url, ['plan', '--out', 'plan.json']) : undefined;
        expect(planned?.code ?? 0).toBe(0);
        const sync = await run(fake.url, reviewed ? ['sync', '--plan', 'plan.json'] : ['sync']);
        expect(sync.code, sync.stdout + sync.stderr).toBe(0);
        expect(fake.bodies).toEqual([{ ...kept, description: 'Production cluster, v2' }]);
        expect(fake.held()).toMatchObject({ include_scaling: true, policies: ['baseline', 'pci'] });
      } finally {
        await fake.close();
      }
    }
  });

  it('attaches policies, reads the listing back without a perpetual diff, and export -> plan --detailed-exitcode with no state file exits 0', async () => {
    const fake = await fakeService(shape, {
      name: 'strict',
      type: 'lambda',
      description: 'Functions',
      require_provenance: true,
    });
    try {
      await tmp().write(
        'manifests/acme.yaml',
        `org: acme
environments:
  - {name: web, type: K8S, description: Web, policies: [sox, pci]}
  - {name: all, type: logical, description: All, included_environments: [web]}
`,
      );
      const sync = await run(fake.url, ['sync', '-o', 'json']);
      expect(sync.code, sync.stdout + sync.stderr).toBe(0);
      // Production's shapes are the kosli dialect: policies are attached through their endpoint.
      const attached = fake.requests.filter((r) => r.method === 'POST').map((r) => r.url);
      expect(attached).toEqual(
        shape === 'contract' ? [] : ['/api/v2/environments/acme/web/policies'],
      );
      for (let i = 0; i < 2; i++) {
        const again = await run(fake.url, ['sync', '-o', 'json', '--detailed-exitcode']);
        expect(again.code, again.stdout).toBe(0);
        expect(json(again.stdout).summary).toMatchObject({ unchanged: 2, applied: 0 });
      }
      expect(fake.bodies).toHaveLength(2);

      const out = await world.cli(['export', '--org', 'acme', '--api-url', fake.url]);
      expect(out.code, out.stderr).toBe(0);
      // What the listing shows is written (policies: null is "none"); what it does not show, or
      // shows as null (include_scaling here), is left out, so left alone.
      expect(out.stdout.includes('require_provenance: true')).toBe(shape !== 'contract');
      expect(out.stdout.includes('policies: []')).toBe(shape !== 'contract');
      expect(/^\s*include_scaling:/m.test(out.stdout)).toBe(false);
      await tmp().write('manifests/acme.yaml', out.stdout);
      const plan = await run(
        fake.url,
        ['plan', '-o', 'json', '--detailed-exitcode'],
        ['--state', tmp().path('fresh.json')],
      );
      expect(plan.code, plan.stdout).toBe(0);
      expect(json(plan.stdout).summary).toMatchObject({ create: 0, update: 0, unverified: 0 });
    } finally {
      await fake.close();
    }
  });
});
