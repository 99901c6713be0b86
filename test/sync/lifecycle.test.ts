/** The whole life of environments from git on the kosli profile; then a fresh plan is clean. */
import { readFile, rm } from 'node:fs/promises';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { TestEmulator } from '../helpers/emulator.ts';
import { json, putsAndGets, syncWorld, TOKEN } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const BATCH = ['batch-1', 'batch-2', 'batch-3', 'batch-4', 'batch-5', 'batch-6'];

/** acme's manifest: prune on, one policy document, `envs` as YAML entries. */
function manifest(envs: readonly string[]): string {
  return [
    'org: acme',
    'prune: true',
    'policies:',
    '  - name: prod-req',
    '    description: what production needs',
    '    file: policies/prod-req.yaml',
    'environments:',
    ...envs,
  ].join('\n');
}

const env = (name: string, extra: readonly string[] = [], description = name) =>
  [`  - name: ${name}`, '    type: K8S', `    description: ${description}`, ...extra].join('\n');

/** The store's live and archived environments of acme, by name. */
async function store(api: TestEmulator) {
  const all = (await api.getStore()).orgs['acme'] ?? [];
  return {
    live: new Map(all.filter((e) => !e.archived).map((e) => [e.name, e])),
    archived: all.filter((e) => e.archived).map((e) => e.name),
    all: all.map((e) => e.name),
  };
}

