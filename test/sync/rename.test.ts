/** `renamed_from` and `prune` at the edges, on the kosli profile. */
import { describe, expect, it } from 'vitest';
import { json, putsAndGets, reseal, syncWorld } from '../helpers/sync-world.ts';

const { tmp, emulator, run, cli } = syncWorld();

const ENV = (name: string, extra = '') =>
  `  - name: ${name}\n    type: K8S\n    description: Web tier\n${extra}`;

async function seeded(names: readonly string[], manifest: string) {
  const api = await emulator({ profile: 'kosli', orgs: ['acme'] });
  await api.putStore({
    orgs: { acme: names.map((name) => ({ name, type: 'K8S', description: 'Web tier' })) },
  });
  await tmp().write('manifests/acme.yaml', manifest);
  return api;
}

describe('renamed_from', () => {
  it('fails the org at renamed_from when the service has both names; nothing is sent', async () => {
    const api = await seeded(
      ['web', 'web-2'],
      `org: acme\nenvironments:\n${ENV('web-2', '    renamed_from: web\n')}`,
    );
    const sync = await run(api.url, ['sync'], ['-o', 'json']);
    expect(sync.code).toBe(1);
    const org = json(sync.stdout).orgs[0];
    expect(org?.status).toBe('invalid');
    expect(org?.errors).toMatchObject([
      {
        line: 6,
        column: 5,
        message: expect.stringContaining(
          '"web-2" is renamed from "web", but the service has both names',
        ),
      },
    ]);
    expect((await putsAndGets(api)).writes).toEqual([]);
  });

  it('creates the new name, and says so, when the service has neither; in text, markdown and JSON', async () => {
    const api = await seeded(
      [],
      `org: acme\nenvironments:\n${ENV('web-2', '    renamed_from: web\n')}`,
    );
    const text = await run(api.url, ['plan']);
    expect(text.stdout).toContain(
      '+ create web-2 (renamed_from web: the service has neither name, so it is created)',
    );
    const markdown = await run(api.url, ['plan'], ['-o', 'markdown']);
    expect(markdown.stdout).toContain('renamed from web, but the service has neither name');
    const plan = await run(api.url, ['plan'], ['-o', 'json']);
    expect(json(plan.stdout).orgs[0]?.changes).toMatchObject([
      { action: 'create', name: 'web-2', renameNotFound: 'web' },
    ]);
    const sync = await run(api.url, ['sync']);
    expect(sync.code, sync.stdout + sync.stderr).toBe(0);
    expect(((await api.getStore()).orgs['acme'] ?? []).map((e) => e.name)).toEqual(['web-2']);
  });
});

type Plan = { orgs: Record<string, unknown>[] };

describe('prune with a manifest file that cannot be read', () => {
  it('archives nothing while a file names no org, sends the rest, and archives once it reads', async () => {
    const api = await emulator({ profile: 'kosli', orgs: ['acme'] });
    const old = {
      name: 'old',
      type: 'K8S',
      description: 'd',
      tags: { 'managed-by': 'envsync/acme' },
    };
    await api.putStore({
      orgs: { acme: [{ name: 'web', type: 'K8S', description: 'Web tier' }, old] },
    });
    await tmp().write(
      'manifests/acme.yaml',
      `org: acme\nprune: true\nenvironments:\n${ENV('web')}${ENV('new').replace('web', 'new')}`,
    );
    // It may be the file that declares "old": it cannot say.
    await tmp().write('manifests/broken.yaml', 'environments: [\n  - name: old\n');
    const held = await run(api.url, ['sync'], ['-o', 'json']);
    expect(held.code).toBe(1);
    expect(json(held.stdout).orgs[0]?.archives).toMatchObject([
      { name: 'old', result: 'failed', error: expect.stringContaining('none is archived until') },
    ]);
    // The create of "new" (with its ownership tag) is sent: only the archives wait.
    expect((await putsAndGets(api)).writes).toEqual([
      'PUT /api/v2/environments/acme',
      'PATCH /api/v2/tags/acme/environment/new',
    ]);

    await tmp().write('manifests/broken.yaml', '');
    const archived = await run(api.url, ['sync'], ['-o', 'json']);
    expect(archived.code, archived.stdout).toBe(0);
    expect((await putsAndGets(api)).writes).toContain('PUT /api/v2/environments/acme/old/archive');
  });
});

