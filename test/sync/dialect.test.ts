/**
 * The production service's dialect: nine types, logical environments and their members,
 * require_provenance, and listings in production's shapes. Each against the emulator's
 * `kosli` profile (production as observed) and its `spec` profile (the contract), or against a
 * small fake that answers exactly as production's listing does.
 */
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { json, putsAndGets, syncWorld, TOKEN } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;
const emulator = (profile: 'spec' | 'kosli') => world.emulator({ profile });

const LOGICAL = `org: acme
environments:
  - name: api
    type: docker
    description: API containers
  - name: tasks
    type: ECS
    description: Batch tasks
    require_provenance: true
  - name: web_2
    type: cloud-run
    description: Web, second region
  - name: prod
    type: logical
    description: Everything in production
    included_environments: [web_2, api, tasks]
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
    await tmp().write(
      'manifests/beta.yaml',
      'org: beta\nenvironments:\n  - name: site\n    type: S3\n    description: Site\n',
    );
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
      'org: acme\nenvironments:\n  - name: all\n    type: logical\n    description: All\n    included_environments: [legacy]\n',
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
  - name: kept
    type: K8S
    description: K
  - name: set
    type: K8S
    description: S
    require_provenance: true
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

  it('export writes members and the nine types, and export -> plan has no changes', async () => {
    const api = await emulator('kosli');
    await tmp().write('manifests/acme.yaml', LOGICAL);
    expect((await run(api.url, ['sync'])).code).toBe(0);
    const exported = await envsyncInProcess(
      ['export', '--org', 'acme', '--out', 'exported', '--api-url', api.url],
      { cwd: tmp().dir, env: { ENVSYNC_TOKEN: TOKEN } },
    );
    expect(exported.code, exported.stderr).toBe(0);
    const text = await readFile(tmp().path('exported/acme.yaml'), 'utf8');
    expect(text).toContain('included_environments:');
    expect(text).toContain('type: cloud-run');
    const plan = await envsyncInProcess(
      [
        'plan',
        '--manifests',
        'exported',
        '--api-url',
        api.url,
        '--state',
        tmp().path('other-state.json'),
        '-o',
        'json',
        '--detailed-exitcode',
      ],
      { cwd: tmp().dir, env: { ENVSYNC_TOKEN: TOKEN } },
    );
    expect(plan.code, plan.stdout).toBe(0);
    expect(json(plan.stdout).summary).toMatchObject({ create: 0, update: 0, unverified: 0 });
  });
});

describe('against the spec profile (the contract)', () => {
  it('a docker environment gets the service 400 as its own error; the org goes on; exit 1', async () => {
    const api = await emulator('spec');
    await tmp().write(
      'manifests/acme.yaml',
      `org: acme
environments:
  - name: api
    type: docker
    description: API
  - name: web
    type: K8S
    description: Web
  - name: all
    type: logical
    description: All, no members declared, so the key is never sent
`,
    );
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code).toBe(1);
    const changes = json(sync.stdout).orgs[0]?.changes ?? [];
    expect(changes.find((c) => c.name === 'api')).toMatchObject({
      result: 'failed',
      error: expect.stringMatching(/400 .*type.*docker/),
    });
    expect(changes.find((c) => c.name === 'web')?.result).toBe('applied');
    expect(changes.find((c) => c.name === 'all')?.result).toBe('applied');
  });

  it('export -> plan --detailed-exitcode with no state file exits 0: the fields the listing lacks are left out, so left alone', async () => {
    const api = await emulator('spec');
    await api.putStore({
      orgs: {
        acme: [
          { name: 'web', type: 'K8S', description: 'Web' },
          { name: 'all', type: 'logical', description: 'All' },
        ],
      },
    });
    const out = await envsyncInProcess(
      ['export', '--org', 'acme', '--out', 'manifests', '--api-url', api.url],
      { cwd: tmp().dir, env: { ENVSYNC_TOKEN: TOKEN } },
    );
    expect(out.code, out.stderr).toBe(0);
    const text = await readFile(tmp().path('manifests/acme.yaml'), 'utf8');
    expect(text).not.toMatch(/^\s*(included_environments|include_scaling|policies):/m);
    expect(text).toContain(
      '# The listing does not show include_scaling, policies, require_provenance, included_environments',
    );
    const plan = await run(api.url, ['plan', '-o', 'json', '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(json(plan.stdout).summary).toMatchObject({
      create: 0,
      update: 0,
      unverified: 0,
      unchanged: 2,
    });
    const sync = await run(api.url, ['sync']);
    expect(sync.code).toBe(0);
    expect((await putsAndGets(api)).puts).toBe(0);
  });

  it('fields the contract does not know are never sent unless declared', async () => {
    const api = await emulator('spec');
    await tmp().write(
      'manifests/acme.yaml',
      'org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: Web\n',
    );
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code, sync.stdout).toBe(0);
    await tmp().write(
      'manifests/acme.yaml',
      'org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: Web\n    require_provenance: true\n',
    );
    const declared = await run(api.url, ['sync', '-o', 'json']);
    expect(declared.code).toBe(1);
    expect(json(declared.stdout).orgs[0]?.changes[0]).toMatchObject({
      result: 'failed',
      error: expect.stringContaining('require_provenance'),
    });
    // Members, which the contract's service does not know: a 400 of their own.
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
    included_environments: [web]
`,
    );
    const members = await run(api.url, ['sync', '-o', 'json']);
    expect(members.code).toBe(1);
    const changes = json(members.stdout).orgs[0]?.changes ?? [];
    expect(changes.find((c) => c.name === 'all')?.error).toContain('included_environments');
  });
});

