/**
 * Every route outside the contract, in both profiles: the kosli profile checks method, token,
 * scope and org as for the contract's routes and counts each under its own pattern; the spec
 * profile answers 404 to all of them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { SendOptions, TestEmulator } from '../helpers/emulator.ts';
import { apiClient, NOW_MS, policyForm, startKosli, TOKEN } from './api-client.ts';
import type { ApiClient } from './api-client.ts';

const LIMITED = 'beta-only-token';
const FORM = policyForm({ name: 'sox', type: 'env' }, 'a: 1\n');
const NAMES = { json: { policy_names: ['sox'] } };
const TAGS = { json: { set_tags: { a: 'b' }, remove_tags: ['c'] } };
const UPLOAD = { headers: { 'content-type': FORM.contentType }, body: FORM.body };
const SEED = {
  orgs: { acme: [{ name: 'prod', type: 'K8S', description: 'p', policies: ['sox'] }] },
  policies: { acme: [{ name: 'sox', versions: [{ policy_yaml: 'a: 1\n' }] }] },
};

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH';
/** One operation: its path under /api/v2/ for org `{org}`, and the methods its route allows. */
function op(label: string, method: Method, path: string, allow: string, request: SendOptions = {}) {
  const route = `${method} /api/v2/${path.replace(/\/(prod|sox)\b/, '/{name}')}`;
  return { label, method, path: `/api/v2/${path}`, allow, request, route };
}

const OPERATIONS = [
  op('attach policies', 'POST', 'environments/{org}/prod/policies', 'POST, DELETE', NAMES),
  op('detach policies', 'DELETE', 'environments/{org}/prod/policies', 'POST, DELETE', NAMES),
  op('set and remove tags', 'PATCH', 'tags/{org}/environment/prod', 'PATCH', TAGS),
  op('rename', 'PUT', 'environments/{org}/prod/rename', 'PUT', { json: { new_name: 'renamed' } }),
  op('archive', 'PUT', 'environments/{org}/prod/archive', 'PUT', { json: {} }),
  op('get one', 'GET', 'environments/{org}/prod', 'GET, HEAD, PATCH'),
  op('patch one', 'PATCH', 'environments/{org}/prod', 'GET, HEAD, PATCH', { json: {} }),
  op('list policies', 'GET', 'policies/{org}', 'GET, HEAD, PUT'),
  op('get one policy', 'GET', 'policies/{org}/sox', 'GET, HEAD'),
  // The policy is seeded before each test, so this upload (same YAML) updates it: 200.
  op('create or update a policy', 'PUT', 'policies/{org}', 'GET, HEAD, PUT', UPLOAD),
];

describe('kosli profile: the routes outside the contract', () => {
  let emu: TestEmulator;
  let api: ApiClient;
  beforeAll(async () => {
    const tokens = [
      { token: TOKEN, orgs: null },
      { token: LIMITED, orgs: ['beta'] },
    ];
    ({ emu, api } = await startKosli(() => NOW_MS, { tokens }));
  });
  afterAll(() => emu.close());
  beforeEach(async () => {
    await emu.reset();
    await emu.putStore(SEED);
  });

  const at = (operation: (typeof OPERATIONS)[number], org: string, token?: string) => {
    const auth = token === undefined ? {} : { authorization: `Bearer ${token}` };
    return send(`${emu.url}${operation.path.replace('{org}', org)}`, {
      ...operation.request,
      method: operation.method,
      headers: { ...operation.request.headers, ...auth },
      dispatcher: emu.agent,
    });
  };

  it.each(OPERATIONS)('$label: succeeds with 200, counted under its route', async (operation) => {
    expect((await at(operation, 'acme', TOKEN)).status).toBe(200);
    expect((await emu.getRequests(1))[0]?.route).toBe(operation.route);
    expect((await emu.getStats()).byRoute[operation.route]).toBe(1);
  });

  it.each(OPERATIONS)(
    '$label: 401, 403, 404 for the token, its scope and the org, 405 with Allow',
    async (operation) => {
      const none = await at(operation, 'acme');
      expect([none.status, none.headers['www-authenticate']]).toEqual([
        401,
        expect.stringMatching(/^Bearer /),
      ]);
      expect((await at(operation, 'acme', 'nope')).status).toBe(401);
      const limited = await at(operation, 'acme', LIMITED);
      const forbidden = { message: "You don't have permission to access this resource" };
      expect([limited.status, limited.body]).toEqual([403, forbidden]);
      const gamma = await at(operation, 'gamma', TOKEN);
      expect([gamma.status, gamma.body]).toEqual([
        404,
        { message: "Organization 'gamma' does not exist" },
      ]);
      const path = operation.path.replace('{org}', 'acme');
      const other = await api.call(path, { method: 'OPTIONS' });
      expect([other.status, other.headers.allow]).toEqual([405, operation.allow]);
      expect((await emu.getStore()).orgs.acme?.[0]).toMatchObject({
        description: 'p',
        archived: false,
      });
    },
  );
});

describe('spec profile: the routes outside the contract do not exist', () => {
  let emu: TestEmulator;
  let api: ApiClient;
  beforeAll(async () => {
    emu = await startTestEmulator({ profile: 'spec', tokens: [{ token: TOKEN, orgs: null }] });
    api = apiClient(emu);
  });
  afterAll(() => emu.close());

  it.each(OPERATIONS)('$label: 404, and counted as "other"', async (operation) => {
    await emu.reset();
    await emu.putStore({
      ...SEED,
      orgs: { acme: [{ name: 'prod', type: 'K8S', description: 'p' }] },
    });
    const path = operation.path.replace('{org}', 'acme');
    const response = await api.call(path, { ...operation.request, method: operation.method });
    expect(response.status).toBe(404);
    expect((await emu.getStats()).byRoute).toEqual({ other: 1 });
    expect((await emu.getStore()).orgs.acme).toEqual([
      expect.objectContaining({ name: 'prod', tags: {}, policies: [], archived: false }),
    ]);
  });
});
