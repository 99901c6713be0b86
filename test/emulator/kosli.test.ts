/** The `kosli` profile: production's listing shape, pagination, ignored updates, one-env reads. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { JsonResponse, SendOptions, TestEmulator } from '../helpers/emulator.ts';

const NOW_MS = 1_700_000_000_250;
const VALID = { name: 'prod', description: 'Production', type: 'K8S' };

let emu: TestEmulator;
let nowMs = NOW_MS;

beforeAll(async () => {
  emu = await startTestEmulator({
    profile: 'kosli',
    orgs: ['acme'],
    tokens: [{ token: 'kosli-token', orgs: null }],
    now: () => nowMs,
  });
});
afterAll(() => emu.close());
beforeEach(async () => {
  nowMs = NOW_MS;
  await emu.reset();
});

function call(path: string, options: SendOptions = {}): Promise<JsonResponse> {
  return send(`${emu.url}${path}`, {
    ...options,
    headers: { authorization: 'Bearer kosli-token', ...options.headers },
    dispatcher: emu.agent,
  });
}

function put(json: unknown): Promise<JsonResponse> {
  return call('/api/v2/environments/acme', { method: 'PUT', json });
}

/** Seeds `count` environments env-00 .. env-NN through the admin store endpoint. */
async function seed(count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `env-${String(i).padStart(2, '0')}`);
  await emu.putStore({
    orgs: { acme: names.toReversed().map((name) => ({ name, type: 'K8S', description: name })) },
  });
  return names;
}

/** The `name` of each entry of a bare-array listing or an envelope. */
function namesIn(body: unknown): unknown[] {
  const list =
    typeof body === 'object' && body !== null && 'environments' in body ? body.environments : body;
  if (!Array.isArray(list)) return [];
  return list.map((env: unknown) =>
    typeof env === 'object' && env !== null && 'name' in env ? env.name : undefined,
  );
}

describe('kosli profile: PUT', () => {
  it('answers 201 "OK" for create and update', async () => {
    const created = await put(VALID);
    expect(created.status).toBe(201);
    expect(created.body).toBe('OK');
    const updated = await put({ ...VALID, description: 'Again' });
    expect(updated.status).toBe(201);
    expect(updated.body).toBe('OK');
  });

  it.each([
    ['ECS'],
    ['lambda'],
    ['server'],
    ['docker'],
    ['azure-apps'],
    ['cloud-run'],
    ['K8S'],
    ['S3'],
    ['logical'],
  ])('accepts the type %s', async (type) => {
    expect((await put({ ...VALID, type })).status).toBe(201);
  });

  it.each([['ecs'], ['Lambda'], ['k8s'], ['kubernetes']])('rejects the type %s', async (type) => {
    const response = await put({ ...VALID, type });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: 'Input payload validation failed',
      errors: { type: expect.any(String) },
    });
  });

  it('ignores description "" on an existing environment (keeps the old text)', async () => {
    await put(VALID);
    expect((await put({ ...VALID, description: '' })).status).toBe(201);
    const listing = await call('/api/v2/environments/acme');
    expect(listing.body).toEqual([expect.objectContaining({ description: 'Production' })]);
  });

  it('accepts description "" when creating', async () => {
    await put({ ...VALID, description: '' });
    const listing = await call('/api/v2/environments/acme');
    expect(listing.body).toEqual([expect.objectContaining({ description: '' })]);
  });

  it('ignores include_scaling true on an existing environment (stays false)', async () => {
    await put({ ...VALID, include_scaling: false });
    expect((await put({ ...VALID, include_scaling: true })).status).toBe(201);
    const listing = await call('/api/v2/environments/acme');
    expect(listing.body).toEqual([expect.objectContaining({ include_scaling: false })]);
  });

  it('applies the other fields of such an update', async () => {
    await put(VALID);
    await put({ ...VALID, description: '', include_scaling: true, type: 'S3', policies: ['p'] });
    const listing = await call('/api/v2/environments/acme');
    expect(listing.body).toEqual([
      expect.objectContaining({
        description: 'Production',
        include_scaling: false,
        type: 'S3',
        policies: ['p'],
      }),
    ]);
  });
});