describe('listings in production shapes', () => {
  /** The policy documents the fakes below hold: those their environments attach. */
  const POLICY_DOCUMENTS = JSON.stringify(
    ['pci', 'sox'].map((name) => ({
      name,
      description: '',
      created_at: 1,
      versions: [{ version: 1, policy_yaml: `# ${name}\n`, timestamp: 1, created_by: 'x' }],
    })),
  );
  /** Answers GET /api/v2/policies/{org}, else nothing (false). */
  const policyDocuments = (url: string | undefined, res: ServerResponse) => {
    if (url?.startsWith('/api/v2/policies/') !== true) return false;
    res.writeHead(200, { 'content-type': 'application/json' }).end(POLICY_DOCUMENTS);
    return true;
  };

  /**
   * A fake that stores PUTs, attaches and detaches policies, and lists them as production does:
   * policies as objects, nulls.
   */
  async function productionFake() {
    const store = new Map<string, Record<string, unknown>>();
    const fake = await startFakeApi((req, res) => {
      if (policyDocuments(req.url, res)) return;
      const attach = /^\/api\/v2\/environments\/acme\/([^/]+)\/policies$/.exec(req.url ?? '');
      if (attach !== null && (req.method === 'POST' || req.method === 'DELETE')) {
        const env = store.get(decodeURIComponent(attach[1] ?? '')) ?? {};
        const names = (JSON.parse(req.body) as { policy_names: string[] }).policy_names;
        const held = (env['policies'] as string[] | undefined) ?? [];
        env['policies'] =
          req.method === 'POST'
            ? [...held, ...names.filter((n) => !held.includes(n))]
            : held.filter((n) => !names.includes(n));
        res.writeHead(200, { 'content-type': 'application/json' }).end('"OK"');
        return;
      }
      if (req.method === 'PUT') {
        const body = JSON.parse(req.body) as Record<string, unknown>;
        store.set(String(body['name']), { ...store.get(String(body['name'])), ...body });
        res.writeHead(201, { 'content-type': 'application/json' }).end('"OK"');
        return;
      }
      const listing = [...store.values()]
        .sort((a, b) => String(a['name']).localeCompare(String(b['name'])))
        .map((env) => ({
          org: 'acme',
          name: env['name'],
          type: env['type'],
          description: env['description'],
          last_modified_at: 1_763_800_000.25,
          last_reported_at: null,
          state: null,
          include_scaling: env['include_scaling'] ?? null,
          tags: { owner: 'platform' },
          policies: Array.isArray(env['policies'])
            ? (env['policies'] as string[]).map((name) => ({ name, created: 1 }))
            : null,
          included_environments:
            env['type'] === 'logical' ? (env['included_environments'] ?? []) : null,
        }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(listing));
    });
    return { ...fake, store };
  }

  it('export writes require_provenance when the listing shows it, and round-trips', async () => {
    const fake = await startFakeApi((req, res) => {
      if (policyDocuments(req.url, res)) return;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify([
          {
            org: 'acme',
            name: 'strict',
            type: 'lambda',
            description: 'Functions',
            include_scaling: false,
            policies: [{ name: 'sox' }],
            require_provenance: true,
            included_environments: null,
            state: true,
          },
          {
            org: 'acme',
            name: 'loose',
            type: 'server',
            description: 'Box',
            include_scaling: null,
            policies: null,
            require_provenance: null,
            included_environments: null,
            state: null,
          },
        ]),
      );
    });
    try {
      const out = await envsyncInProcess(['export', '--org', 'acme', '--api-url', fake.url], {
        cwd: tmp().dir,
        env: { ENVSYNC_TOKEN: TOKEN },
      });
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain('require_provenance: true');
      expect(out.stdout).toContain('- sox');
      expect(out.stdout.match(/require_provenance:/g)).toHaveLength(1);
      // policies: null is "none", shown; include_scaling: null is "not shown", left out.
      expect(out.stdout.match(/policies: \[\]/g)).toHaveLength(1);
      expect(out.stdout.match(/include_scaling:/g)).toHaveLength(1);
      await tmp().write('manifests/acme.yaml', out.stdout);
      const plan = await run(fake.url, ['plan', '-o', 'json', '--detailed-exitcode']);
      expect(plan.code, plan.stdout).toBe(0);
      expect(json(plan.stdout).summary).toMatchObject({
        create: 0,
        update: 0,
        unverified: 0,
        unchanged: 2,
      });
    } finally {
      await fake.close();
    }
  });

  it('reads objects and nulls without a perpetual diff', async () => {
    const fake = await productionFake();
    try {
      await tmp().write(
        'manifests/acme.yaml',
        `org: acme
environments:
  - name: web
    type: K8S
    description: Web
    policies: [sox, pci]
  - name: all
    type: logical
    description: All
    included_environments: [web]
`,
      );
      const sync = await run(fake.url, ['sync', '-o', 'json']);
      expect(sync.code, sync.stdout + sync.stderr).toBe(0);
      const puts = () => fake.requests.filter((r) => r.method === 'PUT').length;
      expect(puts()).toBe(2);
      // The listing is production's shape: policies are attached through their endpoint.
      expect(fake.requests.filter((r) => r.method === 'POST').map((r) => r.url)).toEqual([
        '/api/v2/environments/acme/web/policies',
      ]);
      for (let i = 0; i < 2; i++) {
        const again = await run(fake.url, ['sync', '-o', 'json', '--detailed-exitcode']);
        expect(again.code, again.stdout).toBe(0);
        expect(json(again.stdout).summary).toMatchObject({ unchanged: 2, applied: 0 });
      }
      expect(puts()).toBe(2);
    } finally {
      await fake.close();
    }
  });
});
