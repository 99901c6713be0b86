/**
 * The kosli profile's policy documents (GET and the multipart PUT of /api/v2/policies/{org}) and
 * attaching and detaching them (POST and DELETE /api/v2/environments/{org}/{name}/policies).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
});

/** The attached policies the listing shows for `name`. */
async function listedPolicies(name: string): Promise<unknown> {
  return entriesOf(await api.list()).find((env) => env.name === name)?.policies;
}

describe('PUT /api/v2/policies/{org}', () => {
  it('creates a document with version 1: 201 and the document', async () => {
    const response = await api.putPolicy(policyForm(PAYLOAD, YAML));
    expect(response.status).toBe(201);
    const document = {
      name: 'baseline',
      description: 'The baseline',
      created_at: 1_700_000_000,
      versions: [
        { version: 1, policy_yaml: YAML, timestamp: 1_700_000_000, created_by: 'envsync-emulator' },
      ],
    };
    expect(response.body).toEqual(document);
    expect((await api.getPolicies('baseline')).body).toEqual(document);
  });

  it('makes a new version only when the YAML changes', async () => {
    await api.putPolicy(policyForm(PAYLOAD, YAML));
    nowMs += 1000;
    const same = await api.putPolicy(policyForm(PAYLOAD, YAML));
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ versions: [{ version: 1 }] });
    nowMs += 1000;
    const changed = await api.putPolicy(policyForm({ ...PAYLOAD, comment: 'second' }, YAML_2));
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({
      name: 'baseline',
      description: 'The baseline',
      created_at: 1_700_000_000,
      versions: [
        { version: 1, policy_yaml: YAML, timestamp: 1_700_000_000, created_by: 'envsync-emulator' },
        {
          version: 2,
          policy_yaml: YAML_2,
          timestamp: 1_700_000_002,
          created_by: 'envsync-emulator',
        },
      ],
    });
    // Back to the first text is a change of content too: version 3, the old ones untouched.
    const back = await api.putPolicy(policyForm(PAYLOAD, YAML));
    expect(back.body).toMatchObject({
      versions: [
        { version: 1, policy_yaml: YAML },
        { version: 2, policy_yaml: YAML_2 },
        { version: 3, policy_yaml: YAML },
      ],
    });
  });

  it('counts one changed byte as new content', async () => {
    await api.putPolicy(policyForm(PAYLOAD, YAML));
    const response = await api.putPolicy(policyForm(PAYLOAD, `${YAML}\n`));
    expect(response.body).toMatchObject({ versions: [{ version: 1 }, { version: 2 }] });
  });

  it('changes the description alone without a new version', async () => {
    await api.putPolicy(policyForm(PAYLOAD, YAML));
    const response = await api.putPolicy(policyForm({ ...PAYLOAD, description: 'Renamed' }, YAML));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      description: 'Renamed',
      versions: [{ version: 1, policy_yaml: YAML }],
    });
  });

  it('keeps the description when the payload leaves it out', async () => {
    await api.putPolicy(policyForm(PAYLOAD, YAML));
    const { description: _description, ...withoutDescription } = PAYLOAD;
    const response = await api.putPolicy(policyForm(withoutDescription, YAML_2));
    expect(response.body).toMatchObject({ description: 'The baseline', versions: [{}, {}] });
    const fresh = await api.putPolicy(policyForm({ ...withoutDescription, name: 'other' }, YAML));
    expect(fresh.body).toMatchObject({ description: '' });
  });

  it('accepts what a standard FormData client sends', async () => {
    const form = new FormData();
    form.append('payload', JSON.stringify(PAYLOAD));
    form.append('policy_file', new Blob([YAML], { type: 'application/x-yaml' }), 'baseline.yaml');
    const response = await fetch(`${emu.url}/api/v2/policies/acme`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: form,
    });
    expect(response.status).toBe(201);
    expect((await api.getPolicies('baseline')).body).toMatchObject({
      versions: [{ policy_yaml: YAML }],
    });
  });

  it.each([
    ['a body that is not multipart at all', 'just some text'],
    ['a body cut short', policyForm(PAYLOAD, YAML).body.subarray(0, 60).toString()],
    ['a body without the closing boundary', '--envsync-test-boundary-7f3a\r\nContent-Disp'],
  ])('answers 400 to %s', async (_label, body) => {
    const response = await api.call('/api/v2/policies/acme', {
      method: 'PUT',
      headers: { 'content-type': 'multipart/form-data; boundary=envsync-test-boundary-7f3a' },
      body,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: VALIDATION_FAILED,
      errors: { payload: expect.stringContaining('not valid multipart/form-data') },
    });
    expect((await api.getPolicies()).body).toEqual([]);
  });

  it('answers 400 to a multipart type without a boundary', async () => {
    const form = policyForm(PAYLOAD, YAML);
    const response = await api.call('/api/v2/policies/acme', {
      method: 'PUT',
      headers: { 'content-type': 'multipart/form-data' },
      body: form.body,
    });
    expect(response.status).toBe(400);
    expect(errorsOf(response)).toEqual({ payload: expect.any(String) });
  });

  it.each([
    ['unknown payload key', policyForm({ ...PAYLOAD, owner: 'me' }, YAML), 'payload.owner'],
    ['missing name', policyForm({ type: 'env' }, YAML), 'payload.name'],
    ['bad name', policyForm({ ...PAYLOAD, name: '-x' }, YAML), 'payload.name'],
    ['missing type', policyForm({ name: 'p' }, YAML), 'payload.type'],
    ['another type', policyForm({ ...PAYLOAD, type: 'artifact' }, YAML), 'payload.type'],
    [
      'description not a string',
      policyForm({ ...PAYLOAD, description: 1 }, YAML),
      'payload.description',
    ],
    ['comment not a string', policyForm({ ...PAYLOAD, comment: [] }, YAML), 'payload.comment'],
    [
      'payload not JSON',
      multipart([
        { name: 'payload', value: '{' },
        { name: 'policy_file', value: YAML, filename: 'p.yaml' },
      ]),
      'payload',
    ],
    ['payload an array', policyForm([] as unknown as Record<string, unknown>, YAML), 'payload'],
    [
      'no payload',
      multipart([{ name: 'policy_file', value: YAML, filename: 'p.yaml' }]),
      'payload',
    ],
    [
      'payload as a file',
      multipart([
        { name: 'payload', value: JSON.stringify(PAYLOAD), filename: 'p.json' },
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
      'policy file as a plain field',
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
    const response = await api.putPolicy(form);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: VALIDATION_FAILED,
      errors: { [field]: expect.any(String) },
    });
    expect((await api.getPolicies()).body).toEqual([]);
  });

  it('lists every problem at once', async () => {
    const response = await api.putPolicy(
      multipart([{ name: 'payload', value: JSON.stringify({ name: 7, type: 'x', extra: 1 }) }]),
    );
    expect(Object.keys(errorsOf(response) ?? {}).toSorted()).toEqual([
      'payload.extra',
      'payload.name',
      'payload.type',
      'policy_file',
    ]);
  });

  it.each([
    ['application/json', 'application/json'],
    ['no type', undefined],
  ])('answers 415 to %s', async (_label, type) => {
    const response = await api.call('/api/v2/policies/acme', {
      method: 'PUT',
      ...(type === undefined ? {} : { headers: { 'content-type': type } }),
      body: JSON.stringify(PAYLOAD),
    });
    expect(response.status).toBe(415);
  });

  it('answers 413 to a body over 1 MiB, by its declared size', async () => {
    const response = await api.putPolicy(policyForm(PAYLOAD, 'x'.repeat(1024 * 1024)));
    expect(response.status).toBe(413);
    expect((await api.getPolicies()).body).toEqual([]);
  });

  it('keeps documents per org', async () => {
    await api.putPolicy(policyForm(PAYLOAD, YAML), 'beta');
    expect((await api.getPolicies()).body).toEqual([]);
    expect((await api.getPolicies('baseline')).status).toBe(404);
    expect((await api.getPolicies(undefined, 'beta')).body).toEqual([
      expect.objectContaining({ name: 'baseline' }),
    ]);
  });
});

