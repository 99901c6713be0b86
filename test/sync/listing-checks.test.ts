/** A listing is checked before it is believed, in each of its three shapes. */
import { describe, expect, it } from 'vitest';
import { startFakeApi } from '../helpers/fake-api.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { json, putsAndGets, syncWorld, TOKEN } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const ACME = `org: acme
environments:
  - {name: production, type: K8S, description: Production cluster}
  - {name: staging, type: S3, description: Staging bucket}
`;
const BETA = 'org: beta\nenvironments:\n  - {name: site, type: S3, description: Site}\n';

/**
 * A service whose listing can show what it should not: `inject` lists entries for an org besides
 * its own, `omitOrg` lists entries without `org`; `puts` and `names` say what it was sent.
 */
interface Service {
  readonly url: string;
  inject(org: string, entries: Record<string, unknown>[]): Promise<void>;
  omitOrg(): Promise<void>;
  puts(org: string): Promise<number>;
  names(org: string): Promise<string[]>;
}

function emulated(api: TestEmulator): Service {
  return {
    url: api.url,
    inject: async (org, entries) => {
      await api.setFaults({ listingExtra: { [org]: entries } });
    },
    omitOrg: async () => {
      await api.setFaults({ listingOmitOrg: true });
    },
    puts: async (org) =>
      (await putsAndGets(api)).paths.filter((p) => p === `PUT /api/v2/environments/${org}`).length,
    names: async (org) => ((await api.getStore()).orgs[org] ?? []).map((env) => env.name),
  };
}

/** Production's paginated envelope, one entry a page, for every listing. */
async function pagingFake(): Promise<Service & { close(): Promise<void> }> {
  const stored = new Map<string, Map<string, Record<string, unknown>>>();
  const extra = new Map<string, Record<string, unknown>[]>();
  let withOrg = true;
  const fake = await startFakeApi((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const org = decodeURIComponent(url.pathname.split('/').at(-1) ?? '');
    const envs = stored.get(org) ?? new Map<string, Record<string, unknown>>();
    stored.set(org, envs);
    if (req.method === 'PUT') {
      const body = JSON.parse(req.body) as Record<string, unknown>;
      envs.set(String(body['name']), body);
      res.writeHead(201, { 'content-type': 'application/json' }).end('"OK"');
      return;
    }
    const listed = [
      ...[...envs.values()].map((env) => ({
        ...(withOrg ? { org } : {}),
        name: env['name'],
        type: env['type'],
        description: env['description'],
        include_scaling: env['include_scaling'] ?? false,
        policies: env['policies'] ?? [],
      })),
      ...(extra.get(org) ?? []),
    ].sort((a, b) => (String(a.name) < String(b.name) ? -1 : 1));
    const page = Number(url.searchParams.get('page') ?? '1');
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        page,
        per_page: 1,
        total_pages: listed.length,
        total_count: listed.length,
        environments: listed.slice(page - 1, page),
        _links: { self: { href: '' } },
      }),
    );
  });
  return {
    url: fake.url,
    inject: async (org, entries) => {
      extra.set(org, entries);
    },
    omitOrg: async () => {
      withOrg = false;
    },
    puts: async (org) =>
      fake.requests.filter((r) => r.method === 'PUT' && r.url === `/api/v2/environments/${org}`)
        .length,
    names: async (org) => [...(stored.get(org)?.keys() ?? [])].sort(),
    close: fake.close,
  };
}

const SHAPES = [
  ['{"env": [...]} (emulator, spec profile)', 'spec'],
  ['a bare array (emulator, kosli profile)', 'kosli'],
  ['the paginated envelope, one entry a page (fake)', 'paged'],
] as const;

describe.each(SHAPES)('a listing in the shape %s', (_title, shape) => {
  async function withService(test: (service: Service) => Promise<void>): Promise<void> {
    await tmp().write('manifests/acme.yaml', ACME);
    await tmp().write('manifests/beta.yaml', BETA);
    if (shape !== 'paged') {
      await test(emulated(await world.emulator({ profile: shape })));
      return;
    }
    const fake = await pagingFake();
    try {
      await test(fake);
    } finally {
      await fake.close();
    }
  }

  it('an entry of another org fails that org, naming both orgs and the entry; nothing is sent to it; other orgs still sync', async () => {
    await withService(async (service) => {
      // Another org's environment under a name acme declares: believed, it would be compared.
      await service.inject('acme', [
        { org: 'beta', name: 'production', type: 'K8S', description: 'Beta\u001b[31m' },
      ]);
      const sync = await run(service.url, ['sync', '-o', 'json']);
      expect(sync.code, sync.stderr).toBe(1);
      const report = json(sync.stdout);
      const acme = report.orgs.find((o) => o.org === 'acme');
      expect(acme?.status).toBe('failed');
      expect(acme?.error).toContain(
        'the listing of org "acme" holds environment "production" of org "beta": an entry of another org',
      );
      expect(report.orgs.find((o) => o.org === 'beta')).toMatchObject({
        status: 'ok',
        changes: [{ action: 'create', name: 'site', result: 'applied' }],
      });
      expect(await service.puts('acme')).toBe(0);
      expect(await service.puts('beta')).toBe(1);
      expect(await service.names('acme')).toEqual([]);
      const text = await run(service.url, ['plan']);
      expect(text.stdout).toContain('holds environment "production" of org "beta"');
    });
  });

  it('an entry with an empty name is skipped with one warning per listing naming the org, and the org syncs', async () => {
    await withService(async (service) => {
      await service.inject('acme', [
        { org: 'acme', name: '', type: 'K8S', description: 'nameless' },
      ]);
      const plan = await run(service.url, ['plan', '-o', 'json']);
      expect(plan.code, plan.stderr).toBe(0);
      const warnings = plan.stderr.split('\n').filter((line) => line.includes('empty name'));
      expect(warnings).toHaveLength(1);
      const warning = JSON.parse(warnings[0] ?? '{}') as Record<string, unknown>;
      expect(warning).toMatchObject({ level: 40, org: 'acme', skipped: 1 });
      expect(warning['msg']).toContain(
        'org acme: the listing (GET /api/v2/environments/acme) holds an entry with an empty name; skipped',
      );
      expect(plan.stderr).not.toContain(TOKEN);
      const acme = json(plan.stdout).orgs.find((o) => o.org === 'acme');
      expect(acme?.unmanaged).toEqual([]);
      expect(acme?.changes.map((c) => c.name)).toEqual(['production', 'staging']);
      const sync = await run(service.url, ['sync', '-o', 'json']);
      expect(sync.code, sync.stderr).toBe(0);
      expect(json(sync.stdout).summary).toMatchObject({ create: 3, applied: 3, failed: 0 });
      expect(await service.names('acme')).toEqual(['production', 'staging']);
    });
  });

  it("entries without org are taken as the asked org's: the orgs sync, and a second plan has nothing to do", async () => {
    await withService(async (service) => {
      await service.omitOrg();
      const sync = await run(service.url, ['sync', '-o', 'json']);
      expect(sync.code, sync.stderr).toBe(0);
      expect(json(sync.stdout).summary).toMatchObject({ create: 3, applied: 3, failed: 0 });
      const plan = await run(service.url, ['plan', '-o', 'json', '--detailed-exitcode']);
      expect(plan.code, plan.stdout).toBe(0);
      expect(json(plan.stdout).summary).toMatchObject({ unchanged: 3, create: 0, update: 0 });
    });
  });
});
