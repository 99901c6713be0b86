/**
 * One org's `policies:` entry names another org's manifest as its policy file: an error for the
 * org naming it, and the file stays a manifest, whatever state it is in (a typo holds its own org).
 */
import { describe, expect, it } from 'vitest';
import { json, putsAndGets, syncWorld } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const ACME_MAIN =
  'org: acme\nprune: true\nenvironments: [{name: web, type: K8S, description: Web}]\n';
const ACME_DB = `org: acme
environments:
  - name: db
    type: K8S
    description: Database
`;
const EVIL = `org: evil
policies:
  - name: stolen
    file: ../acme/db.yaml
environments:
  - name: app
    type: K8S
    description: App
    policies: [stolen]
`;

/** The variants of acme's db.yaml on the day it breaks. */
const BROKEN = {
  'a typo in a key': ACME_DB.replace('description:', 'descriptoin:'),
  'a YAML syntax error': ACME_DB.replace('  - name: db', '  - name: [db'),
};

describe("a policy file that is another org's manifest", () => {
  it.each(Object.entries(BROKEN))(
    'is an error for the org naming it; with %s, acme is left alone and nothing is archived or uploaded',
    async (_, broken) => {
      const api = await world.emulator({ profile: 'kosli', orgs: ['acme', 'evil'] });
      await tmp().write('manifests/acme/main.yaml', ACME_MAIN);
      await tmp().write('manifests/acme/db.yaml', ACME_DB);
      await tmp().write('manifests/evil/evil.yaml', EVIL);

      // While acme's file is valid: an error for evil, at its `file:` line.
      const valid = await run(api.url, ['validate']);
      expect(valid.code, valid.stdout + valid.stderr).toBe(1);
      expect(valid.stdout + valid.stderr).toMatch(/evil\.yaml:4:11/);
      const first = await run(api.url, ['sync'], ['-o', 'json']);
      expect(first.code, first.stdout + first.stderr).toBe(1);
      const orgs = new Map(json(first.stdout).orgs.map((o) => [o.org, o]));
      expect(orgs.get('evil')?.status).toBe('invalid');
      expect(orgs.get('evil')?.errors[0]).toMatchObject({ line: 4, column: 11 });
      expect(orgs.get('evil')?.errors[0]?.message).toContain('is org "acme"\'s manifest');
      expect(orgs.get('acme')?.status).toBe('ok');
      const live = async () =>
        ((await api.getStore()).orgs['acme'] ?? []).filter((e) => !e.archived).map((e) => e.name);
      expect((await live()).sort()).toEqual(['db', 'web']);

      // The day acme's file breaks: still a manifest, with its own problem; evil still in error.
      await tmp().write('manifests/acme/db.yaml', broken);
      const checked = await run(api.url, ['validate']);
      expect(checked.code).toBe(1);
      const said = checked.stdout + checked.stderr;
      expect(said).toMatch(/evil\.yaml:4:11/);
      expect(said).toMatch(/acme[/\\]db\.yaml:\d+:\d+/);

      const from = (await putsAndGets(api)).paths.length;
      const sync = await run(api.url, ['sync'], ['-o', 'json']);
      expect(sync.code, sync.stdout + sync.stderr).toBe(1);
      expect((await putsAndGets(api, from)).writes).toEqual([]);
      expect((await live()).sort()).toEqual(['db', 'web']);
      expect((await api.getStore()).policies?.['evil'] ?? []).not.toContainEqual(
        expect.objectContaining({ name: 'stolen' }),
      );
    },
  );
});