describe('GET /api/v2/policies/{org}[/{name}]', () => {
  it('lists the documents sorted by name, each with its versions', async () => {
    for (const name of ['zeta', 'Alpha', 'alpha']) {
      await api.putPolicy(policyForm({ ...PAYLOAD, name }, YAML));
    }
    await api.putPolicy(policyForm({ ...PAYLOAD, name: 'zeta' }, YAML_2));
    const response = await api.getPolicies();
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      expect.objectContaining({
        name: 'Alpha',
        versions: [expect.objectContaining({ version: 1 })],
      }),
      expect.objectContaining({ name: 'alpha' }),
      expect.objectContaining({
        name: 'zeta',
        versions: [
          expect.objectContaining({ version: 1 }),
          expect.objectContaining({ version: 2 }),
        ],
      }),
    ]);
  });

  it('answers 404 for an unknown policy', async () => {
    const response = await api.getPolicies('nope');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      message: "Policy named 'nope' does not exist for organization 'acme'",
    });
    expect((await api.getPolicies('%E0%A4%A')).status).toBe(404);
  });
});

describe('POST and DELETE /api/v2/environments/{org}/{name}/policies', () => {
  beforeEach(async () => {
    await api.put(VALID);
    for (const name of ['baseline', 'sox', 'pci']) {
      await api.putPolicy(policyForm({ ...PAYLOAD, name }, YAML));
    }
  });

  it('attaches: 200 "OK", the listing and the read show the names in the order attached', async () => {
    expect(await listedPolicies('prod')).toBeNull();
    const response = await api.policies('POST', 'prod', { policy_names: ['sox', 'baseline'] });
    expect(response.status).toBe(200);
    expect(response.body).toBe('OK');
    expect(await listedPolicies('prod')).toEqual(['sox', 'baseline']);
    expect((await api.read('prod')).body).toMatchObject({ policies: ['sox', 'baseline'] });
  });

  it('is idempotent: an attached name stays once, and a repeat moves no timestamp', async () => {
    await api.policies('POST', 'prod', { policy_names: ['sox'] });
    nowMs += 1000;
    await api.policies('POST', 'prod', { policy_names: ['pci', 'sox', 'pci'] });
    const entry = entriesOf(await api.list()).find((env) => env.name === 'prod');
    expect(entry).toMatchObject({
      policies: ['sox', 'pci'],
      last_modified_at: 1_700_000_001,
      last_changed_at: 1_700_000_001,
    });
    nowMs += 1000;
    expect((await api.policies('POST', 'prod', { policy_names: ['sox'] })).status).toBe(200);
    expect(entriesOf(await api.list()).find((env) => env.name === 'prod')).toMatchObject({
      last_modified_at: 1_700_000_001,
      last_changed_at: 1_700_000_001,
    });
  });

  it('detaches, ignoring names that are not attached; none left lists as null', async () => {
    await api.policies('POST', 'prod', { policy_names: ['sox', 'pci'] });
    const response = await api.policies('DELETE', 'prod', { policy_names: ['sox', 'never'] });
    expect(response.status).toBe(200);
    expect(response.body).toBe('OK');
    expect(await listedPolicies('prod')).toEqual(['pci']);
    await api.policies('DELETE', 'prod', { policy_names: ['pci'] });
    expect(await listedPolicies('prod')).toBeNull();
    expect((await api.read('prod')).body).toMatchObject({ policies: null });
  });

  it('refuses to attach a policy with no document, naming each, and attaches none', async () => {
    const response = await api.policies('POST', 'prod', {
      policy_names: ['sox', 'ghost', 'phantom'],
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: VALIDATION_FAILED,
      errors: {
        policy_names:
          "policy 'ghost' does not exist in organization 'acme'; policy 'phantom' does not exist in organization 'acme'",
      },
    });
    expect(await listedPolicies('prod')).toBeNull();
  });

  it("does not attach another org's policy", async () => {
    await api.putPolicy(policyForm({ ...PAYLOAD, name: 'only-beta' }, YAML), 'beta');
    const response = await api.policies('POST', 'prod', { policy_names: ['only-beta'] });
    expect(response.status).toBe(400);
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
      const response = await api.policies(method, 'prod', body);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        message: VALIDATION_FAILED,
        errors: { [field]: expect.any(String) },
      });
    }
    expect(await listedPolicies('prod')).toBeNull();
  });

  it('answers 404 for an environment that does not exist or has been archived', async () => {
    const unknown = await api.policies('POST', 'nope', { policy_names: ['sox'] });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({
      message: "Environment named 'nope' does not exist for organization 'acme'",
    });
    await api.archive('prod');
    const archived = await api.policies('DELETE', 'prod', { policy_names: ['sox'] });
    expect(archived.status).toBe(404);
    expect(archived.body).toEqual({
      message: "Environment named 'prod' in organization 'acme' has been archived",
    });
  });

  it('answers 415 to a body that is not JSON', async () => {
    const response = await api.call('/api/v2/environments/acme/prod/policies', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ policy_names: ['sox'] }),
    });
    expect(response.status).toBe(415);
  });

  it('leaves policies given in an environment PUT as they are: they need no document', async () => {
    await api.put({ ...VALID, policies: ['from-put'] });
    await api.policies('POST', 'prod', { policy_names: ['sox'] });
    expect(await listedPolicies('prod')).toEqual(['from-put', 'sox']);
  });
});