describe('the whole cycle on the kosli profile', () => {
  it('creates, renames, retags, detaches, archives what it owns, refuses a mass archive, versions a policy; a fresh plan is clean', async () => {
    const api = await world.emulator({ profile: 'kosli', orgs: ['acme'] });
    // Made by hand on the service: envsync neither created nor tagged it.
    const seeded = await request(`${api.url}/api/v2/environments/acme`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'hand-made', type: 'K8S', description: 'by hand' }),
    });
    expect(seeded.statusCode).toBeLessThan(300);
    await seeded.body.dump();
    await tmp().write('manifests/policies/prod-req.yaml', 'rules: [one]\n');

    // 1. Create with tags and policies.
    const web = env('web', ['    tags: {team: web}', '    policies: [prod-req, pci]'], 'Web tier');
    const base = [env('cache'), env('db'), ...BATCH.map((name) => env(name))];
    await tmp().write('manifests/acme.yaml', manifest([web, ...base]));
    const created = await run(api.url, ['sync'], ['-o', 'json']);
    expect(created.code, created.stdout + created.stderr).toBe(0);
    let held = await store(api);
    expect(held.live.get('web')).toMatchObject({
      tags: { team: 'web', 'managed-by': 'envsync/acme' },
    });
    expect([...(held.live.get('web')?.policies ?? [])].sort()).toEqual(['pci', 'prod-req']);
    expect(held.live.get('db')?.tags).toEqual({ 'managed-by': 'envsync/acme' });
    expect(held.live.get('hand-made')?.tags).toEqual({});

    // 2. Rename, keeping history: one rename request, no create of the new name.
    const renamed = (extra: readonly string[]) =>
      env('web-2', ['    renamed_from: web', ...extra], 'Web tier');
    await tmp().write(
      'manifests/acme.yaml',
      manifest([renamed(['    tags: {team: web}', '    policies: [prod-req, pci]']), ...base]),
    );
    const plan = await run(api.url, ['plan', '--detailed-exitcode']);
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toContain('~ rename web → web-2');
    const markdown = await run(api.url, ['plan', '-o', 'markdown']);
    expect(markdown.stdout).toContain('| 🔀 rename | web → web-2 |');
    expect(markdown.stdout).toContain('| acme | ✅ ok | 0 | 0 | 1 | 0 | 0 | 8 | 1 | 0 |');
    expect(markdown.stdout).toContain('**1** to rename');
    expect(plan.stdout).toMatch(
      /unmanaged \(in the service, not in the manifests; never changed\): hand-made/,
    );
    let from = (await putsAndGets(api)).paths.length;
    const rename = await run(api.url, ['sync', '--detailed-exitcode'], ['-o', 'json']);
    expect(rename.code, rename.stdout + rename.stderr).toBe(0);
    expect(json(rename.stdout).orgs[0]?.changes).toMatchObject([
      { action: 'rename', name: 'web-2', renamedFrom: 'web', fields: {}, result: 'applied' },
    ]);
    const { paths: sent } = await putsAndGets(api, from);
    expect(sent).toContain('PUT /api/v2/environments/acme/web/rename');
    expect(sent.filter((r) => r === 'PUT /api/v2/environments/acme')).toEqual([]);
    held = await store(api);
    expect(held.all).not.toContain('web');
    expect(held.live.get('web-2')?.tags).toEqual({ team: 'web', 'managed-by': 'envsync/acme' });

    // 3. Change tags, and 4. detach a policy: one PATCH, one DELETE; the ownership tag stays.
    await tmp().write(
      'manifests/acme.yaml',
      manifest([
        renamed(['    tags: {team: platform, tier: front}', '    policies: [prod-req]']),
        ...base,
      ]),
    );
    from = (await putsAndGets(api)).paths.length;
    const retag = await run(api.url, ['sync'], ['-o', 'json']);
    expect(retag.code, retag.stdout + retag.stderr).toBe(0);
    expect((await putsAndGets(api, from)).paths).toEqual(
      expect.arrayContaining([
        'DELETE /api/v2/environments/acme/web-2/policies',
        'PATCH /api/v2/tags/acme/environment/web-2',
      ]),
    );
    held = await store(api);
    expect(held.live.get('web-2')).toMatchObject({
      tags: { team: 'platform', tier: 'front', 'managed-by': 'envsync/acme' },
      policies: ['prod-req'],
    });

    // 5. Removed from git under prune: archived, last; 6. the unowned one is left and named.
    const web2 = renamed(['    tags: {team: platform, tier: front}', '    policies: [prod-req]']);
    const withoutDb = [env('cache'), ...BATCH.map((name) => env(name))];
    await tmp().write('manifests/acme.yaml', manifest([web2, ...withoutDb]));
    const prunePlan = await run(api.url, ['plan'], ['-o', 'text']);
    expect(prunePlan.stdout).toContain('- archive db');
    const pruneMarkdown = await run(api.url, ['plan', '-o', 'markdown']);
    expect(pruneMarkdown.stdout).toContain('| acme | ✅ ok | 0 | 0 | 0 | 1 | 0 | 8 | 1 | 0 |');
    const pruned = await run(api.url, ['sync'], ['-o', 'json']);
    expect(pruned.code, pruned.stdout + pruned.stderr).toBe(0);
    const prunedOrg = json(pruned.stdout).orgs[0];
    expect(prunedOrg?.archives).toMatchObject([{ name: 'db', result: 'applied' }]);
    expect(prunedOrg?.unmanaged).toEqual(['hand-made']);
    held = await store(api);
    expect(held.archived).toEqual(['db']);
    expect(held.live.has('hand-made')).toBe(true);

    // 7. Six at once: the guard refuses them all, the org's other change still applies.
    await tmp().write(
      'manifests/acme.yaml',
      manifest([web2, env('cache', [], 'Cache, second edition')]),
    );
    from = (await putsAndGets(api)).paths.length;
    const guarded = await run(api.url, ['sync'], ['-o', 'json']);
    expect(guarded.code).toBe(1);
    const guardedOrg = json(guarded.stdout).orgs[0];
    expect(guardedOrg?.changes).toMatchObject([{ name: 'cache', result: 'applied' }]);
    const refusal = 'would archive 6 environments in one pass, more than --max-archive 5';
    expect(guardedOrg?.archives).toMatchObject(
      BATCH.map((name) => ({ name, result: 'failed', error: expect.stringContaining(refusal) })),
    );
    expect((await putsAndGets(api, from)).paths.filter((r) => r.endsWith('/archive'))).toEqual([]);
    expect((await store(api)).archived).toEqual(['db']);
    // A reviewed plan may archive what it shows.
    const reviewed = await run(api.url, ['plan'], ['--out', tmp().path('plan.json')]);
    expect(reviewed.code, reviewed.stderr).toBe(0);
    expect(reviewed.stdout).toContain('a sync would refuse this');
    const applied = await run(api.url, ['sync'], ['--plan', tmp().path('plan.json'), '-o', 'json']);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect((await store(api)).archived.sort()).toEqual([...BATCH, 'db']);

    // 8. A policy file change makes a new version.
    await tmp().write('manifests/policies/prod-req.yaml', 'rules: [one, two]\n');
    const versioned = await run(api.url, ['sync'], ['-o', 'json']);
    expect(versioned.code, versioned.stdout + versioned.stderr).toBe(0);
    const policy = await request(`${api.url}/api/v2/policies/acme/prod-req`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const body = (await policy.body.json()) as { versions: { policy_yaml: string }[] };
    expect(body.versions.map((v) => v.policy_yaml)).toEqual([
      'rules: [one]\n',
      'rules: [one, two]\n',
    ]);

    // With no state file, the service as the cycle left it is what the manifests say.
    const state = await readFile(tmp().path('state.json'), 'utf8');
    expect(state).toContain('web-2');
    await rm(tmp().path('state.json'));
    const fresh = await run(api.url, ['plan', '--detailed-exitcode']);
    expect(fresh.code, fresh.stdout + fresh.stderr).toBe(0);
    expect(fresh.stdout).toContain('hand-made');

    // Exported, the manifests hold no ownership tag, and plan clean with prune off and on.
    await rm(tmp().path('manifests'), { recursive: true });
    const out = ['--org', 'acme', '--out', 'manifests', '--api-url', api.url];
    expect((await world.cli(['export', ...out])).code).toBe(0);
    const exported = await readFile(tmp().path('manifests/acme.yaml'), 'utf8');
    expect(exported).toContain('tags:');
    expect(exported).not.toContain('managed-by');
    for (const prune of ['', 'prune: true\n']) {
      await tmp().write('manifests/acme.yaml', exported.replace(/^org: acme\n/m, `$&${prune}`));
      const again = await run(api.url, ['plan', '--detailed-exitcode']);
      expect(again.code, again.stdout + again.stderr).toBe(0);
    }
  });
});
