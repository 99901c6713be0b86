/**
 * The spec profile stays the contract: production's extra fields, types, null optionals, `~` in
 * names and the routes for one environment are all refused.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestEmulator } from '../helpers/emulator.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { TOKEN, apiClient } from './api-client.ts';
import type { ApiClient } from './api-client.ts';

const VALID = { name: 'prod', description: 'Production', type: 'K8S' };

let emu: TestEmulator;
let api: ApiClient;

beforeAll(async () => {
  emu = await startTestEmulator({ profile: 'spec', tokens: [{ token: TOKEN, orgs: null }] });
  api = apiClient(emu);
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

describe('spec profile: production-only input is refused', () => {
  it.each([
    ['require_provenance', { require_provenance: true }, 'unknown field'],
    ['require_provenance null', { require_provenance: null }, 'unknown field'],
    ['included_environments', { type: 'logical', included_environments: [] }, 'unknown field'],
    ['included_environments with a member', { included_environments: ['x'] }, 'unknown field'],
    ['include_scaling null', { include_scaling: null }, 'must be a boolean, got null'],
    ['policies null', { policies: null }, 'must be an array of strings'],
  ])('refuses %s with 400 naming the field', async (_label, extra, text) => {
    const response = await api.put({ ...VALID, ...extra });
    const field = Object.keys(extra).find((key) => key !== 'type') ?? '';
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: 'Input payload validation failed',
      errors: { [field]: text },
    });
    expect((await emu.getStore()).orgs).toEqual({});
  });

  it.each([['ECS'], ['lambda'], ['server'], ['docker'], ['azure-apps'], ['cloud-run']])(
    'refuses the type %s',
    async (type) => {
      const response = await api.put({ ...VALID, type });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        message: 'Input payload validation failed',
        errors: { type: `'${type}' is not one of K8S, S3, logical` },
      });
    },
  );

  it.each([['a~b'], ['prod~1']])('refuses the name %s', async (name) => {
    const response = await api.put({ ...VALID, name });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: 'Input payload validation failed',
      errors: { name: `'${name}' does not match ^[A-Za-z0-9][A-Za-z0-9._-]*$` },
    });
  });

  it('answers 404 for an org with ~ in the path', async () => {
    const response = await api.put(VALID, 'acme~eu');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ message: "Organization 'acme~eu' does not exist" });
  });

  it('serves neither the read of one environment nor the archive route', async () => {
    await api.put(VALID);
    expect((await api.read('prod')).status).toBe(404);
    expect((await api.archive('prod')).status).toBe(404);
    expect((await emu.getStore()).orgs.acme).toEqual([
      expect.objectContaining({ name: 'prod', archived: false }),
    ]);
  });

  it('gives include_scaling and policies their defaults on a create, and keeps them on an update that leaves them out', async () => {
    await api.put(VALID);
    expect((await emu.getStore()).orgs.acme).toEqual([
      expect.objectContaining({ include_scaling: false, policies: [] }),
    ]);
    await api.put({ ...VALID, include_scaling: true, policies: ['p'] });
    await api.put({ ...VALID, description: 'changed' });
    expect((await emu.getStore()).orgs.acme).toEqual([
      expect.objectContaining({ description: 'changed', include_scaling: true, policies: ['p'] }),
    ]);
  });
});
