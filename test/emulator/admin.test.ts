/** The admin endpoints under /_emulator/: stats, request log, store, faults, reset. */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { isLoopback } from '../../src/emulator/http.ts';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { JsonResponse, SendOptions } from '../helpers/emulator.ts';
import { VALID } from './api-client.ts';

const emu = await startTestEmulator({ orgs: ['acme', 'beta'], seed: 9, requestLogSize: 5 });
afterAll(() => emu.close());
beforeEach(() => emu.reset());

const api = (path: string, options: SendOptions = {}): Promise<JsonResponse> =>
  send(`${emu.url}/api/v2/environments/${path}`, {
    ...options,
    headers: { authorization: 'Bearer t', ...options.headers },
    dispatcher: emu.agent,
  });
const put = (json: object, org = 'acme') =>
  api(org, { method: 'PUT', json: { ...VALID, ...json } });
const admin = (path: string, options: SendOptions = {}): Promise<JsonResponse> =>
  send(`${emu.url}/_emulator/${path}`, { ...options, dispatcher: emu.agent });

describe('GET /_emulator/stats', () => {
  it('counts API requests by method, status and route, but not admin requests', async () => {
    await put({});
    await api('acme');
    await api('nowhere');
    await api('acme', { method: 'DELETE' });
    await send(`${emu.url}/nothing/here`, { dispatcher: emu.agent });
    await emu.getStore();
    expect(await emu.getStats()).toEqual({
      total: 5,
      inFlight: 0,
      byMethod: { PUT: 1, GET: 3, DELETE: 1 },
      byStatus: { '201': 1, '200': 1, '404': 2, '405': 1 },
      byRoute: {
        'PUT /api/v2/environments/{org}': 1,
        'GET /api/v2/environments/{org}': 2,
        'DELETE /api/v2/environments/{org}': 1,
        other: 1,
      },
      faults: { latency: 0, reset: 0, hang: 0, fail: 0, conflict: 0 },
      throttled: 0,
      timeouts: { headers: 0, request: 0 },
      environments: 1,
    });
  });
});