describe('kosli profile: GET listing', () => {
  it('answers a bare array with the production fields, sorted by name', async () => {
    await put({ ...VALID, name: 'zeta', type: 'logical', policies: ['p1'] });
    nowMs += 1500;
    await put({ ...VALID, name: 'alpha', include_scaling: true });
    const response = await call('/api/v2/environments/acme');
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      {
        org: 'acme',
        name: 'alpha',
        type: 'K8S',
        description: 'Production',
        include_scaling: true,
        policies: null,
        tags: {},
        last_modified_at: 1_700_000_001.75,
        last_reported_at: null,
        last_changed_at: 1_700_000_001.75,
        state: null,
        included_environments: null,
      },
      {
        org: 'acme',
        name: 'zeta',
        type: 'logical',
        description: 'Production',
        include_scaling: false,
        policies: ['p1'],
        tags: {},
        last_modified_at: 1_700_000_000.25,
        last_reported_at: null,
        last_changed_at: 1_700_000_000.25,
        state: null,
        included_environments: [],
      },
    ]);
  });

  it('moves last_modified_at on every write but last_changed_at only on a change', async () => {
    await put(VALID);
    nowMs += 1000;
    await put(VALID);
    const listing = await call('/api/v2/environments/acme');
    expect(listing.body).toEqual([
      expect.objectContaining({
        last_modified_at: 1_700_000_001.25,
        last_changed_at: 1_700_000_000.25,
      }),
    ]);
  });

  it('leaves archived environments out', async () => {
    await emu.putStore({
      orgs: {
        acme: [
          { name: 'prod', type: 'K8S', description: 'old one', archived: true },
          { name: 'prod', type: 'K8S', description: 'new one' },
          { name: 'gone', type: 'S3', description: 'x', archived: true },
        ],
      },
    });
    const response = await call('/api/v2/environments/acme');
    expect(response.body).toEqual([
      expect.objectContaining({ name: 'prod', description: 'new one' }),
    ]);
    expect(JSON.stringify(response.body)).not.toContain('archived');
  });

  it('answers the paginated envelope with page and per_page', async () => {
    const all = await seed(45);
    const response = await call('/api/v2/environments/acme?page=2&per_page=20');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      page: 2,
      per_page: 20,
      total_pages: 3,
      total_count: 45,
      environments: all.slice(20, 40).map((name) => expect.objectContaining({ name, org: 'acme' })),
      _links: { self: { href: `${emu.url}/api/v2/environments/acme?page=2&per_page=20` } },
    });
  });

  it('serves the last, partial page and an empty page past the end', async () => {
    const all = await seed(45);
    const last = await call('/api/v2/environments/acme?page=3&per_page=20');
    expect(namesIn(last.body)).toEqual(all.slice(40));
    const past = await call('/api/v2/environments/acme?page=4&per_page=20');
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({ page: 4, total_pages: 3, total_count: 45, environments: [] });
  });

  it('defaults per_page to 20 when only page is given', async () => {
    await seed(25);
    const response = await call('/api/v2/environments/acme?page=1');
    expect(response.body).toMatchObject({ page: 1, per_page: 20, total_pages: 2, total_count: 25 });
    expect(namesIn(response.body)).toHaveLength(20);
  });

  it('defaults page to 1 when only per_page is given, up to 50 per page', async () => {
    const all = await seed(55);
    const response = await call('/api/v2/environments/acme?per_page=50');
    expect(response.body).toMatchObject({ page: 1, per_page: 50, total_pages: 2, total_count: 55 });
    expect(namesIn(response.body)).toEqual(all.slice(0, 50));
  });

  it('answers an envelope with zero pages for an empty org', async () => {
    const response = await call('/api/v2/environments/acme?page=1&per_page=10');
    expect(response.body).toMatchObject({ total_pages: 0, total_count: 0, environments: [] });
  });

  it.each([
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['per_page=0', 'per_page'],
    ['per_page=51', 'per_page'],
    ['per_page=x', 'per_page'],
    ['page=&per_page=10', 'page'],
  ])('answers 400 to %s', async (query, field) => {
    const response = await call(`/api/v2/environments/acme?${query}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: expect.any(String),
      errors: { [field]: expect.any(String) },
    });
  });
});

describe('kosli profile: GET one environment', () => {
  it('answers one environment with the listing fields', async () => {
    await put(VALID);
    const response = await call('/api/v2/environments/acme/prod');
    expect(response.status).toBe(200);
    expect(response.body).toEqual(
      expect.objectContaining({ org: 'acme', name: 'prod', type: 'K8S', include_scaling: false }),
    );
    expect(response.body).not.toHaveProperty('archived');
  });

  it('answers 404 with the production message for an unknown environment', async () => {
    const response = await call('/api/v2/environments/acme/nope');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({
      message: "Environment named 'nope' does not exist for organization 'acme'",
    });
  });

  it('requires a token and an existing org', async () => {
    const anonymous = await send(`${emu.url}/api/v2/environments/acme/prod`, {
      dispatcher: emu.agent,
    });
    expect(anonymous.status).toBe(401);
    const unknownOrg = await call('/api/v2/environments/other/prod');
    expect(unknownOrg.status).toBe(404);
    expect(unknownOrg.body).toEqual({ message: "Organization 'other' does not exist" });
  });

  it('answers 405 to PUT on one environment', async () => {
    const response = await call('/api/v2/environments/acme/prod', { method: 'PUT', json: VALID });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
  });
});
