/**
 * Policies and tags through their own operations in the kosli dialect, in the PUT body in the
 * contract's; through a proxy that records the bodies envsync sends.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { TestEmulator } from '../helpers/emulator.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { json, putsAndGets, reseal, syncWorld } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const MANIFEST = `org: acme
environments:
  - name: prod
    type: K8S
    description: Production
    policies: [pci, baseline]
    tags:
      team: platform
      env: production
  - name: plain
    type: S3
    description: Plain
`;

/** What the store holds of an environment: its policies and tags. */
async function held(api: TestEmulator, name: string) {
  const env = (await api.getStore()).orgs['acme']?.find((e) => e.name === name);
  return { policies: env?.policies ?? null, tags: env?.tags };
}

/**
 * A proxy in front of the emulator that records each request's method, path and body: what
 * envsync sent, byte for byte, not what the emulator kept of it.
 */
async function recordingProxy(target: string) {
  const sent: { method: string; path: string; body: unknown }[] = [];
  const proxy = await startFakeApi((req, res) => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    sent.push({ method, path, body: req.body === '' ? undefined : JSON.parse(req.body) });
    void request(`${target}${path}`, {
      method: method as 'GET',
      headers: {
        authorization: req.headers.authorization ?? '',
        ...(req.body === '' ? {} : { 'content-type': 'application/json' }),
      },
      ...(req.body === '' ? {} : { body: req.body }),
    }).then(async (answer) => {
      const text = await answer.body.text();
      res.writeHead(answer.statusCode, { 'content-type': 'application/json' }).end(text);
    });
  });
  return { ...proxy, sent };
}

