/** The kosli profile's archived environments: the archive route, reads, re-creation, the store. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { TOKEN, apiClient, entriesOf } from './api-client.ts';
import type { ApiClient } from './api-client.ts';

const NOW_MS = 1_700_000_000_000;
const VALID = { name: 'prod', description: 'Production', type: 'K8S' };
const ARCHIVE_ROUTE = 'PUT /api/v2/environments/{org}/{name}/archive';

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

function archivedMessage(name: string, org = 'acme'): string {
  return `Environment named '${name}' in organization '${org}' has been archived`;
}

describe('PUT /api/v2/environments/{org}/{name}/archive', () => {
  it('archives: 200 "OK", gone from the listing, and a read says it has been archived', async () => {
    await api.put(VALID);
    await api.put({ ...VALID, name: 'dev' });
    const response = await api.archive('prod');
    expect(response.status).toBe(200);
    expect(response.body).toBe('OK');
    expect(entriesOf(await api.list()).map((env) => env.name)).toEqual(['dev']);
    const read = await api.read('prod');
    expect(read.status).toBe(404);
    expect(read.body).toEqual({ message: archivedMessage('prod') });
    expect(read.text).toContain('has been archived');
  });

  it('leaves archived environments out of the pagination counts', async () => {
    for (const name of ['a', 'b', 'c', 'd']) await api.put({ ...VALID, name });
    await api.archive('b');
    await api.archive('c');
    const page = await api.list('page=1&per_page=1');
    expect(page.body).toMatchObject({ total_count: 2, total_pages: 2 });
    expect(entriesOf(await api.list('page=2&per_page=1')).map((env) => env.name)).toEqual(['d']);
  });

  it('answers 404 like a read for an environment that does not exist', async () => {
    const response = await api.archive('nope');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      message: "Environment named 'nope' does not exist for organization 'acme'",
    });
  });

  it('answers 404 "has been archived" when archiving again', async () => {
    await api.put(VALID);
    await api.archive('prod');
    const again = await api.archive('prod');
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: archivedMessage('prod') });
  });

  it('answers 404 for a name that cannot exist', async () => {
    const response = await api.archive('-bad');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      message: "Environment named '-bad' does not exist for organization 'acme'",
    });
  });

  it('archives in one org only', async () => {
    await api.put(VALID);
    await api.put(VALID, 'beta');
    await api.archive('prod', 'beta');
    expect((await api.read('prod')).status).toBe(200);
    expect((await api.read('prod', 'beta')).body).toEqual({
      message: archivedMessage('prod', 'beta'),
    });
  });

  it('accepts the {} body production client sends, and a name with ~', async () => {
    await api.put({ ...VALID, name: 'a~b' });
    const response = await api.call('/api/v2/environments/acme/a~b/archive', {
      method: 'PUT',
      json: {},
    });
    expect(response.status).toBe(200);
    expect((await api.read('a~b')).body).toEqual({ message: archivedMessage('a~b') });
  });

  it('checks the token and the org first', async () => {
    await api.put(VALID);
    const anonymous = await send(`${emu.url}/api/v2/environments/acme/prod/archive`, {
      method: 'PUT',
      dispatcher: emu.agent,
    });
    expect(anonymous.status).toBe(401);
    const otherOrg = await api.call('/api/v2/environments/other/prod/archive', { method: 'PUT' });
    expect(otherOrg.body).toEqual({ message: "Organization 'other' does not exist" });
    expect((await api.read('prod')).status).toBe(200);
  });

  it.each([['GET'], ['POST'], ['DELETE']] as const)('answers 405 to %s', async (method) => {
    await api.put(VALID);
    const response = await api.call('/api/v2/environments/acme/prod/archive', { method });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('PUT');
    expect((await api.read('prod')).status).toBe(200);
  });

  it('has no DELETE on one environment', async () => {
    const response = await api.call('/api/v2/environments/acme/prod', { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
  });

  it('removes an archived environment from the members of logical ones', async () => {
    await api.put({ ...VALID, name: 'eu' });
    await api.put({ ...VALID, name: 'us' });
    const view = { name: 'view', type: 'logical', description: 'all' };
    await api.put({ ...view, included_environments: ['eu', 'us'] });
    nowMs += 1000;
    await api.archive('eu');
    const entry = entriesOf(await api.list()).find((env) => env.name === 'view');
    expect(entry).toMatchObject({
      included_environments: ['us'],
      last_modified_at: 1_700_000_000,
      last_changed_at: 1_700_000_001,
    });
  });

  it('is counted in the stats and the request log under its own route', async () => {
    await api.put(VALID);
    await api.archive('prod');
    const stats = await emu.getStats();
    expect(stats.byRoute[ARCHIVE_ROUTE]).toBe(1);
    expect(stats.environments).toBe(0);
    const [last] = await emu.getRequests(1);
    expect(last).toMatchObject({
      method: 'PUT',
      path: '/api/v2/environments/acme/prod/archive',
      route: ARCHIVE_ROUTE,
      status: 200,
    });
  });
});

describe('an archived name PUT again', () => {
  it('creates a new, live environment with a fresh last_modified_at', async () => {
    await api.put({ ...VALID, require_provenance: true, policies: ['p'] });
    await api.archive('prod');
    nowMs += 5000;
    expect((await api.put({ ...VALID, description: 'Reborn' })).status).toBe(201);
    const read = await api.read('prod');
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      description: 'Reborn',
      require_provenance: false,
      policies: null,
      last_modified_at: 1_700_000_005,
      last_changed_at: 1_700_000_005,
    });
    expect(entriesOf(await api.list())).toEqual([
      expect.objectContaining({ name: 'prod', description: 'Reborn' }),
    ]);
    const store = await emu.getStore();
    expect(store.orgs.acme).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'prod', description: 'Production', archived: true }),
        expect.objectContaining({ name: 'prod', description: 'Reborn', archived: false }),
      ]),
    );
    expect(store.orgs.acme).toHaveLength(2);
  });

  it('can be archived again, leaving both archived in the store', async () => {
    await api.put(VALID);
    await api.archive('prod');
    await api.put(VALID);
    expect((await api.archive('prod')).status).toBe(200);
    const store = await emu.getStore();
    expect(store.orgs.acme?.map((env) => env.archived)).toEqual([true, true]);
    expect((await api.read('prod')).body).toEqual({ message: archivedMessage('prod') });
  });
});

describe('archived environments in the admin store', () => {
  it('round-trips archived environments and require_provenance through GET and PUT', async () => {
    await api.put({ ...VALID, require_provenance: true });
    await api.put({ ...VALID, name: 'dev' });
    await api.archive('dev');
    const before = await emu.getStore();
    expect(before.orgs.acme).toEqual([
      expect.objectContaining({ name: 'dev', archived: true, require_provenance: false }),
      expect.objectContaining({ name: 'prod', archived: false, require_provenance: true }),
    ]);
    await emu.reset();
    expect(await emu.putStore(before)).toEqual(before);
    expect((await api.read('dev')).body).toEqual({ message: archivedMessage('dev') });
    expect((await api.read('prod')).body).toMatchObject({ require_provenance: true });
  });

  it('loads an older document without archived or require_provenance, with the defaults', async () => {
    const stored = await emu.putStore({
      version: 1,
      orgs: {
        acme: [
          {
            org: 'acme',
            name: 'prod',
            type: 'K8S',
            description: 'old',
            include_scaling: false,
            policies: [],
            tags: {},
            last_modified_at: 1,
            last_reported_at: null,
            last_changed_at: 1,
            state: null,
            included_environments: null,
          },
        ],
      },
    });
    expect(stored.orgs.acme).toEqual([
      expect.objectContaining({ name: 'prod', archived: false, require_provenance: false }),
    ]);
    expect((await api.read('prod')).status).toBe(200);
  });

  it.each([
    ['require_provenance as a string', { require_provenance: 'yes' }],
    ['require_provenance null', { require_provenance: null }],
    ['archived as a string', { archived: 'yes' }],
  ])('refuses %s', async (_label, extra) => {
    const response = await send(`${emu.url}/_emulator/store`, {
      method: 'PUT',
      json: { orgs: { acme: [{ ...VALID, ...extra }] } },
      dispatcher: emu.agent,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: 'Invalid store document',
      errors: { [`orgs.acme[0].${Object.keys(extra)[0]}`]: expect.any(String) },
    });
  });

  it('seeds names and orgs with ~', async () => {
    await emu.putStore({ orgs: { acme: [{ ...VALID, name: 'a~b' }], 'x~y': [] } });
    expect((await api.read('a~b')).status).toBe(200);
  });
});

describe('archived environments in the --data file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'envsync-archive-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('keeps archived environments and require_provenance across a restart', async () => {
    const file = join(dir, 'store.json');
    const options = {
      profile: 'kosli' as const,
      dataFile: file,
      tokens: [{ token: TOKEN, orgs: null }],
    };
    const first = await startTestEmulator(options);
    const firstApi = apiClient(first);
    await firstApi.put({ ...VALID, require_provenance: true });
    await firstApi.put({ ...VALID, name: 'dev' });
    await firstApi.archive('dev');
    const before = await first.getStore();
    await first.close();
    const saved: unknown = JSON.parse(await readFile(file, 'utf8'));
    expect(saved).toEqual(before);

    const second = await startTestEmulator(options);
    try {
      const secondApi = apiClient(second);
      expect(await second.getStore()).toEqual(before);
      expect((await secondApi.read('dev')).body).toEqual({ message: archivedMessage('dev') });
      expect((await secondApi.read('prod')).body).toMatchObject({ require_provenance: true });
    } finally {
      await second.close();
    }
  });

  it('loads a file written before archived and require_provenance existed', async () => {
    const file = join(dir, 'old.json');
    await writeFile(
      file,
      JSON.stringify({
        version: 1,
        orgs: { acme: [{ name: 'prod', type: 'K8S', description: 'd' }] },
      }),
    );
    const emulator = await startTestEmulator({ profile: 'kosli', dataFile: file });
    try {
      expect((await emulator.getStore()).orgs.acme).toEqual([
        expect.objectContaining({ archived: false, require_provenance: false }),
      ]);
    } finally {
      await emulator.close();
    }
  });
});
