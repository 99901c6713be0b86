/** The production dialect (nine types, logical environments, require_provenance), both profiles. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { json, syncWorld } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;
const emulator = (profile: 'spec' | 'kosli') => world.emulator({ profile });

const BETA = 'org: beta\nenvironments:\n  - {name: site, type: S3, description: Site}\n';
const LOGICAL = `org: acme
environments:
  - {name: api, type: docker, description: API containers}
  - {name: tasks, type: ECS, description: Batch tasks, require_provenance: true}
  - {name: web_2, type: cloud-run, description: "Web, second region"}
  - {name: prod, type: logical, description: In production, included_environments: [web_2, api, tasks]}
`;

describe('against the kosli profile (production as observed)', () => {
  it('syncs all nine types, `_` names and a logical environment after its members; a second plan is empty', async () => {
    const api = await emulator('kosli');
    await tmp().write('manifests/acme.yaml', LOGICAL);
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    expect(json(sync.stdout).summary).toMatchObject({ create: 4, applied: 4, failed: 0 });
    const prod = (await api.getStore()).orgs['acme']?.find((env) => env.name === 'prod');
    expect(prod?.included_environments).toEqual(['api', 'tasks', 'web_2']);
    const plan = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(json(plan.stdout).summary).toMatchObject({ unchanged: 4, create: 0, update: 0 });
    // Exported, members and types included, the manifests plan clean with no state file.
    const out = await world.cli(`export --org acme --out exported --api-url ${api.url}`.split(' '));
    expect(out.code, out.stderr).toBe(0);
    const text = await readFile(tmp().path('exported/acme.yaml'), 'utf8');
    expect(text).toContain('included_environments:');
    expect(text).toContain('type: cloud-run');
    const fresh = await run(
      api.url,
      ['plan', '-o', 'json', '--detailed-exitcode'],
      ['--manifests', tmp().path('exported'), '--state', tmp().path('fresh.json')],
    );
    expect(fresh.code, fresh.stdout).toBe(0);
    expect(json(fresh.stdout).summary).toMatchObject({ create: 0, update: 0, unverified: 0 });
  });

  it('diffs members like policies, in every output format, and verifies them', async () => {
    const api = await emulator('kosli');
    await tmp().write('manifests/acme.yaml', LOGICAL);
    expect((await run(api.url, ['sync'])).code).toBe(0);
    await tmp().write(
      'manifests/acme.yaml',
      LOGICAL.replace('[web_2, api, tasks]', '[tasks, api]'),
    );
    const plan = await run(api.url, ['plan', '-o', 'json']);
    expect(json(plan.stdout).orgs[0]?.changes).toEqual([
      expect.objectContaining({
        action: 'update',
        name: 'prod',
        fields: {
          included_environments: { from: ['api', 'tasks', 'web_2'], to: ['api', 'tasks'] },
        },
      }),
    ]);
    const text = await run(api.url, ['plan']);
    expect(text.stdout).toContain(
      'included_environments : ["api","tasks","web_2"] -> ["api","tasks"]',
    );
    const markdown = await run(api.url, ['plan', '-o', 'markdown']);
    expect(markdown.stdout).toContain(
      'included_environments: <code>["api","tasks","web\\_2"]</code>',
    );
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(json(sync.stdout).summary).toMatchObject({ applied: 1, notConverged: 0 });
  });

  it('a member no environment has holds the org with a located error; other orgs go on', async () => {
    const api = await emulator('kosli');
    await tmp().write(
      'manifests/acme.yaml',
      `org: acme
environments:
  - name: web
    type: K8S
    description: Web
  - name: all
    type: logical
    description: All
    included_environments:
      - web
      - db
`,
    );
    await tmp().write('manifests/beta.yaml', BETA);
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code).toBe(1);
    const report = json(sync.stdout);
    expect(report.orgs.find((o) => o.org === 'acme')).toMatchObject({
      status: 'invalid',
      changes: [],
      errors: [
        {
          file: 'manifests/acme.yaml',
          line: 11,
          column: 9,
          path: 'environments[1].included_environments[1]',
          message: expect.stringContaining('"db" of "all" is not an environment of org "acme"'),
        },
      ],
    });
    expect(report.orgs.find((o) => o.org === 'beta')?.status).toBe('ok');
    const store = await api.getStore();
    expect(store.orgs['acme'] ?? []).toEqual([]);
    expect(store.orgs['beta']?.map((env) => env.name)).toEqual(['site']);
  });

  it('a member the listing shows, though no manifest declares it, is fine', async () => {
    const api = await emulator('kosli');
    await api.putStore({
      orgs: { acme: [{ name: 'legacy', type: 'server', description: 'Old box' }] },
    });
    await tmp().write(
      'manifests/acme.yaml',
      'org: acme\nenvironments:\n  - {name: all, type: logical, description: All, included_environments: [legacy]}\n',
    );
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code, sync.stdout).toBe(0);
    expect(json(sync.stdout).orgs[0]?.unmanaged).toEqual(['legacy']);
  });

  it('require_provenance: sent and kept when declared, never touched when not', async () => {
    const api = await emulator('kosli');
    await api.putStore({
      orgs: {
        acme: [
          { name: 'kept', type: 'K8S', description: 'K', require_provenance: true },
          { name: 'set', type: 'K8S', description: 'S', require_provenance: false },
        ],
      },
    });
    await tmp().write(
      'manifests/acme.yaml',
      `org: acme
environments:
  - {name: kept, type: K8S, description: K}
  - {name: set, type: K8S, description: S, require_provenance: true}
`,
    );
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code, sync.stdout).toBe(0);
    const store = (await api.getStore()).orgs['acme'] ?? [];
    expect(store.find((env) => env.name === 'kept')?.require_provenance).toBe(true);
    expect(store.find((env) => env.name === 'set')?.require_provenance).toBe(true);
    // The listing does not show it: what was sent is in the state file, so nothing is pending.
    const plan = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
    const state = await readFile(tmp().path('state.json'), 'utf8');
    expect(state).toContain('"require_provenance":true');
  });
});

describe('against the spec profile (the contract)', () => {
  it("a type, a field or a name the contract does not know is that environment's 400; the org goes on; exit 1", async () => {
    const api = await emulator('spec');
    await tmp().write(
      'manifests/acme.yaml',
      `org: acme
environments:
  - {name: api, type: docker, description: API}
  - {name: web, type: K8S, description: Web}
  - {name: strict, type: K8S, description: Strict, require_provenance: true}
  - {name: none, type: logical, description: "No members declared, so the key is never sent"}
  - {name: all, type: logical, description: All, included_environments: [web]}
`,
    );
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code).toBe(1);
    const changes = json(sync.stdout).orgs[0]?.changes ?? [];
    const outcome = (name: string) => changes.find((c) => c.name === name);
    expect(outcome('api')?.error).toMatch(/400 .*type.*docker/);
    expect(outcome('strict')?.error).toContain('require_provenance');
    expect(outcome('all')?.error).toContain('included_environments');
    expect([outcome('web')?.result, outcome('none')?.result]).toEqual(['applied', 'applied']);
  });
});
