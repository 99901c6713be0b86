/**
 * The `kosli` profile's upsert and listing: nine types, the published optional fields (each may be
 * null), the retired `include_scaling`, the name rule, members of logical environments, the
 * listing's fields and pages, and the read of one environment.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.ts';
import { ConfigError } from '../../src/runtime/errors.ts';
import type { JsonResponse } from '../helpers/emulator.ts';
import { entriesOf, exactly, NOW_MS, RULE, startKosli, VALID } from './api-client.ts';
import { VALIDATION_FAILED } from './api-client.ts';

const NINE = 'K8S, S3, logical, ECS, lambda, server, docker, azure-apps, cloud-run';
const LISTING_FIELDS = (
  'description include_scaling included_environments last_changed_at last_modified_at ' +
  'last_reported_at name org policies state tags type'
).split(' ');

let nowMs = NOW_MS;
const { emu, api } = await startKosli(() => nowMs);
afterAll(() => emu.close());
beforeEach(async () => {
  nowMs = NOW_MS + 250;
  await emu.reset();
});

const stored = async (name: string) =>
  (await emu.getStore()).orgs.acme?.find((env) => env.name === name && !env.archived);

function expectRefused(response: JsonResponse, field: string, text: string | RegExp) {
  expect([response.status, response.body]).toEqual([
    400,
    { message: VALIDATION_FAILED, errors: { [field]: expect.stringMatching(exactly(text)) } },
  ]);
}

describe('kosli PUT', () => {
  it.each(NINE.split(', '))(
    'creates and updates an environment of type %s: 201 "OK"',
    async (type) => {
      const [created, updated] = [
        await api.put({ ...VALID, type }),
        await api.put({ ...VALID, type }),
      ];
      expect([created.status, updated.status, updated.body]).toEqual([201, 201, 'OK']);
    },
  );

  it('ignores description "" on an update (a create takes it) and applies the other fields', async () => {
    await api.put({ ...VALID, name: 'empty', description: '' });
    await api.put(VALID);
    const update = { description: '', type: 'S3', require_provenance: true, policies: ['p'] };
    await api.put({ ...VALID, ...update });
    expect(await stored('empty')).toMatchObject({ description: '' });
    expect(await stored('prod')).toMatchObject({ ...update, description: 'Production' });
  });

  it('takes include_scaling true and keeps it false, on a create and an update (the setting is retired)', async () => {
    expect((await api.put({ ...VALID, include_scaling: true })).status).toBe(201);
    expect((await api.put({ ...VALID, include_scaling: true })).status).toBe(201);
    expect(await stored('prod')).toMatchObject({ include_scaling: false });
    expect(entriesOf(await api.list())).toEqual([
      expect.objectContaining({ include_scaling: false }),
    ]);
  });

  it('reads null for every optional field as "not given": defaults on a create, kept on an update', async () => {
    const nulls = Object.fromEntries(
      ['include_scaling', 'require_provenance', 'included_environments', 'policies'].map((key) => [
        key,
        null,
      ]),
    );
    expect((await api.put({ ...VALID, ...nulls })).status).toBe(201);
    expect((await api.put({ ...VALID, ...nulls, name: 'view', type: 'logical' })).status).toBe(201);
    expect(await stored('prod')).toMatchObject({
      require_provenance: false,
      policies: [],
      included_environments: null,
    });
    await api.put({ ...VALID, name: 'member' });
    const kept = { require_provenance: true, policies: ['p1'], included_environments: ['member'] };
    await api.put({ name: 'view', type: 'logical', description: 'v', ...kept });
    for (const update of [{}, nulls]) {
      const view = { name: 'view', type: 'logical', description: 'new', ...update };
      expect((await api.put(view)).status).toBe(201);
      expect(await stored('view')).toMatchObject({ description: 'new', ...kept });
    }
  });

  it('moves last_modified_at on every PUT and last_changed_at only when a field changes', async () => {
    await api.put({ ...VALID, require_provenance: true });
    nowMs += 1000;
    await api.put({ ...VALID, require_provenance: null });
    expect(await stored('prod')).toMatchObject({
      last_modified_at: 1_700_000_001.25,
      last_changed_at: 1_700_000_000.25,
    });
    nowMs += 1000;
    await api.put({ ...VALID, require_provenance: false });
    expect(await stored('prod')).toMatchObject({ last_changed_at: 1_700_000_002.25 });
  });

  it.each([
    [{ require_provenance: 'yes' }, 'must be a boolean, got a string'],
    [{ include_scaling: 1 }, 'must be a boolean, got a number'],
    [{ policies: 'p1' }, 'must be an array of strings or null, got a string'],
    [{ description: null }, 'must be a string, got null'],
    [{ name: null }, 'must be a string, got null'],
    [{ type: 'ecs' }, `'ecs' is not one of ${NINE}`],
    [{ tags: {} }, 'unknown field'],
    [{ last_modified_at: 1 }, 'unknown field'],
    ...['a~b', '~a', 'a b', '-a', '.a', '_a', 'a!'].map(
      (name) => [{ name }, `'${name}' ${RULE}`] as const,
    ),
  ] as const)('refuses %j with 400 naming the field', async (extra, text) => {
    expectRefused(await api.put({ ...VALID, ...extra }), Object.keys(extra)[0] ?? '', text);
    expect((await emu.getStore()).orgs).toEqual({});
  });

  it.each(['name', 'type', 'description'])('requires %s', async (field) => {
    expectRefused(await api.put({ ...VALID, [field]: undefined }), field, 'is required');
  });
});

describe('the name rule in paths and options', () => {
  it('answers 400 with the rule for an environment name in a path, and 404 for such an org', async () => {
    await emu.putStore({ orgs: { acme: [{ ...VALID, name: 'old~name' }] } });
    // Seeded under the April rule: listed, never addressed.
    expect(entriesOf(await api.list()).map((env) => env.name)).toEqual(['old~name']);
    for (const path of ['old~name', 'old%7Ename', 'old~name/archive']) {
      const method = path.endsWith('archive') ? 'PUT' : 'GET';
      const response = await api.call(`/api/v2/environments/acme/${path}`, { method });
      const message = `Environment name 'old~name' ${RULE}`;
      expect([response.status, response.body]).toEqual([400, { message }]);
    }
    const org = await api.list(undefined, 'acme~eu');
    const message = "Organization 'acme~eu' does not exist";
    expect([org.status, org.body]).toEqual([404, { message }]);
  });

  it.each(['spec', 'kosli'] as const)(
    'refuses an org or a token org with "~" at start (%s)',
    async (profile) => {
      const started = [{ orgs: ['a~b'] }, { tokens: [{ token: 't', orgs: ['a~b'] }] }];
      for (const options of started) {
        await expect(startEmulator({ profile, port: 0, ...options })).rejects.toThrow(ConfigError);
      }
    },
  );
});

describe('kosli listing and the read of one environment', () => {
  it('lists a bare array sorted by name, every entry with exactly the listing fields', async () => {
    await api.put({ ...VALID, name: 'zeta', type: 'logical', policies: ['p1'] });
    nowMs += 1500;
    await api.put({ ...VALID, name: 'alpha', require_provenance: true });
    const alpha = { org: 'acme', ...VALID, name: 'alpha', include_scaling: false, policies: null };
    const times = { last_modified_at: 1_700_000_001.75, last_changed_at: 1_700_000_001.75 };
    const empty = { tags: {}, state: null, last_reported_at: null, included_environments: null };
    expect((await api.list()).body).toEqual([
      { ...alpha, ...times, ...empty },
      expect.objectContaining({ name: 'zeta', policies: ['p1'], included_environments: [] }),
    ]);
    for (const entry of entriesOf(await api.list('page=1'))) {
      expect(Object.keys(entry).toSorted()).toEqual(LISTING_FIELDS);
    }
  });

  it('reads one environment: the listing fields plus require_provenance; 404 for an unknown name', async () => {
    await api.put({ ...VALID, require_provenance: true });
    const one = await api.read('prod');
    expect(one.status).toBe(200);
    const fields = [...LISTING_FIELDS, 'require_provenance'].toSorted();
    expect(Object.keys(one.body as object).toSorted()).toEqual(fields);
    expect(one.body).toMatchObject({ name: 'prod', require_provenance: true, state: null });
    const unknown = await api.read('nope');
    const message = "Environment named 'nope' does not exist for organization 'acme'";
    expect([unknown.status, unknown.body]).toEqual([404, { message }]);
  });

  it('shows the state and the attached policies the store holds (null for none)', async () => {
    const dev = { ...VALID, name: 'dev', state: false, policies: null };
    await emu.putStore({ orgs: { acme: [{ ...VALID, state: true, policies: ['p'] }, dev] } });
    const shown = entriesOf(await api.list()).map(({ name, state, policies }) => [
      name,
      state,
      policies,
    ]);
    expect(shown).toEqual([
      ['dev', false, null],
      ['prod', true, ['p']],
    ]);
    expect((await api.read('dev')).body).toMatchObject({ state: false });
  });

  it('pages with page and per_page: the envelope, a partial last page, an empty page past the end', async () => {
    const names = Array.from({ length: 45 }, (_, i) => `env-${String(i).padStart(2, '0')}`);
    await emu.putStore({ orgs: { acme: names.toReversed().map((name) => ({ ...VALID, name })) } });
    const second = names
      .slice(20, 40)
      .map((name) => expect.objectContaining({ name, org: 'acme' }));
    const counts = { page: 2, per_page: 20, total_pages: 3, total_count: 45 };
    expect((await api.list('page=2&per_page=20')).body).toEqual({
      ...counts,
      environments: second,
      _links: { self: { href: `${emu.url}/api/v2/environments/acme?page=2&per_page=20` } },
    });
    const third = entriesOf(await api.list('page=3&per_page=20'));
    expect(third.map((env) => env.name)).toEqual(names.slice(40));
    const past = (await api.list('page=4&per_page=20')).body;
    expect(past).toMatchObject({ page: 4, environments: [] });
    expect((await api.list('page=1')).body).toMatchObject({ per_page: 20, total_pages: 3 });
    expect(entriesOf(await api.list('per_page=50'))).toHaveLength(45);
    const empty = { total_pages: 0, total_count: 0, environments: [] };
    expect((await api.list('page=1', 'beta')).body).toMatchObject(empty);
  });

  it.each([
    ['page=0', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['page=&per_page=10', 'page'],
    ['per_page=0', 'per_page'],
    ['per_page=51', 'per_page'],
  ])('answers 400 to %s', async (query, field) => {
    const response = await api.list(query);
    const errors = { [field]: expect.any(String) };
    expect([response.status, response.body]).toEqual([
      400,
      { message: expect.any(String), errors },
    ]);
  });
});

describe('kosli logical environments: included_environments', () => {
  const view = (members: unknown, type = 'logical') => ({
    name: 'view',
    type,
    description: 'all',
    included_environments: members,
  });
  const expectMembersRefused = async (members: unknown, text: string, type?: string) =>
    expectRefused(await api.put(view(members, type)), 'included_environments', text);
  beforeEach(async () => {
    for (const name of ['eu', 'us']) await api.put({ ...VALID, name });
  });

  it('stores the members in the order given, replaces them on an update, and takes an empty list', async () => {
    expect((await api.put(view(['us', 'eu']))).status).toBe(201);
    const listed = entriesOf(await api.list()).find((env) => env.name === 'view');
    expect(listed).toMatchObject({ included_environments: ['us', 'eu'] });
    for (const members of [['eu'], []]) {
      await api.put(view(members));
      expect(await stored('view')).toMatchObject({ included_environments: members });
    }
  });

  it('takes a logical member; drops the members when the type stops being logical, takes them when it turns', async () => {
    await api.put({ name: 'inner', type: 'logical', description: 'i' });
    expect((await api.put(view(['inner', 'eu']))).status).toBe(201);
    expect((await api.put({ name: 'view', type: 'K8S', description: 'all' })).status).toBe(201);
    expect(await stored('view')).toMatchObject({ type: 'K8S', included_environments: null });
    expect((await api.put(view(['us']))).status).toBe(201);
    expect(await stored('view')).toMatchObject({ type: 'logical', included_environments: ['us'] });
  });

  it.each([
    [
      ['eu', 'ap', 'sa'],
      "environment 'ap' does not exist in organization 'acme'; environment 'sa' does not exist in organization 'acme'",
    ],
    [['view'], "'view' cannot include itself"],
    [['eu', 'eu'], "'eu' is listed more than once"],
    [['eu', 'no way'], `'no way' ${RULE}`],
    [['eu', 3], 'must be a list of environment names, got an array'],
    ['eu', 'must be a list of environment names, got a string'],
  ])('refuses the members %j, storing nothing', async (members, text) => {
    await expectMembersRefused(members, text);
    expect(await stored('view')).toBeUndefined();
  });

  it.each(['K8S', 'ECS', 'server'])(
    'refuses members on a %s environment, even an empty list',
    async (type) => {
      const text = `only a logical environment includes others; this one is of type '${type}'`;
      for (const members of [['eu'], []]) await expectMembersRefused(members, text, type);
    },
  );

  it('refuses a member of another org, or an archived one', async () => {
    await api.put({ ...VALID, name: 'ap' }, 'beta');
    await expectMembersRefused(['ap'], "environment 'ap' does not exist in organization 'acme'");
    expect((await api.archive('eu')).status).toBe(200);
    await expectMembersRefused(['eu'], "environment 'eu' in organization 'acme' has been archived");
  });
});
