/**
 * The kosli profile's tags (PATCH /api/v2/tags/{org}/environment/{name}) and renaming
 * (PUT /api/v2/environments/{org}/{name}/rename).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestEmulator } from '../helpers/emulator.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { TOKEN, apiClient, entriesOf, policyForm } from './api-client.ts';
import type { ApiClient } from './api-client.ts';

const NOW_MS = 1_700_000_000_000;
const VALID = { name: 'prod', description: 'Production', type: 'K8S' };
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

async function entry(name: string): Promise<Record<string, unknown> | undefined> {
  return entriesOf(await api.list()).find((env) => env.name === name);
}

describe('PATCH /api/v2/tags/{org}/environment/{name}', () => {
  beforeEach(async () => {
    await api.put(VALID);
  });

  it('sets and removes tags: 200 "OK", and the listing shows them as an object', async () => {
    const set = await api.tags('prod', { set_tags: { team: 'core', tier: 'gold' } });
    expect(set.status).toBe(200);
    expect(set.body).toBe('OK');
    expect((await entry('prod'))?.tags).toEqual({ team: 'core', tier: 'gold' });
    const both = await api.tags('prod', {
      set_tags: { team: 'platform', region: 'eu' },
      remove_tags: ['tier', 'never-set'],
    });
    expect(both.status).toBe(200);
    const tags = (await entry('prod'))?.tags;
    expect(tags).toEqual({ team: 'platform', region: 'eu' });
    // A key set again keeps its place; new keys follow.
    expect(Object.keys(tags ?? {})).toEqual(['team', 'region']);
    expect((await api.read('prod')).body).toMatchObject({
      tags: { team: 'platform', region: 'eu' },
    });
  });

  it('moves the timestamps on a change only', async () => {
    nowMs += 1000;
    await api.tags('prod', { set_tags: { team: 'core' } });
    expect(await entry('prod')).toMatchObject({
      last_modified_at: 1_700_000_001,
      last_changed_at: 1_700_000_001,
    });
    nowMs += 1000;
    expect(
      (await api.tags('prod', { set_tags: { team: 'core' }, remove_tags: ['x'] })).status,
    ).toBe(200);
    expect(await entry('prod')).toMatchObject({
      last_modified_at: 1_700_000_001,
      last_changed_at: 1_700_000_001,
    });
  });

  it('keeps a key such as __proto__ as an ordinary key', async () => {
    const response = await api.call('/api/v2/tags/acme/environment/prod', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: '{"set_tags": {"__proto__": "x", "constructor": "y"}}',
    });
    expect(response.status).toBe(200);
    const tags = (await emu.getStore()).orgs.acme?.[0]?.tags;
    expect(tags === undefined ? [] : Object.keys(tags)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(tags)).toBe(Object.prototype);
  });

  it.each([
    ['an unknown key', { set_tags: { a: 'b' }, add_tags: {} }, 'add_tags'],
    ['neither key', {}, 'payload'],
    ['set_tags as a list', { set_tags: ['a'] }, 'set_tags'],
    ['a number value', { set_tags: { a: 1 } }, 'set_tags'],
    ['a null value', { set_tags: { a: null } }, 'set_tags'],
    ['an empty key', { set_tags: { '': 'x' } }, 'set_tags'],
    ['a key over 128 characters', { set_tags: { ['k'.repeat(129)]: 'x' } }, 'set_tags'],
    ['a value over 1024 characters', { set_tags: { k: 'v'.repeat(1025) } }, 'set_tags'],
    ['remove_tags as an object', { remove_tags: { a: 'b' } }, 'remove_tags'],
    ['a number to remove', { remove_tags: [1] }, 'remove_tags'],
    ['a key set and removed', { set_tags: { a: 'b' }, remove_tags: ['a'] }, 'remove_tags'],
    ['a body that is a list', [], 'payload'],
  ])('refuses %s with 400 and changes nothing', async (_label, body, field) => {
    await api.tags('prod', { set_tags: { keep: 'me' } });
    const response = await api.tags('prod', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: VALIDATION_FAILED,
      errors: { [field]: expect.any(String) },
    });
    expect((await entry('prod'))?.tags).toEqual({ keep: 'me' });
  });

  it('accepts the longest key and value, and an empty value', async () => {
    const tags = { ['k'.repeat(128)]: 'v'.repeat(1024), empty: '' };
    expect((await api.tags('prod', { set_tags: tags })).status).toBe(200);
    expect((await entry('prod'))?.tags).toEqual(tags);
  });

  it('holds at most 100 tags', async () => {
    const hundred = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'v']));
    expect((await api.tags('prod', { set_tags: hundred })).status).toBe(200);
    const over = await api.tags('prod', { set_tags: { one: 'more' } });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({
      message: VALIDATION_FAILED,
      errors: { set_tags: expect.stringContaining('at most 100 tags') },
    });
    const swap = await api.tags('prod', { set_tags: { one: 'more' }, remove_tags: ['k0'] });
    expect(swap.status).toBe(200);
  });

  it('answers 404 for an environment that does not exist or has been archived', async () => {
    const unknown = await api.tags('nope', { set_tags: { a: 'b' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({
      message: "Environment named 'nope' does not exist for organization 'acme'",
    });
    await api.archive('prod');
    const archived = await api.tags('prod', { set_tags: { a: 'b' } });
    expect(archived.body).toEqual({
      message: "Environment named 'prod' in organization 'acme' has been archived",
    });
  });

  it('answers 404 for another kind of resource than environment', async () => {
    const response = await api.call('/api/v2/tags/acme/flow/prod', {
      method: 'PATCH',
      json: { set_tags: { a: 'b' } },
    });
    expect(response.status).toBe(404);
  });
});

describe('PUT /api/v2/environments/{org}/{name}/rename', () => {
  it('renames, keeping fields, tags, policies and timestamps, and the listing stays sorted', async () => {
    await api.putPolicy(policyForm({ name: 'sox', type: 'env' }, 'a: 1\n'));
    await api.put({ ...VALID, name: 'b-middle' });
    await api.put({ ...VALID, name: 'c-last' });
    await api.put({ ...VALID, name: 'a-first', type: 'ECS', require_provenance: true });
    await api.tags('a-first', { set_tags: { team: 'core' } });
    await api.policies('POST', 'a-first', { policy_names: ['sox'] });
    const before = await entry('a-first');
    nowMs += 5000;
    const response = await api.rename('a-first', { new_name: 'd-renamed' });
    expect(response.status).toBe(200);
    expect(response.body).toBe('OK');
    const listing = entriesOf(await api.list());
    expect(listing.map((env) => env.name)).toEqual(['b-middle', 'c-last', 'd-renamed']);
    expect(listing[2]).toEqual({ ...before, name: 'd-renamed' });
    expect(listing[2]).toMatchObject({
      type: 'ECS',
      tags: { team: 'core' },
      policies: ['sox'],
      last_modified_at: 1_700_000_000,
    });
    expect((await api.read('d-renamed')).body).toMatchObject({ require_provenance: true });
    expect((await api.read('a-first')).body).toEqual({
      message: "Environment named 'a-first' does not exist for organization 'acme'",
    });
    const page = await api.list('page=2&per_page=2');
    expect(entriesOf(page).map((env) => env.name)).toEqual(['d-renamed']);
  });

  it('refuses a name a live environment holds, with 400, and changes nothing', async () => {
    await api.put(VALID);
    await api.put({ ...VALID, name: 'dev', description: 'Dev' });
    const response = await api.rename('prod', { new_name: 'dev' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: VALIDATION_FAILED,
      errors: { new_name: "an environment named 'dev' already exists in organization 'acme'" },
    });
    expect((await api.rename('prod', { new_name: 'prod' })).status).toBe(400);
    expect(entriesOf(await api.list()).map((env) => [env.name, env.description])).toEqual([
      ['dev', 'Dev'],
      ['prod', 'Production'],
    ]);
  });

  it('takes the name of an archived environment, which stays archived', async () => {
    await api.put(VALID);
    await api.put({ ...VALID, name: 'old' });
    await api.archive('old');
    expect((await api.rename('prod', { new_name: 'old' })).status).toBe(200);
    expect((await api.read('old')).body).toMatchObject({ description: 'Production' });
    const store = await emu.getStore();
    expect(store.orgs.acme?.map((env) => [env.name, env.archived])).toEqual([
      ['old', false],
      ['old', true],
    ]);
  });

  it('answers 404 when the old name does not exist or has been archived', async () => {
    const unknown = await api.rename('nope', { new_name: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({
      message: "Environment named 'nope' does not exist for organization 'acme'",
    });
    await api.put(VALID);
    await api.archive('prod');
    const archived = await api.rename('prod', { new_name: 'x' });
    expect(archived.status).toBe(404);
    expect(archived.body).toEqual({
      message: "Environment named 'prod' in organization 'acme' has been archived",
    });
  });

  it('renames the member in every logical environment that includes it', async () => {
    await api.put({ ...VALID, name: 'eu' });
    await api.put({
      name: 'view',
      type: 'logical',
      description: 'all',
      included_environments: ['eu'],
    });
    nowMs += 1000;
    await api.rename('eu', { new_name: 'europe' });
    expect(await entry('view')).toMatchObject({
      included_environments: ['europe'],
      last_changed_at: 1_700_000_001,
    });
  });

  it.each([
    ['another key', { new_name: 'x', description: 'd' }, 'description'],
    ['no new_name', {}, 'new_name'],
    ['a number', { new_name: 5 }, 'new_name'],
    ['a bad name', { new_name: '-x' }, 'new_name'],
    ['a body that is a string', 'x', 'payload'],
  ])('refuses %s with 400', async (_label, body, field) => {
    await api.put(VALID);
    const response = await api.rename('prod', body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: VALIDATION_FAILED,
      errors: { [field]: expect.any(String) },
    });
    expect((await api.read('prod')).status).toBe(200);
  });

  it('then a PUT of the old name creates a new environment', async () => {
    await api.put({ ...VALID, policies: ['kept'] });
    await api.rename('prod', { new_name: 'live' });
    expect((await api.put({ ...VALID, description: 'New' })).status).toBe(201);
    expect(entriesOf(await api.list())).toEqual([
      expect.objectContaining({ name: 'live', description: 'Production', policies: ['kept'] }),
      expect.objectContaining({ name: 'prod', description: 'New', policies: null }),
    ]);
  });
});

describe('archive, then a PUT of the same name', () => {
  it('creates a new environment without the old tags or policies', async () => {
    await api.putPolicy(policyForm({ name: 'sox', type: 'env' }, 'a: 1\n'));
    await api.put(VALID);
    await api.tags('prod', { set_tags: { team: 'core' } });
    await api.policies('POST', 'prod', { policy_names: ['sox'] });
    await api.archive('prod');
    expect(await entry('prod')).toBeUndefined();
    nowMs += 1000;
    expect((await api.put(VALID)).status).toBe(201);
    expect(await entry('prod')).toMatchObject({
      tags: {},
      policies: null,
      last_modified_at: 1_700_000_001,
    });
    const archived = (await emu.getStore()).orgs.acme?.find((env) => env.archived);
    expect(archived).toMatchObject({ tags: { team: 'core' }, policies: ['sox'] });
  });

  it('refuses a key in the archive body, and takes {} or no body', async () => {
    await api.put(VALID);
    const refused = await api.call('/api/v2/environments/acme/prod/archive', {
      method: 'PUT',
      json: { reason: 'old' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      message: VALIDATION_FAILED,
      errors: { reason: 'unknown field' },
    });
    const notJson = await api.call('/api/v2/environments/acme/prod/archive', {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(notJson.status).toBe(415);
    expect((await api.read('prod')).status).toBe(200);
    const list = await api.call('/api/v2/environments/acme/prod/archive', {
      method: 'PUT',
      json: [],
    });
    expect(list.status).toBe(400);
    expect((await api.archive('prod')).status).toBe(200);
  });
});
