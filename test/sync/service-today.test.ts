/** What the plan tells of the service as it is today: archived names, placeholders, compliance. */
import { expect, it } from 'vitest';
import { json, putsAndGets, syncWorld } from '../helpers/sync-world.ts';

const { tmp, emulator, run } = syncWorld();

const ENV = (name: string, extra = '') =>
  `  - name: ${name}\n    type: K8S\n    description: Web tier\n${extra}`;

async function seeded(envs: readonly object[], ...manifest: string[]) {
  const api = await emulator({ profile: 'kosli', orgs: ['acme'] });
  const acme = envs.map((env) => ({ type: 'K8S', description: 'Web tier', ...env }));
  await api.putStore({ orgs: { acme } });
  await tmp().write('manifests/acme.yaml', `org: acme\nenvironments:\n${manifest.join('')}`);
  return api;
}
const ARCHIVED = (name: string) =>
  `${name} was archived on the service: this starts a new environment without its history`;

it('plan names a create or a rename onto an archived name in every format; sync does not ask', async () => {
  const api = await seeded(
    [{ name: 'old', archived: true }, { name: 'gone', archived: true }, { name: 'cur' }],
    ENV('old'),
    ENV('fresh'),
    ENV('gone', '    renamed_from: cur\n'),
  );
  const text = await run(api.url, ['plan']);
  expect(text.stdout).toContain(`+ create old (${ARCHIVED('old')})`);
  expect(text.stdout).toContain(`cur → gone (${ARCHIVED('gone')})`);
  expect(text.stdout).toMatch(/\+ create fresh\n/);
  const changes = json((await run(api.url, ['plan', '-o', 'json'])).stdout).orgs[0]?.changes;
  // In name order: fresh, gone, old.
  expect(changes?.map((c) => c['wasArchived' as 'name'])).toEqual([undefined, true, true]);
  const markdown = await run(api.url, ['plan', '-o', 'markdown']);
  expect(markdown.stdout).toContain(`⚠️ _${ARCHIVED('old')}_`);
  const before = (await api.getRequests(1000)).length;
  expect((await run(api.url, ['sync'])).code).toBe(0);
  const asked = (await putsAndGets(api, before)).paths.filter((p) => /acme\/\w+$/.test(p));
  expect(asked.filter((p) => p.startsWith('GET'))).toEqual([]);
});

it('asks about at most 20 creates per org; the rest say not checked', async () => {
  const names = Array.from({ length: 21 }, (_, i) => `e${String(i).padStart(2, '0')}`);
  const api = await seeded([], ...names.map((name) => ENV(name)));
  const plan = await run(api.url, ['plan', '-o', 'json']);
  const said = json(plan.stdout).orgs[0]?.changes.map((c) => c['wasArchived' as 'name']);
  expect(said).toEqual([...Array<undefined>(20), 'not-checked']);
  const gets = (await putsAndGets(api)).paths.filter((p) => /^GET .*acme\/e\d+$/.test(p));
  expect(gets).toHaveLength(20);
  expect((await run(api.url, ['plan'])).stdout).toContain('+ create e20 (not checked for an');
});

it('a placeholder entry is unknown, compared and sent nothing, said once; the others go on', async () => {
  const api = await seeded(
    [{ name: 'db' }, { name: 'web' }],
    ENV('db').replace('Web tier', 'Database'),
    ENV('web').replace('Web tier', 'Web'),
    ENV('api'),
  );
  await api.setFaults({ placeholders: { acme: ['db'] } });
  const plan = await run(api.url, ['plan']);
  expect(plan.stdout).toContain('unknown (the service lists a placeholder');
  expect(plan.stdout).toMatch(/nothing is compared or sent\): db\n/);
  const sync = await run(api.url, ['sync', '-o', 'json']);
  expect(sync.code, sync.stderr).toBe(0);
  const org = json(sync.stdout).orgs[0];
  expect(org).toMatchObject({ status: 'ok', unknown: ['db'] });
  expect(org?.changes.map((c) => `${c.name} ${c.result}`)).toEqual(['api applied', 'web applied']);
  expect((await putsAndGets(api)).writes.filter((w) => w.includes('db'))).toEqual([]);
  const warned = sync.stderr.split('\n').filter((l) => l.includes('placeholder'));
  expect(warned).toHaveLength(1);
  expect(warned[0]).toContain('org acme: the listing (GET /api/v2/environments/acme) holds');
});

it('shows each listed environment its compliance; detaching the last policy says it becomes unknown', async () => {
  const api = await seeded(
    [
      { name: 'prod', state: true, policies: ['pci'] },
      { name: 'lab', state: false },
      { name: 'plain', state: null },
    ],
    ENV('lab'),
    ENV('plain'),
    ENV('prod', '    policies: []\n'),
  );
  const plan = json((await run(api.url, ['plan', '-o', 'json'])).stdout).orgs[0];
  const words = 'its last policy is detached: its compliance becomes unknown';
  expect(plan).toMatchObject({
    unchanged: ['lab', 'plain'],
    compliance: { lab: 'non-compliant', plain: 'unknown', prod: 'compliant' },
    changes: [{ name: 'prod', complianceBecomes: 'unknown' }],
  });
  expect((await run(api.url, ['plan'])).stdout).toContain(`      ${words}\n`);
  expect((await run(api.url, ['plan', '-o', 'markdown'])).stdout).toContain(`⚠️ _${words}_`);
  expect((await run(api.url, ['sync'])).code).toBe(0);
  const after = json((await run(api.url, ['plan', '-o', 'json'])).stdout).orgs[0];
  expect(after).toMatchObject({ changes: [], compliance: { prod: 'unknown' } });
});