describe('GET /_emulator/requests', () => {
  it('lists recent requests oldest first, without headers', async () => {
    await put({});
    await api('acme?page=1');
    const requests = await emu.getRequests();
    const time = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const created = { method: 'PUT', path: '/api/v2/environments/acme', status: 201 };
    const get = { method: 'GET', path: '/api/v2/environments/acme?page=1', status: 200 };
    const route = 'PUT /api/v2/environments/{org}';
    expect(requests).toEqual([
      { time, ...created, route, durationMs: expect.any(Number) },
      expect.objectContaining(get),
    ]);
    expect(JSON.stringify(requests)).not.toContain('Bearer');
  });

  it('keeps only the last entries of the ring buffer and honours ?limit', async () => {
    for (let i = 0; i < 7; i += 1) await api(`acme?i=${i}`);
    const paths = async (limit: number) =>
      (await emu.getRequests(limit)).map((entry) => entry.path);
    const of = (...numbers: number[]) => numbers.map((i) => `/api/v2/environments/acme?i=${i}`);
    expect(await paths(1000)).toEqual(of(2, 3, 4, 5, 6));
    expect(await paths(2)).toEqual(of(5, 6));
  });

  it.each([['0'], ['x'], ['-1'], ['1.5']])('answers 400 to limit=%s', async (limit) => {
    const response = await admin(`requests?limit=${limit}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ errors: { limit: expect.any(String) } });
  });
});

describe('GET and PUT /_emulator/store', () => {
  it('returns the whole store by org', async () => {
    for (const [name, org] of [['prod', 'beta'], ['b'], ['a']]) await put({ name }, org);
    const store = await emu.getStore();
    expect([store.version, Object.keys(store.orgs)]).toEqual([1, ['acme', 'beta']]);
    expect(store.orgs.acme?.map((env) => env.name)).toEqual(['a', 'b']);
  });

  it('replaces the store with a seeded scenario, filling in defaults', async () => {
    await put({ name: 'dropped' });
    const seeded = { name: 'seeded', type: 'S3', description: 'from a scenario' };
    const view = { name: 'view', type: 'logical', description: 'a logical one' };
    const stored = await emu.putStore({
      orgs: {
        acme: [
          { ...seeded, policies: ['p'] },
          { ...view, last_modified_at: 12.5 },
        ],
      },
    });
    const defaults = { include_scaling: false, require_provenance: false, tags: {}, state: null };
    expect(stored.orgs.acme).toEqual([
      expect.objectContaining({ org: 'acme', name: 'seeded', policies: ['p'], ...defaults }),
      expect.objectContaining({ name: 'view', included_environments: [], last_modified_at: 12.5 }),
    ]);
    const env = [seeded, view].map((entry) => ({ org: 'acme', ...entry }));
    expect((await api('acme')).body).toEqual({ env });
  });

  it('round-trips: what GET returns, PUT accepts unchanged (archived ones, state and old names too)', async () => {
    await put({ policies: ['x'] });
    const old = { ...VALID, name: 'old~name' };
    const archived = { ...old, archived: true, state: false, require_provenance: true };
    await emu.putStore({ orgs: { ...(await emu.getStore()).orgs, 'x~y': [archived] } });
    const before = await emu.getStore();
    expect(before.orgs['x~y']).toEqual([expect.objectContaining(archived)]);
    await emu.reset();
    expect(await emu.putStore(before)).toEqual(before);
  });

  it.each([
    ['a JSON array', []],
    ['no orgs', { version: 1 }],
    ['orgs as an array', { orgs: [] }],
    ['an unknown top-level field', { orgs: {}, extra: 1 }],
    ['a wrong version', { version: 2, orgs: {} }],
    ['a bad org name', { orgs: { 'bad org': [] } }],
    ['environments not in an array', { orgs: { acme: {} } }],
    ['an environment without a name', { orgs: { acme: [{ type: 'K8S', description: '' }] } }],
    ['a bad environment name', { orgs: { acme: [{ ...VALID, name: '-x' }] } }],
    ['include_scaling as a string', { orgs: { acme: [{ ...VALID, include_scaling: 'no' }] } }],
    ['an unknown environment field', { orgs: { acme: [{ ...VALID, colour: 'red' }] } }],
    ['another org in "org"', { orgs: { acme: [{ ...VALID, org: 'beta' }] } }],
    ['the same live name twice', { orgs: { acme: [VALID, VALID] } }],
    ['require_provenance null', { orgs: { acme: [{ ...VALID, require_provenance: null }] } }],
    ['archived as a string', { orgs: { acme: [{ ...VALID, archived: 'yes' }] } }],
    ['state as a string', { orgs: { acme: [{ ...VALID, state: 'compliant' }] } }],
  ])('rejects %s with 400 and keeps the old store', async (_label, document) => {
    await put({});
    const response = await admin('store', { method: 'PUT', json: document });
    const invalid = { message: 'Invalid store document', errors: expect.any(Object) };
    expect([response.status, response.body]).toEqual([400, invalid]);
    expect((await emu.getStore()).orgs.acme).toHaveLength(1);
  });

  it('rejects invalid JSON with 400', async () => {
    const headers = { 'content-type': 'application/json' };
    const response = await admin('store', { method: 'PUT', headers, body: '{"orgs": ' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ errors: { payload: expect.any(String) } });
  });
});

describe('POST /_emulator/reset', () => {
  it('clears the store, counters and log, and restores the start-up faults and seed', async () => {
    await put({});
    await emu.setFaults({ failRate: 1, seed: 123 });
    await api('acme');
    const response = await admin('reset', { method: 'POST' });
    expect([response.status, response.body]).toEqual([200, { message: expect.any(String) }]);
    expect((await emu.getStore()).orgs).toEqual({});
    expect(await emu.getStats()).toMatchObject({ total: 0, byStatus: {}, environments: 0 });
    expect(await emu.getRequests()).toEqual([]);
    expect(await emu.getFaults()).toMatchObject({ failRate: 0, seed: 9 });
    expect((await api('acme')).status).toBe(200);
  });
});

describe('admin routing', () => {
  it('answers /_emulator/health without a token, and 404 to an unknown endpoint', async () => {
    expect((await admin('health')).body).toEqual({ status: 'ok' });
    const unknown = await admin('nope');
    const message = expect.stringContaining('/_emulator/health');
    expect([unknown.status, unknown.body]).toEqual([404, { message }]);
  });

  it.each([
    ['stats', 'POST', 'GET, HEAD'],
    ['store', 'DELETE', 'GET, HEAD, PUT'],
    ['faults', 'PUT', 'GET, HEAD, PATCH'],
    ['reset', 'GET', 'POST'],
  ] as const)('answers 405 to %s with %s', async (name, method, allow) => {
    const response = await admin(name, { method });
    expect([response.status, response.headers.allow]).toEqual([405, allow]);
  });
});

describe('cross-site requests', () => {
  const SEEDED = { orgs: { acme: [{ name: 'keep', type: 'K8S', description: 'seeded' }] } };
  const kept = async () => (await emu.getStore()).orgs['acme']?.map((env) => env.name);

  it.each([
    ['reset', 'POST', 'text/plain', '{}'],
    ['reset', 'POST', 'application/x-www-form-urlencoded', 'a=1'],
    ['reset', 'POST', 'multipart/form-data; boundary=x', '--x--\r\n'],
    ['reset', 'POST', 'text/plain;charset=UTF-8', ''],
    ['reset', 'POST', undefined, 'x'],
    ['store', 'PUT', 'text/plain', '{"orgs": {}}'],
    ['faults', 'PATCH', 'text/plain', '{"failRate": 1}'],
  ] as const)(
    'refuses %s (%s) with a %s body (a form or no-cors fetch): 415, nothing changed',
    async (name, method, type, body) => {
      await emu.putStore(SEEDED);
      const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
      const response = await admin(name, { method, headers, body });
      const message = expect.stringContaining('application/json');
      expect([response.status, response.body]).toEqual([415, { message }]);
      expect(await kept()).toEqual(['keep']);
      expect(await emu.getFaults()).toMatchObject({ failRate: 0 });
    },
  );

  it.each([
    ['Origin', { origin: 'https://evil.example' }],
    ['Origin: null', { origin: 'null' }],
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['a DNS-rebound Host', { host: 'evil.example' }],
  ])('refuses a request with %s: 403, store kept', async (_what, headers) => {
    await emu.putStore(SEEDED);
    const json = { ...headers, 'content-type': 'application/json' };
    const reset = await admin('reset', { method: 'POST', headers: json, body: '{}' });
    const message = expect.stringMatching(/admin endpoints/);
    expect([reset.status, reset.body]).toEqual([403, { message }]);
    expect((await admin('store', { headers })).status).toBe(403);
    expect(await kept()).toEqual(['keep']);
  });

  it('answers what curl and the test clients send: JSON bodies, a bare POST, loopback Host names', async () => {
    await emu.putStore(SEEDED);
    const headers = { 'content-type': 'application/json; charset=utf-8' };
    const patch = await admin('faults', { method: 'PATCH', headers, body: '{"seed": 5}' });
    expect(patch.status).toBe(200);
    for (const host of ['localhost', `127.0.0.1:${emu.port}`, `[::1]:${emu.port}`, 'LOCALHOST:1']) {
      expect((await admin('health', { headers: { host } })).status, host).toBe(200);
    }
    expect((await admin('stats', { headers: { 'sec-fetch-site': 'none' } })).status).toBe(200);
    expect((await admin('reset', { method: 'POST' })).status).toBe(200);
    expect(await kept()).toBeUndefined();
  });
});

describe('loopback check', () => {
  it.each([
    ...['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'].map(
      (address) => [address, true] as const,
    ),
    ...['10.0.0.5', '192.168.1.1', '::ffff:10.0.0.5', 'fe80::1', undefined].map(
      (address) => [address, false] as const,
    ),
  ])('treats %s as loopback: %s', (address, expected) => {
    expect(isLoopback(address)).toBe(expected);
  });
});
