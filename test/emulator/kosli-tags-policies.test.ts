/**
 * The kosli profile's tags (PATCH /api/v2/tags/{org}/environment/{name}), policy documents (GET
 * and the multipart PUT of /api/v2/policies/{org}) and attaching them to environments (POST and
 * DELETE /api/v2/environments/{org}/{name}/policies), and the documents in the admin store.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { send } from '../helpers/emulator.ts';
import { entriesOf, errorsOf, multipart, NOW_MS, policyForm, startKosli } from './api-client.ts';
import { TOKEN, VALID, VALIDATION_FAILED } from './api-client.ts';

const PAYLOAD = { name: 'baseline', description: 'The baseline', type: 'env', comment: 'first' };
const YAML =
  '_schema: https://kosli.com/schemas/policy/environment/v1\nartifacts:\n  provenance:\n    required: true\n';
const YAML_2 = `${YAML}  trail-compliance:\n    required: true\n`;
const version = (n: number, yaml: string, at: number) => ({
  version: n,
  policy_yaml: yaml,
  timestamp: at,
  created_by: 'envsync-emulator',
});

let nowMs = NOW_MS;
const { emu, api } = await startKosli(() => nowMs);
afterAll(() => emu.close());
beforeEach(async () => {
  nowMs = NOW_MS;
  await emu.reset();
  await api.put(VALID);
});

const entry = async () => entriesOf(await api.list()).find((env) => env.name === 'prod');
const refusal = (field: string) => ({
  message: VALIDATION_FAILED,
  errors: { [field]: expect.any(String) },
});
const archivedProd = {
  message: "Environment named 'prod' in organization 'acme' has been archived",
};

describe('PATCH /api/v2/tags/{org}/environment/{name}', () => {
  it('sets and removes tags: 200 "OK"; a key set again keeps its place; the timestamps move on a change only', async () => {
    nowMs += 1000;
    const set = await api.tags('prod', { set_tags: { team: 'core', tier: 'gold' } });
    expect([set.status, set.body]).toEqual([200, 'OK']);
    nowMs += 1000;
    const change = { set_tags: { team: 'platform', region: 'eu' }, remove_tags: ['tier', 'never'] };
    await api.tags('prod', change);
    const tags = (await entry())?.tags;
    expect(Object.entries(tags ?? {})).toEqual([
      ['team', 'platform'],
      ['region', 'eu'],
    ]);
    nowMs += 1000;
    const same = await api.tags('prod', { set_tags: { team: 'platform' }, remove_tags: ['x'] });
    expect(same.status).toBe(200);
    const moved = { last_modified_at: 1_700_000_002, last_changed_at: 1_700_000_002 };
    expect(await entry()).toMatchObject(moved);
    expect((await api.read('prod')).body).toMatchObject({ tags });
  });

  it('keeps a key such as __proto__ an ordinary key; takes the longest key and value and an empty value', async () => {
    const odd = await api.call('/api/v2/tags/acme/environment/prod', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: '{"set_tags": {"__proto__": "x", "constructor": "y"}}',
    });
    expect(odd.status).toBe(200);
    const tags = (await emu.getStore()).orgs.acme?.[0]?.tags ?? {};
    expect([Object.keys(tags), Object.getPrototypeOf(tags)]).toEqual([
      ['__proto__', 'constructor'],
      Object.prototype,
    ]);
    const longest = { ['k'.repeat(128)]: 'v'.repeat(1024), empty: '' };
    const remove_tags = ['__proto__', 'constructor'];
    expect((await api.tags('prod', { set_tags: longest, remove_tags })).status).toBe(200);
    expect((await entry())?.tags).toEqual(longest);
  });

  it.each([
    [{ set_tags: { a: 'b' }, add_tags: {} }, 'add_tags'],
    [{}, 'payload'],
    [{ set_tags: ['a'] }, 'set_tags'],
    [{ set_tags: { a: 1 } }, 'set_tags'],
    [{ set_tags: { '': 'x' } }, 'set_tags'],
    [{ set_tags: { ['k'.repeat(129)]: 'x' } }, 'set_tags'],
    [{ set_tags: { k: 'v'.repeat(1025) } }, 'set_tags'],
    [{ remove_tags: [1] }, 'remove_tags'],
    [{ set_tags: { a: 'b' }, remove_tags: ['a'] }, 'remove_tags'],
    [[], 'payload'],
  ])('refuses %j with 400 and changes nothing', async (body, field) => {
    await api.tags('prod', { set_tags: { keep: 'me' } });
    expect((await api.tags('prod', body)).body).toEqual(refusal(field));
    expect((await entry())?.tags).toEqual({ keep: 'me' });
  });

  it('holds at most 100 tags', async () => {
    const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'v']));
    expect((await api.tags('prod', { set_tags: hundred })).status).toBe(200);
    const set_tags = 'an environment holds at most 100 tags; this change would leave 101';
    const more = await api.tags('prod', { set_tags: { one: 'more' } });
    expect(more.body).toEqual({ message: VALIDATION_FAILED, errors: { set_tags } });
    const swap = await api.tags('prod', { set_tags: { one: 'more' }, remove_tags: ['k0'] });
    expect(swap.status).toBe(200);
  });

  it('answers 404 for an unknown or archived environment, or another kind of resource', async () => {
    expect((await api.tags('nope', { set_tags: { a: 'b' } })).status).toBe(404);
    await api.archive('prod');
    expect((await api.tags('prod', { set_tags: { a: 'b' } })).body).toEqual(archivedProd);
    const json = { set_tags: { a: 'b' } };
    const flow = await api.call('/api/v2/tags/acme/flow/prod', { method: 'PATCH', json });
    expect(flow.status).toBe(404);
  });
});

describe('PUT and GET /api/v2/policies/{org}[/{name}]', () => {
  it('creates version 1 (201, the document), adds a version only when the YAML changes by a byte (200)', async () => {
    const created = await api.putPolicy(policyForm(PAYLOAD, YAML));
    const document = {
      name: 'baseline',
      description: 'The baseline',
      created_at: 1_700_000_000,
      versions: [version(1, YAML, 1_700_000_000)],
    };
    expect([created.status, created.body]).toEqual([201, document]);
    expect((await api.getPolicies('baseline')).body).toEqual(document);
    nowMs += 1000;
    expect((await api.putPolicy(policyForm(PAYLOAD, YAML))).body).toEqual(document);
    const changed = await api.putPolicy(policyForm({ ...PAYLOAD, comment: 'second' }, YAML_2));
    const versions = [...document.versions, version(2, YAML_2, 1_700_000_001)];
    expect([changed.status, changed.body]).toEqual([200, { ...document, versions }]);
    // Back to the first text is a change too, and so is a line break.
    await api.putPolicy(policyForm(PAYLOAD, YAML));
    const last = await api.putPolicy(policyForm(PAYLOAD, `${YAML}\n`));
    const numbers = (last.body as { versions: { version: number }[] }).versions;
    expect(numbers.map((item) => item.version)).toEqual([1, 2, 3, 4]);
  });

  it('changes the description alone without a version; keeps it when left out; a new one starts empty', async () => {
    await api.putPolicy(policyForm(PAYLOAD, YAML));
    const renamed = await api.putPolicy(policyForm({ ...PAYLOAD, description: 'Renamed' }, YAML));
    expect(renamed.body).toMatchObject({ description: 'Renamed', versions: [{ version: 1 }] });
    const { description: _description, ...bare } = PAYLOAD;
    const kept = await api.putPolicy(policyForm(bare, YAML_2));
    expect(kept.body).toMatchObject({ description: 'Renamed', versions: [{}, {}] });
    const other = await api.putPolicy(policyForm({ ...bare, name: 'other' }, YAML));
    expect(other.body).toMatchObject({ description: '' });
  });

  it('takes what a standard FormData client sends; lists by name (code units), per org', async () => {
    const form = new FormData();
    form.append('payload', JSON.stringify({ ...PAYLOAD, name: 'zeta' }));
    form.append('policy_file', new Blob([YAML], { type: 'application/x-yaml' }), 'zeta.yaml');
    const headers = { authorization: `Bearer ${TOKEN}` };
    const url = `${emu.url}/api/v2/policies/acme`;
    expect((await fetch(url, { method: 'PUT', headers, body: form })).status).toBe(201);
    for (const name of ['alpha', 'Alpha'])
      await api.putPolicy(policyForm({ ...PAYLOAD, name }, YAML));
    await api.putPolicy(policyForm({ ...PAYLOAD, name: 'only-beta' }, YAML), 'beta');
    const names = (await api.getPolicies()).body as { name: string }[];
    expect(names.map((document) => document.name)).toEqual(['Alpha', 'alpha', 'zeta']);
    const message = "Policy named 'only-beta' does not exist for organization 'acme'";
    expect((await api.getPolicies('only-beta')).body).toEqual({ message });
    expect((await api.getPolicies('%E0%A4%A')).status).toBe(404);
  });

  const file = (value: string | Buffer, filename?: string) => ({
    name: 'policy_file',
    value,
    ...(filename === undefined ? {} : { filename }),
  });
  const payload = (value: string, filename?: string) => ({
    ...file(value, filename),
    name: 'payload',
  });
  it.each([
    ['a body that is not multipart', 'just some text', 'payload'],
    ['a body cut short', policyForm(PAYLOAD, YAML).body.subarray(0, 60), 'payload'],
    ['an unknown payload key', policyForm({ ...PAYLOAD, owner: 'me' }, YAML), 'payload.owner'],
    ['no name', policyForm({ type: 'env' }, YAML), 'payload.name'],
    ['a bad name', policyForm({ ...PAYLOAD, name: '-x' }, YAML), 'payload.name'],
    ['another type', policyForm({ ...PAYLOAD, type: 'artifact' }, YAML), 'payload.type'],
    ['a description of 1', policyForm({ ...PAYLOAD, description: 1 }, YAML), 'payload.description'],
    ['a comment of []', policyForm({ ...PAYLOAD, comment: [] }, YAML), 'payload.comment'],
    ['a payload not JSON', multipart([payload('{'), file(YAML, 'p.yaml')]), 'payload'],
    ['a payload that is a list', policyForm([], YAML), 'payload'],
    ['no payload', multipart([file(YAML, 'p.yaml')]), 'payload'],
    ['a payload as a file', multipart([payload('{}', 'p.json'), file(YAML, 'p.yaml')]), 'payload'],
    ['no policy file', multipart([payload(JSON.stringify(PAYLOAD))]), 'policy_file'],
    [
      'a plain policy file',
      multipart([payload(JSON.stringify(PAYLOAD)), file(YAML)]),
      'policy_file',
    ],
    ['an empty policy file', policyForm(PAYLOAD, '  \n'), 'policy_file'],
    ['a file not UTF-8', policyForm(PAYLOAD, Buffer.from([0x61, 0xff, 0x62])), 'policy_file'],
    ['an unknown part', policyForm(PAYLOAD, YAML, [{ name: 'owner', value: 'me' }]), 'owner'],
    ['a second file', policyForm(PAYLOAD, YAML, [file(YAML, 'b.yaml')]), 'policy_file'],
  ])('answers 400 naming the problem: %s', async (_label, form, field) => {
    const body = typeof form === 'string' || Buffer.isBuffer(form) ? form : form.body;
    const headers = { 'content-type': 'multipart/form-data; boundary=envsync-test-boundary-7f3a' };
    const response = await api.call('/api/v2/policies/acme', { method: 'PUT', headers, body });
    expect(response.body).toEqual(refusal(field));
    expect((await api.getPolicies()).body).toEqual([]);
  });

  it('lists every problem at once; 415 for another type, 413 over 1 MiB', async () => {
    const form = multipart([payload(JSON.stringify({ name: 7, type: 'x', extra: 1 }))]);
    expect(Object.keys(errorsOf(await api.putPolicy(form)) ?? {}).toSorted()).toEqual([
      'payload.extra',
      'payload.name',
      'payload.type',
      'policy_file',
    ]);
    const json = await api.call('/api/v2/policies/acme', { method: 'PUT', json: PAYLOAD });
    expect(json.status).toBe(415);
    expect((await api.putPolicy(policyForm(PAYLOAD, 'x'.repeat(1024 * 1024)))).status).toBe(413);
  });
});

describe('POST and DELETE /api/v2/environments/{org}/{name}/policies', () => {
  beforeEach(async () => {
    for (const name of ['baseline', 'sox', 'pci']) {
      await api.putPolicy(policyForm({ ...PAYLOAD, name }, YAML));
    }
  });
  const attach = (...names: string[]) => api.policies('POST', 'prod', { policy_names: names });
  const detach = (...names: string[]) => api.policies('DELETE', 'prod', { policy_names: names });

  it('attaches in the order given, each once; a repeat changes no timestamp', async () => {
    expect((await entry())?.policies).toBeNull();
    nowMs += 1000;
    const response = await attach('sox', 'baseline', 'sox');
    expect([response.status, response.body]).toEqual([200, 'OK']);
    nowMs += 1000;
    await attach('pci', 'sox');
    nowMs += 1000;
    await attach('sox');
    const policies = ['sox', 'baseline', 'pci'];
    expect(await entry()).toMatchObject({ policies, last_changed_at: 1_700_000_002 });
    expect((await api.read('prod')).body).toMatchObject({ policies });
  });

  it('detaches, ignoring names not attached; with the last one gone, none and compliance unknown', async () => {
    await attach('sox', 'pci');
    const store = await emu.getStore();
    const acme = (store.orgs.acme ?? []).map((env) => ({ ...env, state: true }));
    await emu.putStore({ ...store, orgs: { acme } });
    expect((await detach('sox', 'never')).body).toBe('OK');
    expect(await entry()).toMatchObject({ policies: ['pci'], state: true });
    await detach('pci');
    expect(await entry()).toMatchObject({ policies: null, state: null });
  });

  it('refuses a policy with no document in the org, naming each, and attaches none', async () => {
    await api.putPolicy(policyForm({ ...PAYLOAD, name: 'only-beta' }, YAML), 'beta');
    const policy_names =
      "policy 'ghost' does not exist in organization 'acme'; policy 'only-beta' does not exist in organization 'acme'";
    const refused = await attach('sox', 'ghost', 'only-beta');
    expect(refused.body).toEqual({ message: VALIDATION_FAILED, errors: { policy_names } });
    expect((await entry())?.policies).toBeNull();
  });

  it.each([
    [{ policy_names: ['sox'], force: true }, 'force'],
    [{}, 'policy_names'],
    [{ policy_names: [] }, 'policy_names'],
    [{ policy_names: 'sox' }, 'policy_names'],
    [{ policy_names: ['sox', 3] }, 'policy_names'],
    [{ policy_names: ['-sox'] }, 'policy_names'],
    [[], 'payload'],
  ])('refuses %j with 400, for attach and detach alike', async (body, field) => {
    for (const method of ['POST', 'DELETE'] as const) {
      expect((await api.policies(method, 'prod', body)).body).toEqual(refusal(field));
    }
  });

  it('answers 404 for an unknown or archived environment, 415 for a body not JSON', async () => {
    expect((await api.policies('POST', 'nope', { policy_names: ['sox'] })).status).toBe(404);
    const headers = { 'content-type': 'text/plain' };
    const text = { method: 'POST' as const, headers, body: '{"policy_names":["sox"]}' };
    expect((await api.call('/api/v2/environments/acme/prod/policies', text)).status).toBe(415);
    await api.archive('prod');
    expect((await detach('sox')).body).toEqual(archivedProd);
  });

  it('leaves policies given in an environment PUT as they are: they need no document', async () => {
    await api.put({ ...VALID, policies: ['from-put'] });
    await attach('sox');
    expect((await entry())?.policies).toEqual(['from-put', 'sox']);
  });
});

describe('policy documents in the admin store', () => {
  it('fills in a seed, round-trips it, and attaches and versions from it; reset empties it', async () => {
    const versions = [
      { policy_yaml: 'a: 1\n' },
      { version: 4, policy_yaml: 'a: 2\n', timestamp: 9 },
    ];
    const seeded = await emu.putStore({
      orgs: { acme: [VALID] },
      policies: { acme: [{ name: 'seeded', created_at: 5, versions }] },
    });
    expect(seeded.policies).toEqual({
      acme: [
        {
          name: 'seeded',
          description: '',
          created_at: 5,
          versions: [version(1, 'a: 1\n', 5), version(4, 'a: 2\n', 9)],
        },
      ],
    });
    expect((await api.policies('POST', 'prod', { policy_names: ['seeded'] })).status).toBe(200);
    const next = await api.putPolicy(policyForm({ ...PAYLOAD, name: 'seeded' }, 'a: 3\n'));
    expect(next.body).toMatchObject({ versions: [{ version: 1 }, { version: 4 }, { version: 5 }] });
    const store = await emu.getStore();
    await emu.reset();
    expect([(await emu.getStore()).policies, (await api.getPolicies()).body]).toEqual([{}, []]);
    expect(await emu.putStore(store)).toEqual(store);
    expect((await emu.putStore({ orgs: {} })).policies).toEqual({});
  });

  const p = (extra: object = {}) => ({ name: 'p', versions: [{ policy_yaml: '' }], ...extra });
  it.each([
    ['policies not an object', [], 'policies'],
    ['a bad org name', { '-x': [] }, 'policies.-x'],
    ['an org not a list', { acme: {} }, 'policies.acme'],
    ['an unknown field', { acme: [p({ x: 1 })] }, 'policies.acme[0].x'],
    ['no versions', { acme: [p({ versions: [] })] }, 'policies.acme[0].versions'],
    [
      'a version without YAML',
      { acme: [p({ versions: [{}] })] },
      'policies.acme[0].versions[0].policy_yaml',
    ],
    [
      'versions out of order',
      {
        acme: [
          p({
            versions: [
              { version: 2, policy_yaml: '' },
              { version: 2, policy_yaml: '' },
            ],
          }),
        ],
      },
      'policies.acme[0].versions[1].version',
    ],
    [
      'an unknown version field',
      { acme: [p({ versions: [{ policy_yaml: '', comment: 'c' }] })] },
      'policies.acme[0].versions[0].comment',
    ],
    ['a name twice', { acme: [p(), p()] }, 'policies.acme[1].name'],
  ])('refuses %s', async (_label, policies, field) => {
    const json = { orgs: {}, policies };
    const response = await send(`${emu.url}/_emulator/store`, {
      method: 'PUT',
      json,
      dispatcher: emu.agent,
    });
    const errors = { [field]: expect.any(String) };
    expect([response.status, response.body]).toEqual([
      400,
      { message: 'Invalid store document', errors },
    ]);
  });
});