describe('policies in the admin store', () => {
  it('round-trips documents and versions, and seeds them for attaching', async () => {
    const seeded = await emu.putStore({
      orgs: { acme: [VALID] },
      policies: {
        acme: [
          {
            name: 'seeded',
            description: 'From a seed',
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
          description: 'From a seed',
          created_at: 5,
          versions: [
            { version: 1, policy_yaml: 'a: 1\n', timestamp: 5, created_by: 'envsync-emulator' },
            { version: 4, policy_yaml: 'a: 2\n', timestamp: 9, created_by: 'envsync-emulator' },
          ],
        },
      ],
    });
    expect((await api.policies('POST', 'prod', { policy_names: ['seeded'] })).status).toBe(200);
    const next = await api.putPolicy(policyForm({ ...PAYLOAD, name: 'seeded' }, 'a: 3\n'));
    expect(next.body).toMatchObject({ versions: [{ version: 1 }, { version: 4 }, { version: 5 }] });
    const store = await emu.getStore();
    await emu.reset();
    expect(await emu.putStore(store)).toEqual(store);
  });

  it('writes an empty policies object and loads a document without one', async () => {
    expect((await emu.getStore()).policies).toEqual({});
    const loaded = await emu.putStore({ version: 1, orgs: { acme: [VALID] } });
    expect(loaded.policies).toEqual({});
    expect((await api.getPolicies()).body).toEqual([]);
  });

  it('empties the policies on reset', async () => {
    await api.putPolicy(policyForm(PAYLOAD, YAML));
    await emu.reset();
    expect((await api.getPolicies()).body).toEqual([]);
  });

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
      'a bad name',
      { acme: [{ name: '', versions: [{ policy_yaml: '' }] }] },
      'policies.acme[0].name',
    ],
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
      'a version of 0',
      { acme: [{ name: 'p', versions: [{ version: 0, policy_yaml: '' }] }] },
      'policies.acme[0].versions[0].version',
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
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: 'Invalid store document',
      errors: { [field]: expect.any(String) },
    });
  });
});

