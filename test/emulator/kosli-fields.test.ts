/**
 * The kosli profile's full upsert dialect: production's optional fields (each may be null), `~` in
 * names, and the members of logical environments.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/runtime/errors.ts';
import { startEmulator } from '../../src/emulator/index.ts';
import { startTestEmulator } from '../helpers/emulator.ts';
import type { StoreDocument, TestEmulator } from '../helpers/emulator.ts';
import { TOKEN, apiClient, entriesOf, errorsOf } from './api-client.ts';
import type { ApiClient } from './api-client.ts';

const NOW_MS = 1_700_000_000_000;
const VALID = { name: 'prod', description: 'Production', type: 'K8S' };
const VALIDATION_FAILED = 'Input payload validation failed';

/** The fields of a kosli listing entry, exactly. */
const LISTING_FIELDS = [
  'description',
  'include_scaling',
  'included_environments',
  'last_changed_at',
  'last_modified_at',
  'last_reported_at',
  'name',
  'org',
  'policies',
  'state',
  'tags',
  'type',
];

let emu: TestEmulator;
let api: ApiClient;
let nowMs = NOW_MS;

beforeAll(async () => {
  emu = await startTestEmulator({
    profile: 'kosli',
    orgs: ['acme', 'acme~eu', 'beta'],
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

/** The one environment `name` of acme as the admin store holds it. */
async function stored(name: string): Promise<StoreDocument['orgs'][string][number] | undefined> {
  const store = await emu.getStore();
  return store.orgs.acme?.find((env) => env.name === name && !env.archived);
}

/** Expects a 400 validation failure whose `errors` has exactly `field`, matching `text`. */
function expectRefused(
  response: Awaited<ReturnType<ApiClient['put']>>,
  field: string,
  text: string | RegExp = /./,
): void {
  expect(response.status).toBe(400);
  expect(response.body).toEqual({
    message: VALIDATION_FAILED,
    errors: { [field]: expect.stringMatching(text) },
  });
}

describe('kosli PUT: optional fields', () => {
  it('accepts require_provenance and shows it in the read of one environment, not the listing', async () => {
    expect((await api.put({ ...VALID, require_provenance: true })).status).toBe(201);
    const one = await api.read('prod');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ name: 'prod', require_provenance: true });
    expect(await stored('prod')).toMatchObject({ require_provenance: true });
    const [entry] = entriesOf(await api.list());
    expect(entry).toBeDefined();
    expect(entry).not.toHaveProperty('require_provenance');
  });

  it('accepts null for every optional field, and creates with the defaults', async () => {
    const body = {
      ...VALID,
      include_scaling: null,
      require_provenance: null,
      included_environments: null,
      policies: null,
    };
    expect((await api.put(body)).status).toBe(201);
    expect((await api.put({ ...body, name: 'view', type: 'logical' })).status).toBe(201);
    expect(await stored('prod')).toMatchObject({
      include_scaling: false,
      require_provenance: false,
      policies: [],
      included_environments: null,
    });
    expect(await stored('view')).toMatchObject({ included_environments: [] });
  });

  it('creates with the defaults when the optional fields are absent', async () => {
    expect((await api.put(VALID)).status).toBe(201);
    expect((await api.read('prod')).body).toMatchObject({
      include_scaling: false,
      require_provenance: false,
      policies: null,
      included_environments: null,
    });
  });

  it.each([
    ['absent', undefined],
    ['null', null],
  ])('keeps every optional field of an existing environment when it is %s', async (_l, value) => {
    await emu.putStore({
      orgs: {
        acme: [
          { name: 'member', type: 'K8S', description: 'm' },
          {
            name: 'view',
            type: 'logical',
            description: 'v',
            include_scaling: true,
            require_provenance: true,
            policies: ['p1'],
            included_environments: ['member'],
          },
        ],
      },
    });
    const fields = ['include_scaling', 'require_provenance', 'policies', 'included_environments'];
    const body: Record<string, unknown> = { name: 'view', type: 'logical', description: 'new' };
    if (value === null) for (const field of fields) body[field] = null;
    expect((await api.put(body)).status).toBe(201);
    expect(await stored('view')).toMatchObject({
      description: 'new',
      include_scaling: true,
      require_provenance: true,
      policies: ['p1'],
      included_environments: ['member'],
    });
  });

  it('applies optional fields that are given on an update', async () => {
    await emu.putStore({
      orgs: {
        acme: [
          {
            name: 'prod',
            type: 'K8S',
            description: 'd',
            include_scaling: true,
            require_provenance: true,
            policies: ['p1'],
          },
        ],
      },
    });
    const body = { ...VALID, include_scaling: false, require_provenance: false, policies: [] };
    expect((await api.put(body)).status).toBe(201);
    expect(await stored('prod')).toMatchObject({
      include_scaling: false,
      require_provenance: false,
      policies: [],
    });
    await api.put({ ...VALID, require_provenance: true });
    expect(await stored('prod')).toMatchObject({ require_provenance: true });
  });

  it('still ignores include_scaling true and description "" on an existing environment', async () => {
    await api.put(VALID);
    await api.put({ ...VALID, description: '', include_scaling: true, require_provenance: true });
    expect(await stored('prod')).toMatchObject({
      description: 'Production',
      include_scaling: false,
      require_provenance: true,
    });
  });

  it('moves last_changed_at only when a given field changes', async () => {
    await api.put({ ...VALID, require_provenance: true });
    nowMs += 1000;
    await api.put({ ...VALID, require_provenance: null });
    expect(await stored('prod')).toMatchObject({
      last_modified_at: 1_700_000_001,
      last_changed_at: 1_700_000_000,
    });
    nowMs += 1000;
    await api.put({ ...VALID, require_provenance: false });
    expect(await stored('prod')).toMatchObject({ last_changed_at: 1_700_000_002 });
  });

  it.each([
    ['require_provenance as a string', { require_provenance: 'yes' }, 'require_provenance'],
    ['require_provenance as a number', { require_provenance: 1 }, 'require_provenance'],
    ['include_scaling as a string', { include_scaling: 'no' }, 'include_scaling'],
    ['policies as a string', { policies: 'p1' }, 'policies'],
    ['policies with a number', { policies: ['p1', 2] }, 'policies'],
    ['description null', { description: null }, 'description'],
    ['name null', { name: null }, 'name'],
    ['type null', { type: null }, 'type'],
    ['an unknown field', { tags: {} }, 'tags'],
    ['another unknown field', { last_modified_at: 1 }, 'last_modified_at'],
  ])('refuses %s with 400 naming the field', async (_label, extra, field) => {
    expectRefused(await api.put({ ...VALID, ...extra }), field);
    expect((await emu.getStore()).orgs).toEqual({});
  });

  it.each([['name'], ['type'], ['description']])('requires %s', async (field) => {
    const body: Record<string, unknown> = { ...VALID };
    delete body[field];
    expectRefused(await api.put(body), field, 'is required');
  });

  it('lists all nine types when refusing k8s', async () => {
    expectRefused(
      await api.put({ ...VALID, type: 'k8s' }),
      'type',
      "'k8s' is not one of K8S, S3, logical, ECS, lambda, server, docker, azure-apps, cloud-run",
    );
  });
});

describe('kosli names: ~ is allowed', () => {
  it.each([['a~b'], ['prod~1'], ['x.y-z_w~v'], ['0~']])('accepts the name %s', async (name) => {
    expect((await api.put({ ...VALID, name })).status).toBe(201);
    expect(entriesOf(await api.list()).map((env) => env.name)).toEqual([name]);
    const one = await api.read(name);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ name });
  });

  it('reads a name with ~ given percent-encoded in the path', async () => {
    await api.put({ ...VALID, name: 'a~b' });
    expect((await api.read('a%7Eb')).body).toMatchObject({ name: 'a~b' });
  });

  it.each([['~a'], ['a b'], ['a/b'], ['-a'], ['a~b!']])('refuses the name %s', async (name) => {
    expectRefused(await api.put({ ...VALID, name }), 'name', 'does not match');
  });

  it('serves an org whose name has ~', async () => {
    expect((await api.put(VALID, 'acme~eu')).status).toBe(201);
    const listing = await api.list(undefined, 'acme~eu');
    expect(listing.status).toBe(200);
    expect(entriesOf(listing)).toEqual([expect.objectContaining({ org: 'acme~eu', name: 'prod' })]);
    const paged = await api.list('page=1', 'acme~eu');
    expect(paged.body).toMatchObject({
      _links: { self: { href: `${emu.url}/api/v2/environments/acme~eu?page=1&per_page=20` } },
    });
    expect((await api.read('prod', 'acme~eu')).status).toBe(200);
  });

  it('answers 404 for an org with ~ that is not configured', async () => {
    const response = await api.list(undefined, 'acme~us');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: "Organization 'acme~us' does not exist" });
  });

  it('accepts orgs with ~ in its options, the spec profile does not', async () => {
    const kosli = await startEmulator({ profile: 'kosli', port: 0, orgs: ['a~b'] });
    await kosli.close();
    await expect(startEmulator({ profile: 'spec', port: 0, orgs: ['a~b'] })).rejects.toThrow(
      ConfigError,
    );
    await expect(
      startEmulator({ profile: 'spec', port: 0, tokens: [{ token: 't', orgs: ['a~b'] }] }),
    ).rejects.toThrow(ConfigError);
  });
});

