/**
 * The kosli profile's tags (PATCH /api/v2/tags/{org}/environment/{name}), policy documents (GET
 * and the multipart PUT of /api/v2/policies/{org}) and attaching them to environments (POST and
 * DELETE /api/v2/environments/{org}/{name}/policies), and the documents in the admin store.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { TOKEN, apiClient, entriesOf, errorsOf, multipart, policyForm } from './api-client.ts';
import type { ApiClient } from './api-client.ts';

const NOW_MS = 1_700_000_000_000;
const VALID = { name: 'prod', description: 'Production', type: 'K8S' };
const PAYLOAD = { name: 'baseline', description: 'The baseline', type: 'env', comment: 'first' };
const YAML =
  '_schema: https://kosli.com/schemas/policy/environment/v1\nartifacts:\n  provenance:\n    required: true\n';
const YAML_2 = `${YAML}  trail-compliance:\n    required: true\n`;
const VALIDATION_FAILED = 'Input payload validation failed';
const BY = 'envsync-emulator';

let emu: TestEmulator;
let api: ApiClient;
let nowMs = NOW_MS;

beforeAll(async () => {
  emu = await startTestEmulator({
    profile: 'kosli',
    orgs: ['acme', 'beta'],
    tokens: [{ token: TOKEN, orgs: null }],
    now: () => nowMs,
  });
  api = apiClient(emu);
});
afterAll(() => emu.close());
beforeEach(async () => {
  nowMs = NOW_MS;
  await emu.reset();
  await api.put(VALID);
});

const entry = async (name = 'prod') => entriesOf(await api.list()).find((env) => env.name === name);
const refusal = (field: string) => ({
  message: VALIDATION_FAILED,
  errors: { [field]: expect.any(String) },
});

describe('PATCH /api/v2/tags/{org}/environment/{name}', () => {
  it('sets and removes tags: 200 "OK"; a key set again keeps its place; the timestamps move on a change only', async () => {
    nowMs += 1000;
    const set = await api.tags('prod', { set_tags: { team: 'core', tier: 'gold' } });
    expect([set.status, set.body]).toEqual([200, 'OK']);
    nowMs += 1000;
    await api.tags('prod', {
      set_tags: { team: 'platform', region: 'eu' },
      remove_tags: ['tier', 'never-set'],
    });
    const tags = (await entry())?.tags;
    expect(Object.entries(tags ?? {})).toEqual([
      ['team', 'platform'],
      ['region', 'eu'],
    ]);
    nowMs += 1000;
    expect(
      (await api.tags('prod', { set_tags: { team: 'platform' }, remove_tags: ['x'] })).status,
    ).toBe(200);
    expect(await entry()).toMatchObject({
      last_modified_at: 1_700_000_002,
      last_changed_at: 1_700_000_002,
    });
    expect((await api.read('prod')).body).toMatchObject({ tags });
  });

  it('keeps a key such as __proto__ an ordinary key; takes the longest key and value and an empty value', async () => {
    const body = '{"set_tags": {"__proto__": "x", "constructor": "y"}}';
    const path = '/api/v2/tags/acme/environment/prod';
    const odd = await api.call(path, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(odd.status).toBe(200);
    const tags = (await emu.getStore()).orgs.acme?.[0]?.tags ?? {};
    expect([Object.keys(tags), Object.getPrototypeOf(tags)]).toEqual([
      ['__proto__', 'constructor'],
      Object.prototype,
    ]);
    const longest = { ['k'.repeat(128)]: 'v'.repeat(1024), empty: '' };
    expect(
      (await api.tags('prod', { set_tags: longest, remove_tags: ['__proto__', 'constructor'] }))
        .status,
    ).toBe(200);
    expect((await entry())?.tags).toEqual(longest);
  });

  it.each([
    ['an unknown key', { set_tags: { a: 'b' }, add_tags: {} }, 'add_tags'],
    ['neither key', {}, 'payload'],
    ['set_tags as a list', { set_tags: ['a'] }, 'set_tags'],
    ['a number value', { set_tags: { a: 1 } }, 'set_tags'],
    ['an empty key', { set_tags: { '': 'x' } }, 'set_tags'],
    ['a key over 128 characters', { set_tags: { ['k'.repeat(129)]: 'x' } }, 'set_tags'],
    ['a value over 1024 characters', { set_tags: { k: 'v'.repeat(1025) } }, 'set_tags'],
    ['a number to remove', { remove_tags: [1] }, 'remove_tags'],
    ['a key set and removed', { set_tags: { a: 'b' }, remove_tags: ['a'] }, 'remove_tags'],
    ['a body that is a list', [], 'payload'],
  ])('refuses %s with 400 and changes nothing', async (_label, body, field) => {
    await api.tags('prod', { set_tags: { keep: 'me' } });
    expect((await api.tags('prod', body)).body).toEqual(refusal(field));
    expect((await entry())?.tags).toEqual({ keep: 'me' });
  });

  it('holds at most 100 tags', async () => {
    const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'v']));
    expect((await api.tags('prod', { set_tags: hundred })).status).toBe(200);
    expect((await api.tags('prod', { set_tags: { one: 'more' } })).body).toEqual({
      message: VALIDATION_FAILED,
      errors: { set_tags: 'an environment holds at most 100 tags; this change would leave 101' },
    });
    expect(
      (await api.tags('prod', { set_tags: { one: 'more' }, remove_tags: ['k0'] })).status,
    ).toBe(200);
  });

  it('answers 404 for an unknown or archived environment, or another kind of resource', async () => {
    expect((await api.tags('nope', { set_tags: { a: 'b' } })).status).toBe(404);
    await api.archive('prod');
    expect((await api.tags('prod', { set_tags: { a: 'b' } })).body).toEqual({
      message: "Environment named 'prod' in organization 'acme' has been archived",
    });
    const flow = await api.call('/api/v2/tags/acme/flow/prod', {
      method: 'PATCH',
      json: { set_tags: { a: 'b' } },
    });
    expect(flow.status).toBe(404);
  });
});

describe('PUT and GET /api/v2/policies/{org}[/{name}]', () => {
  const version = (n: number, yaml: string, at: number) => ({
    version: n,
    policy_yaml: yaml,
    timestamp: at,
    created_by: BY,
  });

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
    expect([changed.status, changed.body]).toEqual([
      200,
      { ...document, versions: [...document.versions, version(2, YAML_2, 1_700_000_001)] },
    ]);
    // Back to the first text is a change too, and so is a line break.
    await api.putPolicy(policyForm(PAYLOAD, YAML));
    const last = await api.putPolicy(policyForm(PAYLOAD, `${YAML}\n`));
    expect(
      (last.body as { versions: { version: number }[] }).versions.map((item) => item.version),
    ).toEqual([1, 2, 3, 4]);
  });

  it('changes the description alone without a version; keeps it when left out; a new one starts empty', async () => {
    await api.putPolicy(policyForm(PAYLOAD, YAML));
    expect(
      (await api.putPolicy(policyForm({ ...PAYLOAD, description: 'Renamed' }, YAML))).body,
    ).toMatchObject({
      description: 'Renamed',
      versions: [{ version: 1 }],
    });
    const { description: _description, ...bare } = PAYLOAD;
    expect((await api.putPolicy(policyForm(bare, YAML_2))).body).toMatchObject({
      description: 'Renamed',
      versions: [{}, {}],
    });
    expect((await api.putPolicy(policyForm({ ...bare, name: 'other' }, YAML))).body).toMatchObject({
      description: '',
    });
  });

  it('takes what a standard FormData client sends; lists by name (code units), per org', async () => {
    const form = new FormData();
    form.append('payload', JSON.stringify({ ...PAYLOAD, name: 'zeta' }));
    form.append('policy_file', new Blob([YAML], { type: 'application/x-yaml' }), 'zeta.yaml');
    const headers = { authorization: `Bearer ${TOKEN}` };
    expect(
      (await fetch(`${emu.url}/api/v2/policies/acme`, { method: 'PUT', headers, body: form }))
        .status,
    ).toBe(201);
    for (const name of ['alpha', 'Alpha'])
      await api.putPolicy(policyForm({ ...PAYLOAD, name }, YAML));
    await api.putPolicy(policyForm({ ...PAYLOAD, name: 'only-beta' }, YAML), 'beta');
    const names = (await api.getPolicies()).body as { name: string }[];
    expect(names.map((document) => document.name)).toEqual(['Alpha', 'alpha', 'zeta']);
    expect((await api.getPolicies('only-beta')).body).toEqual({
      message: "Policy named 'only-beta' does not exist for organization 'acme'",
    });
    expect((await api.getPolicies('%E0%A4%A')).status).toBe(404);
  });

  it.each([
    ['a body that is not multipart', 'just some text', 'payload'],
    ['a body cut short', policyForm(PAYLOAD, YAML).body.subarray(0, 60), 'payload'],
    ['an unknown payload key', policyForm({ ...PAYLOAD, owner: 'me' }, YAML), 'payload.owner'],
    ['no name', policyForm({ type: 'env' }, YAML), 'payload.name'],
    ['a bad name', policyForm({ ...PAYLOAD, name: '-x' }, YAML), 'payload.name'],
    ['another type', policyForm({ ...PAYLOAD, type: 'artifact' }, YAML), 'payload.type'],
    [
      'a description not a string',
      policyForm({ ...PAYLOAD, description: 1 }, YAML),
      'payload.description',
    ],
    ['a comment not a string', policyForm({ ...PAYLOAD, comment: [] }, YAML), 'payload.comment'],
    [
      'a payload not JSON',
      multipart([
        { name: 'payload', value: '{' },
        { name: 'policy_file', value: YAML, filename: 'p.yaml' },
      ]),
      'payload',
    ],
    [
      'a payload that is a list',
      policyForm([] as unknown as Record<string, unknown>, YAML),
      'payload',
    ],
    [
      'no payload',
      multipart([{ name: 'policy_file', value: YAML, filename: 'p.yaml' }]),
      'payload',
    ],
    [
      'a payload as a file',
      multipart([
        { name: 'payload', value: '{}', filename: 'p.json' },
        { name: 'policy_file', value: YAML, filename: 'p.yaml' },
      ]),
      'payload',
    ],
    [
      'no policy file',
      multipart([{ name: 'payload', value: JSON.stringify(PAYLOAD) }]),
      'policy_file',
    ],
    [
      'a policy file as a plain field',
      multipart([
        { name: 'payload', value: JSON.stringify(PAYLOAD) },
        { name: 'policy_file', value: YAML },
      ]),
      'policy_file',
    ],
    ['an empty policy file', policyForm(PAYLOAD, '  \n'), 'policy_file'],
    [
      'a policy file not UTF-8',
      policyForm(PAYLOAD, Buffer.from([0x61, 0xff, 0x62])),
      'policy_file',
    ],
    ['an unknown part', policyForm(PAYLOAD, YAML, [{ name: 'owner', value: 'me' }]), 'owner'],
    [
      'a second policy file',
      policyForm(PAYLOAD, YAML, [{ name: 'policy_file', value: YAML, filename: 'b.yaml' }]),
      'policy_file',
    ],
  ])('answers 400 naming the problem: %s', async (_label, form, field) => {
    const body = typeof form === 'string' || Buffer.isBuffer(form) ? form : form.body;
    const response = await api.call('/api/v2/policies/acme', {
      method: 'PUT',
      headers: { 'content-type': 'multipart/form-data; boundary=envsync-test-boundary-7f3a' },
      body,
    });
    expect(response.body).toEqual(refusal(field));
    expect((await api.getPolicies()).body).toEqual([]);
  });

  it('lists every problem at once; 415 for another type, 413 over 1 MiB', async () => {
    const form = multipart([
      { name: 'payload', value: JSON.stringify({ name: 7, type: 'x', extra: 1 }) },
    ]);
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
    for (const name of ['baseline', 'sox', 'pci'])
      await api.putPolicy(policyForm({ ...PAYLOAD, name }, YAML));
  });

  it('attaches in the order given, each once; a repeat changes no timestamp', async () => {
    expect((await entry())?.policies).toBeNull();
    nowMs += 1000;
    const response = await api.policies('POST', 'prod', {
      policy_names: ['sox', 'baseline', 'sox'],
    });
    expect([response.status, response.body]).toEqual([200, 'OK']);
    nowMs += 1000;
    await api.policies('POST', 'prod', { policy_names: ['pci', 'sox'] });
    nowMs += 1000;
    await api.policies('POST', 'prod', { policy_names: ['sox'] });
    expect(await entry()).toMatchObject({
      policies: ['sox', 'baseline', 'pci'],
      last_changed_at: 1_700_000_002,
    });
    expect((await api.read('prod')).body).toMatchObject({ policies: ['sox', 'baseline', 'pci'] });
  });

  it('detaches, ignoring names not attached; with the last one gone, none and compliance unknown', async () => {
    await api.policies('POST', 'prod', { policy_names: ['sox', 'pci'] });
    const store = await emu.getStore();
    await emu.putStore({
      ...store,
      orgs: { acme: (store.orgs.acme ?? []).map((env) => ({ ...env, state: true })) },
    });
    expect((await api.policies('DELETE', 'prod', { policy_names: ['sox', 'never'] })).body).toBe(
      'OK',
    );
    expect(await entry()).toMatchObject({ policies: ['pci'], state: true });
    await api.policies('DELETE', 'prod', { policy_names: ['pci'] });
    expect(await entry()).toMatchObject({ policies: null, state: null });
  });

  it('refuses a policy with no document in the org, naming each, and attaches none', async () => {
    await api.putPolicy(policyForm({ ...PAYLOAD, name: 'only-beta' }, YAML), 'beta');
    expect(
      (await api.policies('POST', 'prod', { policy_names: ['sox', 'ghost', 'only-beta'] })).body,
    ).toEqual({
      message: VALIDATION_FAILED,
      errors: {
        policy_names:
          "policy 'ghost' does not exist in organization 'acme'; policy 'only-beta' does not exist in organization 'acme'",
      },
    });
    expect((await entry())?.policies).toBeNull();
  });

  it.each([
    ['an unknown key', { policy_names: ['sox'], force: true }, 'force'],
    ['no policy_names', {}, 'policy_names'],
    ['an empty list', { policy_names: [] }, 'policy_names'],
    ['a string', { policy_names: 'sox' }, 'policy_names'],
    ['a number in the list', { policy_names: ['sox', 3] }, 'policy_names'],
    ['a bad name', { policy_names: ['-sox'] }, 'policy_names'],
    ['an array body', [], 'payload'],
  ])('refuses %s with 400, for attach and detach alike', async (_label, body, field) => {
    for (const method of ['POST', 'DELETE'] as const) {
      expect((await api.policies(method, 'prod', body)).body).toEqual(refusal(field));
    }
  });

  it('answers 404 for an unknown or archived environment, 415 for a body not JSON', async () => {
    expect((await api.policies('POST', 'nope', { policy_names: ['sox'] })).status).toBe(404);
    const text = {
      method: 'POST' as const,
      headers: { 'content-type': 'text/plain' },
      body: '{"policy_names":["sox"]}',
    };
    expect((await api.call('/api/v2/environments/acme/prod/policies', text)).status).toBe(415);
    await api.archive('prod');
    expect((await api.policies('DELETE', 'prod', { policy_names: ['sox'] })).body).toEqual({
      message: "Environment named 'prod' in organization 'acme' has been archived",
    });
  });

  it('leaves policies given in an environment PUT as they are: they need no document', async () => {
    await api.put({ ...VALID, policies: ['from-put'] });
    await api.policies('POST', 'prod', { policy_names: ['sox'] });
    expect((await entry())?.policies).toEqual(['from-put', 'sox']);
  });
});

describe('policy documents in the admin store', () => {
  it('fills in a seed, round-trips it, and attaches and versions from it; reset empties it', async () => {
    const seeded = await emu.putStore({
      orgs: { acme: [VALID] },
      policies: {
        acme: [
          {
            name: 'seeded',
            created_at: 5,
            versions: [
              { policy_yaml: 'a: 1\n' },
              { version: 4, policy_yaml: 'a: 2\n', timestamp: 9 },
            ],
          },
        ],
      },
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

  function version(n: number, yaml: string, at: number) {
    return { version: n, policy_yaml: yaml, timestamp: at, created_by: BY };
  }

  it.each([
    ['policies not an object', [], 'policies'],
    ['a bad org name', { '-x': [] }, 'policies.-x'],
    ['an org not a list', { acme: {} }, 'policies.acme'],
    [
      'an unknown field',
      { acme: [{ name: 'p', versions: [{ policy_yaml: '' }], x: 1 }] },
      'policies.acme[0].x',
    ],
    ['no versions', { acme: [{ name: 'p', versions: [] }] }, 'policies.acme[0].versions'],
    [
      'a version without YAML',
      { acme: [{ name: 'p', versions: [{}] }] },
      'policies.acme[0].versions[0].policy_yaml',
    ],
    [
      'versions out of order',
      {
        acme: [
          {
            name: 'p',
            versions: [
              { version: 2, policy_yaml: '' },
              { version: 2, policy_yaml: '' },
            ],
          },
        ],
      },
      'policies.acme[0].versions[1].version',
    ],
    [
      'an unknown version field',
      { acme: [{ name: 'p', versions: [{ policy_yaml: '', comment: 'c' }] }] },
      'policies.acme[0].versions[0].comment',
    ],
    [
      'a name twice',
      {
        acme: [
          { name: 'p', versions: [{ policy_yaml: '' }] },
          { name: 'p', versions: [{ policy_yaml: '' }] },
        ],
      },
      'policies.acme[1].name',
    ],
  ])('refuses %s', async (_label, policies, field) => {
    const response = await send(`${emu.url}/_emulator/store`, {
      method: 'PUT',
      json: { orgs: {}, policies },
      dispatcher: emu.agent,
    });
    expect([response.status, response.body]).toEqual([
      400,
      { message: 'Invalid store document', errors: { [field]: expect.any(String) } },
    ]);
  });
});
