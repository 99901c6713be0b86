/**
 * Every route outside the contract, in both profiles: the kosli profile checks method, token,
 * scope and org as for the contract's routes and counts each under its own pattern; the spec
 * profile answers 404 to all of them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { SendOptions, TestEmulator } from '../helpers/emulator.ts';
import { TOKEN, apiClient, policyForm } from './api-client.ts';
import type { ApiClient } from './api-client.ts';

const LIMITED = 'beta-only-token';
const FORM = policyForm({ name: 'sox', type: 'env' }, 'a: 1\n');

interface Operation {
  readonly label: string;
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH';
  /** The path for org `acme`; `{org}` is replaced for other orgs. */
  readonly path: string;
  readonly pattern: string;
  readonly allow: string;
  readonly request: SendOptions;
  readonly success: number;
}

const OPERATIONS: readonly Operation[] = [
  {
    label: 'attach policies',
    method: 'POST',
    path: '/api/v2/environments/{org}/prod/policies',
    pattern: '/api/v2/environments/{org}/{name}/policies',
    allow: 'POST, DELETE',
    request: { json: { policy_names: ['sox'] } },
    success: 200,
  },
  {
    label: 'detach policies',
    method: 'DELETE',
    path: '/api/v2/environments/{org}/prod/policies',
    pattern: '/api/v2/environments/{org}/{name}/policies',
    allow: 'POST, DELETE',
    request: { json: { policy_names: ['sox'] } },
    success: 200,
  },
  {
    label: 'set and remove tags',
    method: 'PATCH',
    path: '/api/v2/tags/{org}/environment/prod',
    pattern: '/api/v2/tags/{org}/environment/{name}',
    allow: 'PATCH',
    request: { json: { set_tags: { a: 'b' }, remove_tags: ['c'] } },
    success: 200,
  },
  {
    label: 'rename',
    method: 'PUT',
    path: '/api/v2/environments/{org}/prod/rename',
    pattern: '/api/v2/environments/{org}/{name}/rename',
    allow: 'PUT',
    request: { json: { new_name: 'renamed' } },
    success: 200,
  },
  {
    label: 'archive',
    method: 'PUT',
    path: '/api/v2/environments/{org}/prod/archive',
    pattern: '/api/v2/environments/{org}/{name}/archive',
    allow: 'PUT',
    request: { json: {} },
    success: 200,
  },
  {
    label: 'get one',
    method: 'GET',
    path: '/api/v2/environments/{org}/prod',
    pattern: '/api/v2/environments/{org}/{name}',
    allow: 'GET, HEAD, PATCH',
    request: {},
    success: 200,
  },
  {
    label: 'patch one',
    method: 'PATCH',
    path: '/api/v2/environments/{org}/prod',
    pattern: '/api/v2/environments/{org}/{name}',
    allow: 'GET, HEAD, PATCH',
    request: { json: { description: 'changed' } },
    success: 200,
  },
  {
    label: 'list policies',
    method: 'GET',
    path: '/api/v2/policies/{org}',
    pattern: '/api/v2/policies/{org}',
    allow: 'GET, HEAD, PUT',
    request: {},
    success: 200,
  },
  {
    label: 'get one policy',
    method: 'GET',
    path: '/api/v2/policies/{org}/sox',
    pattern: '/api/v2/policies/{org}/{name}',
    allow: 'GET, HEAD',
    request: {},
    success: 200,
  },
  {
    label: 'create or update a policy',
    method: 'PUT',
    path: '/api/v2/policies/{org}',
    pattern: '/api/v2/policies/{org}',
    allow: 'GET, HEAD, PUT',
    request: { headers: { 'content-type': FORM.contentType }, body: FORM.body },
    // The policy is seeded before each test, so this upload (same YAML) updates it.
    success: 200,
  },
];

function at(operation: Operation, org: string): string {
  return operation.path.replace('{org}', org);
}

describe('kosli profile: the routes outside the contract', () => {
  let emu: TestEmulator;
  let api: ApiClient;
  beforeAll(async () => {
    emu = await startTestEmulator({
      profile: 'kosli',
      orgs: ['acme', 'beta'],
      tokens: [
        { token: TOKEN, orgs: null },
        { token: LIMITED, orgs: ['beta'] },
      ],
    });
    api = apiClient(emu);
  });
  afterAll(() => emu.close());
  beforeEach(async () => {
    await emu.reset();
    await emu.putStore({
      orgs: { acme: [{ name: 'prod', type: 'K8S', description: 'p', policies: ['sox'] }] },
      policies: { acme: [{ name: 'sox', versions: [{ policy_yaml: 'a: 1\n' }] }] },
    });
  });

  const request = (operation: Operation, org: string, headers: Record<string, string>) =>
    send(`${emu.url}${at(operation, org)}`, {
      ...operation.request,
      method: operation.method,
      headers: { ...operation.request.headers, ...headers },
      dispatcher: emu.agent,
    });

  it.each(OPERATIONS)('$label: succeeds with $success', async (operation) => {
    const response = await api.call(at(operation, 'acme'), {
      ...operation.request,
      method: operation.method,
    });
    expect(response.status).toBe(operation.success);
    const [last] = await emu.getRequests(1);
    expect(last?.route).toBe(`${operation.method} ${operation.pattern}`);
    const stats = await emu.getStats();
    expect(stats.byRoute[`${operation.method} ${operation.pattern}`]).toBe(1);
  });

  it.each(OPERATIONS)('$label: 401 without a token, 401 with an unknown one', async (op) => {
    const none = await request(op, 'acme', {});
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer /);
    expect((await request(op, 'acme', { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await emu.getStore()).orgs.acme?.[0]).toMatchObject({
      description: 'p',
      archived: false,
    });
  });

  it.each(OPERATIONS)('$label: 403 for a token limited to another org', async (op) => {
    const response = await request(op, 'acme', { authorization: `Bearer ${LIMITED}` });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({
      message: "You don't have permission to access this resource",
    });
  });

  it.each(OPERATIONS)('$label: 404 for an org that does not exist', async (op) => {
    const response = await request(op, 'gamma', { authorization: `Bearer ${TOKEN}` });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: "Organization 'gamma' does not exist" });
  });

  it.each(OPERATIONS)('$label: 405 with Allow for another method', async (op) => {
    const response = await api.call(at(op, 'acme'), { method: 'OPTIONS' });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe(op.allow);
  });
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
      orgs: { acme: [{ name: 'prod', type: 'K8S', description: 'p' }] },
      policies: { acme: [{ name: 'sox', versions: [{ policy_yaml: 'a: 1\n' }] }] },
    });
    const response = await api.call(at(operation, 'acme'), {
      ...operation.request,
      method: operation.method,
    });
    expect(response.status).toBe(404);
    expect((await emu.getStats()).byRoute).toEqual({ other: 1 });
    expect((await emu.getStore()).orgs.acme).toEqual([
      expect.objectContaining({ name: 'prod', tags: {}, policies: [], archived: false }),
    ]);
  });
});