describe('kosli logical environments: included_environments', () => {
  async function members(...names: string[]): Promise<void> {
    for (const name of names) expect((await api.put({ ...VALID, name })).status).toBe(201);
  }

  it('stores the members of a logical environment and lists them in the order given', async () => {
    await members('eu', 'us');
    const view = { name: 'view', type: 'logical', description: 'all' };
    expect((await api.put({ ...view, included_environments: ['us', 'eu'] })).status).toBe(201);
    const entry = entriesOf(await api.list()).find((env) => env.name === 'view');
    expect(entry).toMatchObject({ included_environments: ['us', 'eu'] });
    expect((await api.read('view')).body).toMatchObject({ included_environments: ['us', 'eu'] });
  });

  it('replaces the members on an update, and accepts an empty list', async () => {
    await members('eu', 'us');
    const view = { name: 'view', type: 'logical', description: 'all' };
    await api.put({ ...view, included_environments: ['eu'] });
    await api.put({ ...view, included_environments: ['us'] });
    expect(await stored('view')).toMatchObject({ included_environments: ['us'] });
    await api.put({ ...view, included_environments: [] });
    expect(await stored('view')).toMatchObject({ included_environments: [] });
  });

  it('refuses a logical environment PUT before its members, and takes it after them', async () => {
    const view = {
      name: 'view',
      type: 'logical',
      description: 'all',
      included_environments: ['eu'],
    };
    expectRefused(
      await api.put(view),
      'included_environments',
      "environment 'eu' does not exist in organization 'acme'",
    );
    expect((await emu.getStore()).orgs).toEqual({});
    await members('eu');
    expect((await api.put(view)).status).toBe(201);
  });

  it('names every unknown member', async () => {
    await members('eu');
    const response = await api.put({
      name: 'view',
      type: 'logical',
      description: 'all',
      included_environments: ['eu', 'us', 'ap'],
    });
    expectRefused(response, 'included_environments', /'us'.*'ap'/);
  });

  it('refuses a member of another org', async () => {
    await api.put({ ...VALID, name: 'eu' }, 'beta');
    const response = await api.put({
      name: 'view',
      type: 'logical',
      description: 'all',
      included_environments: ['eu'],
    });
    expectRefused(response, 'included_environments', "'eu' does not exist");
  });

  it('refuses an archived member', async () => {
    await members('eu');
    expect((await api.archive('eu')).status).toBe(200);
    const response = await api.put({
      name: 'view',
      type: 'logical',
      description: 'all',
      included_environments: ['eu'],
    });
    expectRefused(
      response,
      'included_environments',
      "environment 'eu' in organization 'acme' has been archived",
    );
  });

  it('refuses an environment that includes itself', async () => {
    await api.put({ name: 'view', type: 'logical', description: 'all' });
    const response = await api.put({
      name: 'view',
      type: 'logical',
      description: 'all',
      included_environments: ['view'],
    });
    expectRefused(response, 'included_environments', "'view' cannot include itself");
  });

  it('accepts a logical environment as a member', async () => {
    await api.put({ name: 'inner', type: 'logical', description: 'i' });
    const response = await api.put({
      name: 'outer',
      type: 'logical',
      description: 'o',
      included_environments: ['inner'],
    });
    expect(response.status).toBe(201);
  });

  it.each([['K8S'], ['ECS'], ['server']])(
    'refuses included_environments on a %s environment, even an empty list',
    async (type) => {
      await members('eu');
      for (const list of [['eu'], []]) {
        expectRefused(
          await api.put({ ...VALID, type, included_environments: list }),
          'included_environments',
          'only a logical environment includes others',
        );
      }
    },
  );

  it.each([
    ['a member given twice', ['eu', 'eu'], "'eu' is listed more than once"],
    ['a member with a bad name', ['eu', 'no way'], "'no way' does not match"],
    ['a list with a number', ['eu', 3], 'must be a list of environment names'],
    ['a string', 'eu', 'must be a list of environment names'],
    ['an object', { eu: true }, 'must be a list of environment names'],
  ])('refuses %s', async (_label, list, text) => {
    await members('eu');
    const response = await api.put({
      name: 'view',
      type: 'logical',
      description: 'all',
      included_environments: list,
    });
    expectRefused(response, 'included_environments', text);
  });

  it('drops the members when the type stops being logical, and refuses members with it', async () => {
    await members('eu');
    const view = { name: 'view', description: 'all' };
    await api.put({ ...view, type: 'logical', included_environments: ['eu'] });
    expectRefused(
      await api.put({ ...view, type: 'K8S', included_environments: ['eu'] }),
      'included_environments',
      'only a logical environment',
    );
    expect((await api.put({ ...view, type: 'K8S' })).status).toBe(201);
    expect(await stored('view')).toMatchObject({ type: 'K8S', included_environments: null });
  });

  it('takes members when an environment turns logical', async () => {
    await members('eu', 'view');
    const response = await api.put({
      name: 'view',
      type: 'logical',
      description: 'now logical',
      included_environments: ['eu'],
    });
    expect(response.status).toBe(201);
    expect(await stored('view')).toMatchObject({ type: 'logical', included_environments: ['eu'] });
  });
});