describe('saved plans with renames and archives', () => {
  it('refuses a resealed plan that archives what the manifests declare, or prunes an org that does not', async () => {
    const api = await seeded(
      ['web', 'old'],
      `org: acme\nprune: true\nenvironments:\n${ENV('web')}`,
    );
    // "old" is not envsync's: nothing to archive; the plan says so.
    const file = tmp().path('plan.json');
    const plan = await run(api.url, ['plan', '--out', file], ['-o', 'json']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(json(plan.stdout).orgs[0]?.unmanaged).toEqual(['old']);
    // An archive of what the plan itself keeps is refused by the plan alone.
    await reseal(file, (p: Plan) => {
      (p.orgs[0] as { archives: unknown[] }).archives = [{ name: 'web', ownedBy: ['state'] }];
    });
    const kept = await run(api.url, ['sync', '--plan', file]);
    expect(kept.code).toBe(1);
    expect(kept.stderr).toContain(
      'org "acme", environment "web": the plan both archives and keeps it',
    );
    // An archive of what the manifests declare (now) is refused against them.
    await reseal(file, (p: Plan) => {
      (p.orgs[0] as { archives: unknown[] }).archives = [{ name: 'old', ownedBy: ['state'] }];
    });
    await tmp().write(
      'manifests/acme.yaml',
      `org: acme\nprune: true\nenvironments:\n${ENV('web')}${ENV('old')}`,
    );
    const declared = await run(api.url, ['sync', '--plan', file]);
    expect(declared.code).toBe(1);
    expect(declared.stderr).toContain('the plan archives it, but the manifests declare it');

    await tmp().write('manifests/acme.yaml', `org: acme\nenvironments:\n${ENV('web')}`);
    const notPruned = await run(api.url, ['sync', '--plan', file]);
    expect(notPruned.code).toBe(1);
    expect(notPruned.stderr).toContain(
      'the plan prunes it, but its manifests do not say "prune: true"',
    );
    expect((await putsAndGets(api)).writes).toEqual([]);
  });

  it('refuses a resealed plan whose rename names another old name than the manifests', async () => {
    const api = await seeded(
      ['web', 'api'],
      `org: acme\nenvironments:\n${ENV('web-2', '    renamed_from: web\n')}`,
    );
    const file = tmp().path('plan.json');
    expect((await run(api.url, ['plan', '--out', file])).code).toBe(0);
    await reseal(file, (p: Plan) => {
      const change = (p.orgs[0] as { changes: Record<string, unknown>[] }).changes[0] ?? {};
      change['renamedFrom'] = 'api';
      (change['requests'] as Record<string, unknown>)['rename'] = 'api';
    });
    const sync = await run(api.url, ['sync', '--plan', file]);
    expect(sync.code).toBe(1);
    expect(sync.stderr).toContain(
      'the plan renames it from "api", the manifests declare renamed_from "web"',
    );
    expect((await putsAndGets(api)).writes).toEqual([]);
  });
});

describe('export', () => {
  it('never writes prune or renamed_from', async () => {
    const api = await seeded(
      ['web-2'],
      `org: acme\nprune: true\nenvironments:\n${ENV('web-2', '    renamed_from: web\n')}`,
    );
    const exported = await cli(['export', '--org', 'acme', '--api-url', api.url]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain('name: web-2');
    expect(exported.stdout).not.toMatch(/prune|renamed_from/);
  });
});