describe('the kosli dialect', () => {
  it('creates with a PUT without policies or tags, then one attach and one PATCH; plans them a line each; the next plan is empty', async () => {
    const api = await world.emulator({ profile: 'kosli' });
    const proxy = await recordingProxy(api.url);
    try {
      await tmp().write('manifests/acme.yaml', MANIFEST);
      const plan = await run(proxy.url, ['plan', '--detailed-exitcode']);
      expect(plan.code, plan.stdout + plan.stderr).toBe(2);
      expect(plan.stdout).toContain(
        [
          '  + create prod',
          '      type        = "K8S"',
          '      description = "Production"',
          '      + policy baseline',
          '      + policy pci',
          '      + tag env=production',
          '      + tag team=platform',
        ].join('\n'),
      );
      const planJson = json((await run(proxy.url, ['plan', '-o', 'json'])).stdout);
      expect(planJson.orgs[0]?.changes.find((c) => c.name === 'prod')).toMatchObject({
        fields: {
          policies: { from: null, to: ['baseline', 'pci'] },
          tags: { from: null, to: { env: 'production', team: 'platform' } },
        },
        policies: { attach: ['baseline', 'pci'], detach: [] },
        tags: { set: { env: 'production', team: 'platform' }, remove: [] },
      });

      proxy.sent.length = 0;
      const sync = await run(proxy.url, ['sync', '-o', 'json']);
      expect(sync.code, sync.stdout + sync.stderr).toBe(0);
      expect(json(sync.stdout).summary).toMatchObject({ create: 2, applied: 2, notConverged: 0 });
      const writes = proxy.sent.filter((r) => r.method !== 'GET');
      expect(writes.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
        'PATCH /api/v2/tags/acme/environment/prod',
        'POST /api/v2/environments/acme/prod/policies',
        'PUT /api/v2/environments/acme',
        'PUT /api/v2/environments/acme',
      ]);
      // prod: its PUT (without policies or tags), then its policies, then its tags.
      const prodPut = writes.findIndex(
        (r) => r.method === 'PUT' && (r.body as { name: string }).name === 'prod',
      );
      expect(writes[prodPut]?.body).toEqual({
        name: 'prod',
        type: 'K8S',
        description: 'Production',
      });
      const attach = writes.findIndex((r) => r.method === 'POST');
      const patch = writes.findIndex((r) => r.method === 'PATCH');
      expect(prodPut).toBeLessThan(attach);
      expect(attach).toBeLessThan(patch);
      expect(writes.find((r) => r.method === 'POST')?.body).toEqual({
        policy_names: ['baseline', 'pci'],
      });
      expect(writes.find((r) => r.method === 'PATCH')?.body).toEqual({
        set_tags: { env: 'production', team: 'platform' },
      });
      expect(await held(api, 'prod')).toEqual({
        policies: ['baseline', 'pci'],
        tags: { env: 'production', team: 'platform' },
      });
      // No PUT body carried policies or tags.
      expect(JSON.stringify(writes.filter((r) => r.method === 'PUT'))).not.toMatch(/policies|tags/);

      const again = await run(proxy.url, ['plan', '--detailed-exitcode']);
      expect(again.code, again.stdout).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('changes tags and detaches a policy without a PUT, in one PATCH and one DELETE', async () => {
    const api = await world.emulator({ profile: 'kosli' });
    await tmp().write('manifests/acme.yaml', MANIFEST);
    expect((await run(api.url, ['sync'])).code).toBe(0);
    await tmp().write(
      'manifests/acme.yaml',
      MANIFEST.replace('[pci, baseline]', '[pci, sox]').replace(
        '      team: platform\n      env: production\n',
        '      env: staging\n      owner: "web team"\n',
      ),
    );
    const plan = await run(api.url, ['plan']);
    expect(plan.stdout).toContain(
      [
        '  ~ update prod',
        '      + policy sox',
        '      - policy baseline',
        '      ~ tag env: production -> staging',
        '      + tag owner="web team"',
        '      - tag team',
      ].join('\n'),
    );
    const markdown = await run(api.url, ['plan', '-o', 'markdown']);
    expect(markdown.stdout).toContain(
      '| ✏️ update | prod | + policy <code>sox</code><br>- policy <code>baseline</code><br>' +
        '~ tag <code>env</code>: <code>production</code> → <code>staging</code><br>' +
        '+ tag <code>owner="web team"</code><br>- tag <code>team</code> |',
    );
    const before = (await putsAndGets(api)).paths.length;
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code, sync.stdout).toBe(0);
    expect(json(sync.stdout).summary).toMatchObject({ update: 1, applied: 1, notConverged: 0 });
    expect((await putsAndGets(api, before)).paths).toEqual([
      'GET /api/v2/environments/acme',
      // The policy documents, to check what the environment attaches.
      'GET /api/v2/policies/acme',
      'POST /api/v2/environments/acme/prod/policies',
      'DELETE /api/v2/environments/acme/prod/policies',
      'PATCH /api/v2/tags/acme/environment/prod',
      'GET /api/v2/environments/acme',
    ]);
    expect(await held(api, 'prod')).toEqual({
      policies: ['pci', 'sox'],
      tags: { env: 'staging', owner: 'web team' },
    });
    // `tags: {}` removes them all; `policies: []` detaches every one.
    await tmp().write(
      'manifests/acme.yaml',
      MANIFEST.replace('[pci, baseline]', '[]').replace(
        '    tags:\n      team: platform\n      env: production\n',
        '    tags: {}\n',
      ),
    );
    expect((await run(api.url, ['sync'])).code).toBe(0);
    expect(await held(api, 'prod')).toEqual({ policies: [], tags: {} });
    const clean = await run(api.url, ['plan', '--detailed-exitcode']);
    expect(clean.code, clean.stdout).toBe(0);
  });

  it('leaves tags and policies a manifest does not declare as they are, and its PATCH carries neither, nor include_scaling, retired', async () => {
    const api = await world.emulator({ profile: 'kosli' });
    const prod = { name: 'prod', type: 'K8S', description: 'Old' };
    await api.putStore({
      orgs: { acme: [{ ...prod, policies: ['pci'], tags: { team: 'platform' } }] },
    });
    const proxy = await recordingProxy(api.url);
    try {
      await tmp().write(
        'manifests/acme.yaml',
        'org: acme\nenvironments: [{name: prod, type: K8S, description: New, include_scaling: true}]\n',
      );
      expect((await run(proxy.url, ['sync'])).code).toBe(0);
      const writes = proxy.sent.filter((r) => r.method !== 'GET');
      expect(writes).toEqual([
        { method: 'PATCH', path: '/api/v2/environments/acme/prod', body: { description: 'New' } },
      ]);
      expect(await held(api, 'prod')).toEqual({ policies: ['pci'], tags: { team: 'platform' } });
    } finally {
      await proxy.close();
    }
  });
});

describe('saved plans carry the requests beside the PUT', () => {
  type Plan = {
    integrity?: string;
    orgs: { dialect: string; changes: { name: string; requests: Record<string, unknown> }[] }[];
  };
  const planFile = () => tmp().path('plan.json');
  const readPlan = async () => JSON.parse(await readFile(planFile(), 'utf8')) as Plan;

  it('sync --plan sends exactly the reviewed PATCH, attach, detach and tags', async () => {
    const api = await world.emulator({ profile: 'kosli' });
    await tmp().write('manifests/acme.yaml', MANIFEST);
    expect((await run(api.url, ['sync'])).code).toBe(0);
    await tmp().write(
      'manifests/acme.yaml',
      MANIFEST.replace('[pci, baseline]', '[pci, gdpr]')
        .replace('env: production', 'env: prod')
        .replace('description: Production', 'description: ""'),
    );
    expect((await run(api.url, ['plan', '--out', 'plan.json'])).code).toBe(0);
    const saved = await readPlan();
    expect(saved.orgs[0]?.dialect).toBe('kosli');
    expect(saved.orgs[0]?.changes).toEqual([
      expect.objectContaining({
        name: 'prod',
        requests: {
          put: false,
          patch: ['description'],
          policies: { attach: ['gdpr'], detach: ['baseline'] },
          tags: { set: { env: 'prod' }, remove: [] },
        },
      }),
    ]);
    const before = (await putsAndGets(api)).paths.length;
    const sync = await run(api.url, ['sync', '--plan', 'plan.json', '-o', 'json']);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    expect((await putsAndGets(api, before)).writes).toEqual([
      'PATCH /api/v2/environments/acme/prod',
      'POST /api/v2/environments/acme/prod/policies',
      'DELETE /api/v2/environments/acme/prod/policies',
      'PATCH /api/v2/tags/acme/environment/prod',
    ]);
    expect(await held(api, 'prod')).toEqual({
      policies: ['pci', 'gdpr'],
      tags: { env: 'prod', team: 'platform' },
    });
  });

  it('refuses requests that are not those its fields call for, and a run in another dialect', async () => {
    const api = await world.emulator({ profile: 'kosli' });
    await tmp().write('manifests/acme.yaml', MANIFEST);
    expect((await run(api.url, ['plan', '--out', 'plan.json'])).code).toBe(0);
    const original = await readFile(planFile(), 'utf8');
    // An attach edited after the review, the digest made again to match.
    await reseal(planFile(), (plan: Plan) => {
      const prod = plan.orgs[0]?.changes.find((c) => c.name === 'prod');
      if (prod === undefined) throw new Error('expected a change for prod');
      prod.requests['policies'] = { attach: ['baseline', 'pci', 'sox'], detach: [] };
    });
    const before = (await putsAndGets(api)).paths.length;
    const edited = await run(api.url, ['sync', '--plan', 'plan.json']);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain(
      'org "acme", environment "prod": it sends {"put":true,"policies":{"attach":["baseline","pci","sox"],"detach":[]}',
    );
    expect(edited.stderr).toContain('but its fields call for');
    expect((await putsAndGets(api, before)).paths).toEqual([]);
    // The reviewed plan, applied by a run told to speak the contract's dialect.
    await writeFile(planFile(), original);
    const other = await run(api.url, ['sync', '--plan', 'plan.json', '--api-dialect', 'contract']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(
      'org acme: the plan was made for the kosli API dialect, and this run uses contract (set by --api-dialect)',
    );
    expect((await putsAndGets(api, before)).writes).toEqual([]);
  });
});

describe('the contract dialect', () => {
  it('keeps policies in the PUT body, against either profile, unchecked (it has no policy documents)', async () => {
    const api = await world.emulator({ profile: 'spec' });
    const manifest = MANIFEST.replace(
      '    tags:\n      team: platform\n      env: production\n',
      '',
    );
    await tmp().write('manifests/acme.yaml', manifest);
    const sync = await run(api.url, ['sync', '-o', 'json']);
    expect(sync.code, sync.stdout).toBe(0);
    expect(json(sync.stdout).orgs[0]?.changes.find((c) => c.name === 'prod')).not.toHaveProperty(
      'policies',
    );
    expect((await putsAndGets(api)).writes).toEqual([
      'PUT /api/v2/environments/acme',
      'PUT /api/v2/environments/acme',
    ]);
    expect((await held(api, 'prod')).policies).toEqual(['baseline', 'pci']);
    const plan = await run(api.url, ['plan']);
    expect(plan.stdout).not.toContain('+ policy');

    const kosli = await world.emulator({ profile: 'kosli' });
    const proxy = await recordingProxy(kosli.url);
    try {
      const forced = await run(proxy.url, ['sync', '--api-dialect', 'contract']);
      expect(forced.code, forced.stdout).toBe(0);
      const put = proxy.sent.find(
        (r) => r.method === 'PUT' && (r.body as { name: string }).name === 'prod',
      );
      expect(put?.body).toEqual({
        name: 'prod',
        type: 'K8S',
        description: 'Production',
        policies: ['baseline', 'pci'],
      });
      expect(proxy.sent.filter((r) => r.method === 'POST')).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});
