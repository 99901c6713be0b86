/**
 * A saved plan can be resealed by anyone who can write it (its digest is a checksum): `sync
 * --plan` checks ownership itself when it sends each archive.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { json, putsAndGets, reseal, syncWorld, TOKEN } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const HAND_MADE = ['hm-1', 'hm-2', 'hm-3', 'hm-4', 'hm-5', 'hm-6', 'hm-7'];

type SavedPlanFile = {
  orgs: { archives?: { name: string; ownedBy: string[] }[]; unmanaged?: string[] }[];
};

describe('a resealed saved plan', () => {
  it('archives nothing envsync does not own, and never claims an ownership it did not check', async () => {
    const api = await world.emulator({ profile: 'kosli', orgs: ['acme'] });
    for (const name of HAND_MADE) {
      const made = await request(`${api.url}/api/v2/environments/acme`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name, type: 'K8S', description: 'made by hand' }),
      });
      expect(made.statusCode).toBeLessThan(300);
      await made.body.dump();
    }
    // envsync owns `old` (it created it), then the manifests stop declaring it.
    const declare = (names: readonly string[]) =>
      tmp().write(
        'manifests/acme.yaml',
        [
          'org: acme',
          'prune: true',
          'environments:',
          ...names.map((n) => `  - {name: ${n}, type: K8S, description: "${n}"}`),
        ].join('\n'),
      );
    await declare(['web', 'old']);
    const created = await run(api.url, ['sync']);
    expect(created.code, created.stdout + created.stderr).toBe(0);
    await declare(['web']);

    const file = tmp().path('plan.json');
    const planned = await run(api.url, ['plan'], ['--out', file]);
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);
    // Rewritten: the hand-made environments are "owned" archives now, and the file resealed.
    await reseal(file, (plan: SavedPlanFile) => {
      const org = plan.orgs[0] ?? {};
      expect(org.archives).toEqual([{ name: 'old', ownedBy: ['state', 'tag'] }]);
      const owned = HAND_MADE.map((name) => ({ name, ownedBy: ['state'] }));
      org.archives = [...(org.archives ?? []), ...owned];
      org.unmanaged = [];
    });

    const from = (await putsAndGets(api)).paths.length;
    const applied = await run(
      api.url,
      ['sync'],
      ['--plan', file, '--max-archive', '5', '-o', 'json'],
    );
    expect(applied.code, applied.stdout + applied.stderr).toBe(1);
    const archived = (await putsAndGets(api, from)).paths.filter((r) => r.endsWith('/archive'));
    expect(archived).toEqual(['PUT /api/v2/environments/acme/old/archive']);
    const store = (await api.getStore()).orgs['acme'] ?? [];
    expect(store.filter((e) => e.archived).map((e) => e.name)).toEqual(['old']);
    const archives = json(applied.stdout).orgs[0]?.archives ?? [];
    const refused = archives.filter((a) => a.name !== 'old');
    expect(refused).toHaveLength(HAND_MADE.length);
    const notOwned = {
      result: 'failed',
      ownedBy: [],
      error: expect.stringContaining('does not own'),
    };
    for (const archive of refused) expect(archive).toMatchObject(notOwned);
    expect(archives.find((a) => a.name === 'old')).toMatchObject({
      result: 'applied',
      ownedBy: ['state', 'tag'],
    });
    // Nothing, in the logs either, claims an ownership of what was refused.
    expect(applied.stderr).not.toMatch(/hm-\d[^\n]*the state file records it/);
  });
});