describe('kosli listing fields', () => {
  it('carries exactly the production fields, in the bare array and the envelope', async () => {
    await api.put({ ...VALID, name: 'eu', require_provenance: true });
    await api.put({
      name: 'view',
      type: 'logical',
      description: 'all',
      included_environments: ['eu'],
    });
    for (const response of [await api.list(), await api.list('page=1&per_page=5')]) {
      const entries = entriesOf(response);
      expect(entries).toHaveLength(2);
      for (const entry of entries) expect(Object.keys(entry).toSorted()).toEqual(LISTING_FIELDS);
      expect(entries).toEqual([
        expect.objectContaining({ name: 'eu', included_environments: null, policies: null }),
        expect.objectContaining({ name: 'view', included_environments: ['eu'] }),
      ]);
    }
  });

  it('shows policies null when the store holds null', async () => {
    await emu.putStore({ orgs: { acme: [{ ...VALID, policies: null }] } });
    expect(entriesOf(await api.list())).toEqual([expect.objectContaining({ policies: null })]);
  });

  it('shows the listing fields plus require_provenance in the read of one environment', async () => {
    await api.put(VALID);
    const one = await api.read('prod');
    expect(Object.keys(one.body ?? {}).toSorted()).toEqual(
      [...LISTING_FIELDS, 'require_provenance'].toSorted(),
    );
  });

  it('keeps 400 bodies in production shape for the new fields', async () => {
    const response = await api.put({ ...VALID, require_provenance: 'x', included_environments: 1 });
    expect(errorsOf(response)).toEqual({
      require_provenance: 'must be a boolean, got a string',
      included_environments: 'must be a list of environment names or null',
    });
  });
});
