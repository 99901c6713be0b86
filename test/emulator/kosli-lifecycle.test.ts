/**
 * An environment's life in the kosli profile: concurrent creates of one name (409), archiving, an
 * archived name created again, and renaming.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { entriesOf, heldSleep, NOW_MS, policyForm, startKosli } from './api-client.ts';
import { VALID, VALIDATION_FAILED } from './api-client.ts';

const archived = (name: string, org = 'acme') => ({
  message: `Environment named '${name}' in organization '${org}' has been archived`,
});
const missing = (name: string) => ({
  message: `Environment named '${name}' does not exist for organization 'acme'`,
});

/** The waits the emulator begins (a create's hold), each lasting until the test releases it. */
const holds = heldSleep();

let nowMs = NOW_MS;
const { emu, api } = await startKosli(() => nowMs, { sleep: holds.sleep });
afterAll(() => emu.close());
beforeEach(async () => {
  nowMs = NOW_MS;
  holds.waits.length = 0;
  await emu.reset();
  await api.putPolicy(policyForm({ name: 'sox', type: 'env' }, 'a: 1\n'));
});

const entry = async (name: string) => entriesOf(await api.list()).find((env) => env.name === name);
const names = async () => entriesOf(await api.list()).map((env) => env.name);

describe('concurrent creates of one name: 409', () => {
  it('holds a create for createHoldMs; another create of the name meanwhile is a 409, an update is not', async () => {
    await api.put({ ...VALID, name: 'other' });
    await emu.setFaults({ createHoldMs: 250 });
    const first = api.put(VALID);
    const hold = await holds.next(emu);
    expect(hold.ms).toBe(250);
    const second = await api.put({ ...VALID, description: 'second' });
    const message =
      "Environment named 'prod' is being created by another request in organization 'acme'; try again";
    expect([second.status, second.body]).toEqual([409, { message }]);
    // Other names are not held: an update lands at once.
    expect((await api.put({ ...VALID, name: 'other', description: 'updated' })).status).toBe(201);
    expect(await entry('prod')).toBeUndefined();
    hold.release();
    expect((await first).status).toBe(201);
    expect(await entry('prod')).toMatchObject({ description: 'Production' });
    // Created, the name is free again: the retry is an update.
    expect((await api.put({ ...VALID, description: 'second' })).status).toBe(201);
    expect(await entry('prod')).toMatchObject({ description: 'second' });
  });

  it('answers the drawn share of creates 409 with conflictRate, counted as a fault; updates never', async () => {
    await emu.setFaults({ conflictRate: 1 });
    expect((await api.put(VALID)).status).toBe(409);
    expect(await entry('prod')).toBeUndefined();
    await emu.putStore({ orgs: { acme: [VALID] } });
    expect((await api.put({ ...VALID, description: 'update' })).status).toBe(201);
    const stats = await emu.getStats();
    expect([stats.faults.conflict, stats.byStatus['409']]).toEqual([1, 1]);
    const puts = (await emu.getRequests()).filter(
      ({ route }) => route === 'PUT /api/v2/environments/{org}',
    );
    expect(puts.map((request) => [request.status, request.fault])).toEqual([
      [409, 'conflict'],
      [201, undefined],
    ]);
  });
});

