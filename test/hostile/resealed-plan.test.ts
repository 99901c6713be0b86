/**
 * A saved plan is a file anyone who can write it can reseal (its digest is a checksum). Such a
 * plan may name environments envsync does not own as archives, with any ownership it likes:
 * `sync --plan` checks ownership itself, against the state file and the live listing, when it
 * sends each archive, and archives nothing it does not own, past --max-archive or not.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { integrityOf } from '../../src/engine/saved-plan.ts';
import { json, syncWorld, TOKEN } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const HAND_MADE = ['hm-1', 'hm-2', 'hm-3', 'hm-4', 'hm-5', 'hm-6', 'hm-7'];

type SavedArchive = { name: string; ownedBy: string[] };
type SavedPlanFile = Record<string, unknown> & {
  integrity: string;
  orgs: { org: string; archives?: SavedArchive[]; unmanaged?: string[] }[];
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
    const saved = JSON.parse(await readFile(file, 'utf8')) as SavedPlanFile;
    const org = saved.orgs[0];
    expect(org?.archives).toEqual([{ name: 'old', ownedBy: ['state', 'tag'] }]);
    // Rewritten: the hand-made environments are "owned" archives now, and the file resealed.
    org!.archives = [
      ...(org!.archives ?? []),
      ...HAND_MADE.map((name) => ({ name, ownedBy: ['state'] })),
    ];
    org!.unmanaged = [];
    saved.integrity = integrityOf(saved);
    await writeFile(file, JSON.stringify(saved, null, 2));

    const from = (await api.getRequests(2000)).length;
    const applied = await run(
      api.url,
      ['sync'],
      ['--plan', file, '--max-archive', '5', '-o', 'json'],
    );
    expect(applied.code, applied.stdout + applied.stderr).toBe(1);
    const archived = (await api.getRequests(2000))
      .slice(from)
      .filter((r) => r.path.endsWith('/archive'))
      .map((r) => r.path);
    expect(archived).toEqual(['/api/v2/environments/acme/old/archive']);
    const store = (await api.getStore()).orgs['acme'] ?? [];
    expect(store.filter((e) => e.archived).map((e) => e.name)).toEqual(['old']);
    const report = json(applied.stdout).orgs[0] as unknown as {
      archives: { name: string; ownedBy: string[]; result: string; error?: string }[];
    };
    const refused = report.archives.filter((a) => a.name !== 'old');
    expect(refused).toHaveLength(HAND_MADE.length);
    for (const archive of refused) {
      expect(archive).toMatchObject({ result: 'failed', ownedBy: [] });
      expect(archive.error).toContain('envsync does not own');
    }
    expect(report.archives.find((a) => a.name === 'old')).toMatchObject({
      result: 'applied',
      ownedBy: ['state', 'tag'],
    });
    // Nothing, in the logs either, claims an ownership of what was refused.
    expect(applied.stderr).not.toMatch(/hm-\d[^\n]*the state file records it/);
  });
});