describe('policies and tags in the --data file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'envsync-policies-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('keeps documents, versions, tags and attached policies across a restart', async () => {
    const options = {
      profile: 'kosli' as const,
      dataFile: join(dir, 'store.json'),
      tokens: [{ token: TOKEN, orgs: null }],
    };
    const first = await startTestEmulator(options);
    const firstApi = apiClient(first);
    await firstApi.put(VALID);
    await firstApi.putPolicy(policyForm(PAYLOAD, YAML));
    await firstApi.putPolicy(policyForm(PAYLOAD, YAML_2));
    await firstApi.policies('POST', 'prod', { policy_names: ['baseline'] });
    await firstApi.tags('prod', { set_tags: { team: 'core' } });
    const before = await first.getStore();
    await first.close();
    expect(before.policies?.acme?.[0]?.versions).toHaveLength(2);

    const second = await startTestEmulator(options);
    try {
      const secondApi = apiClient(second);
      expect(await second.getStore()).toEqual(before);
      expect((await secondApi.read('prod')).body).toMatchObject({
        policies: ['baseline'],
        tags: { team: 'core' },
      });
      const third = await secondApi.putPolicy(policyForm(PAYLOAD, `${YAML_2}# v3\n`));
      expect(third.body).toMatchObject({ versions: [{}, {}, { version: 3 }] });
    } finally {
      await second.close();
    }
  });
});