describe('PUT /api/v2/environments/{org}/{name}/archive', () => {
  it('archives: 200 "OK", out of the listing and its counts, a read says "has been archived"', async () => {
    for (const name of ['a', 'prod', 'z']) await api.put({ ...VALID, name });
    const response = await api.archive('prod');
    expect([response.status, response.body]).toEqual([200, 'OK']);
    expect(await names()).toEqual(['a', 'z']);
    const page = { total_count: 2, total_pages: 2 };
    expect((await api.list('page=1&per_page=1')).body).toMatchObject(page);
    const read = await api.read('prod');
    expect([read.status, read.body]).toEqual([404, archived('prod')]);
    expect((await emu.getStats()).environments).toBe(2);
  });

  it('answers 404 to archiving again or an unknown name, in its own org only', async () => {
    await api.put(VALID);
    await api.put(VALID, 'beta');
    await api.archive('prod', 'beta');
    expect((await api.archive('prod', 'beta')).body).toEqual(archived('prod', 'beta'));
    expect((await api.archive('nope')).body).toEqual(missing('nope'));
    expect((await api.read('prod')).status).toBe(200);
  });

  it('takes an empty body or {}, refuses a key (400) and another type (415)', async () => {
    await api.put(VALID);
    const archive = (options: object) =>
      api.call('/api/v2/environments/acme/prod/archive', { method: 'PUT', ...options });
    const key = await archive({ json: { reason: 'old' } });
    const errors = { reason: 'unknown field' };
    expect([key.status, key.body]).toEqual([400, { message: VALIDATION_FAILED, errors }]);
    expect((await archive({ json: [] })).status).toBe(400);
    const text = await archive({ body: '{}', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect((await archive({ json: {} })).status).toBe(200);
  });

  it('detaches the policies (compliance unknown) and drops the name from logical environments', async () => {
    for (const name of ['eu', 'us']) await api.put({ ...VALID, name });
    const view = { name: 'view', type: 'logical', description: 'all' };
    await api.put({ ...view, included_environments: ['eu', 'us'] });
    await api.policies('POST', 'eu', { policy_names: ['sox'] });
    const store = await emu.getStore();
    const compliant = (store.orgs.acme ?? []).map((env) => ({ ...env, state: true }));
    await emu.putStore({ ...store, orgs: { acme: compliant } });
    nowMs += 1000;
    await api.archive('eu');
    expect(await entry('view')).toMatchObject({
      included_environments: ['us'],
      last_modified_at: 1_700_000_000,
      last_changed_at: 1_700_000_001,
    });
    const gone = (await emu.getStore()).orgs.acme?.find((env) => env.archived);
    expect(gone).toMatchObject({ name: 'eu', policies: [], state: null });
  });

  it('a PUT of an archived name creates a new environment without its history; both stay in the store', async () => {
    await api.put({ ...VALID, require_provenance: true });
    await api.tags('prod', { set_tags: { team: 'core' } });
    await api.archive('prod');
    nowMs += 5000;
    expect((await api.put({ ...VALID, description: 'Reborn' })).status).toBe(201);
    const fresh = { require_provenance: false, tags: {}, policies: null, state: null };
    const times = { last_modified_at: 1_700_000_005, last_changed_at: 1_700_000_005 };
    expect((await api.read('prod')).body).toMatchObject({
      description: 'Reborn',
      ...fresh,
      ...times,
    });
    const store = (await emu.getStore()).orgs.acme ?? [];
    expect(store.map(({ description, archived: gone, tags }) => [description, gone, tags])).toEqual(
      [
        ['Production', true, { team: 'core' }],
        ['Reborn', false, {}],
      ],
    );
    expect((await api.archive('prod')).status).toBe(200);
    expect((await emu.getStore()).orgs.acme?.map((env) => env.archived)).toEqual([true, true]);
  });
});

describe('PUT /api/v2/environments/{org}/{name}/rename', () => {
  it('renames, keeping fields, tags, policies and timestamps; the listing stays sorted', async () => {
    for (const name of ['b-middle', 'c-last']) await api.put({ ...VALID, name });
    await api.put({ ...VALID, name: 'a-first', type: 'ECS', require_provenance: true });
    await api.tags('a-first', { set_tags: { team: 'core' } });
    await api.policies('POST', 'a-first', { policy_names: ['sox'] });
    const before = await entry('a-first');
    nowMs += 5000;
    const response = await api.rename('a-first', { new_name: 'd-renamed' });
    expect([response.status, response.body]).toEqual([200, 'OK']);
    const listing = entriesOf(await api.list());
    expect(listing.map((env) => env.name)).toEqual(['b-middle', 'c-last', 'd-renamed']);
    expect(listing[2]).toEqual({ ...before, name: 'd-renamed' });
    expect((await api.read('d-renamed')).body).toMatchObject({ require_provenance: true });
    expect((await api.read('a-first')).body).toEqual(missing('a-first'));
  });

  it('renames a member in every logical environment; the old name is then free for a new one', async () => {
    await api.put({ ...VALID, name: 'eu' });
    await api.put({
      name: 'view',
      type: 'logical',
      description: 'all',
      included_environments: ['eu'],
    });
    nowMs += 1000;
    await api.rename('eu', { new_name: 'europe' });
    const view = { included_environments: ['europe'], last_changed_at: 1_700_000_001 };
    expect(await entry('view')).toMatchObject(view);
    expect((await api.put({ ...VALID, name: 'eu', description: 'new' })).status).toBe(201);
    expect(await names()).toEqual(['eu', 'europe', 'view']);
  });

  it('refuses a name a live environment holds (400), takes an archived one, and 404s an archived source', async () => {
    for (const name of ['prod', 'dev', 'old']) await api.put({ ...VALID, name });
    for (const taken of ['dev', 'prod']) {
      const new_name = `an environment named '${taken}' already exists in organization 'acme'`;
      const response = await api.rename('prod', { new_name: taken });
      expect(response.body).toEqual({ message: VALIDATION_FAILED, errors: { new_name } });
    }
    await api.archive('old');
    expect((await api.rename('prod', { new_name: 'old' })).status).toBe(200);
    const olds = (await emu.getStore()).orgs.acme?.filter((env) => env.name === 'old');
    expect(olds?.map((env) => env.archived)).toEqual([false, true]);
    expect((await api.rename('old', { new_name: 'x' })).status).toBe(200);
    expect((await api.rename('old', { new_name: 'y' })).body).toEqual(archived('old'));
    expect((await api.rename('nope', { new_name: 'y' })).body).toEqual(missing('nope'));
  });

  it.each([
    [{ new_name: 'x', description: 'd' }, 'description'],
    [{}, 'new_name'],
    [{ new_name: 5 }, 'new_name'],
    [{ new_name: 'a~b' }, 'new_name'],
    ['x', 'payload'],
  ])('refuses %j with 400', async (body, field) => {
    await api.put(VALID);
    const response = await api.rename('prod', body);
    const errors = { [field]: expect.any(String) };
    expect([response.status, response.body]).toEqual([400, { message: VALIDATION_FAILED, errors }]);
    expect((await api.read('prod')).status).toBe(200);
  });
});
