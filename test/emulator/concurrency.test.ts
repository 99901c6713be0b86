/** Many writers at once: every write lands exactly once. */
import { Agent } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { TestEmulator } from '../helpers/emulator.ts';

let emu: TestEmulator;

beforeAll(async () => {
  emu = await startTestEmulator({ orgs: ['acme'], tokens: [{ token: 't', orgs: ['acme'] }] });
});
afterAll(() => emu.close());
beforeEach(() => emu.reset());

describe('concurrent writes', () => {
  it('lands 500 concurrent PUTs of distinct environments, none lost or duplicated', async () => {
    // One connection per request: 500 sockets at once, the hardest case for the server.
    const agent = new Agent({ connections: null, pipelining: 1 });
    try {
      const names = Array.from({ length: 500 }, (_, i) => `env-${String(i).padStart(3, '0')}`);
      const responses = await Promise.all(
        names.map((name) =>
          send(`${emu.url}/api/v2/environments/acme`, {
            method: 'PUT',
            headers: { authorization: 'Bearer t' },
            json: { name, description: `d-${name}`, type: 'K8S' },
            dispatcher: agent,
          }),
        ),
      );
      expect(responses.filter((response) => response.status === 201)).toHaveLength(500);
      const store = await emu.getStore();
      expect(store.orgs.acme?.map((env) => env.name)).toEqual(names);
      expect(store.orgs.acme?.every((env) => env.description === `d-${env.name}`)).toBe(true);
      const stats = await emu.getStats();
      expect(stats.byStatus['201']).toBe(500);
      expect(stats.environments).toBe(500);
      const listing = await send(`${emu.url}/api/v2/environments/acme`, {
        headers: { authorization: 'Bearer t' },
        dispatcher: agent,
      });
      expect(listing.body).toMatchObject({ env: expect.any(Array) });
      expect(
        new Set(JSON.parse(listing.text).env.map((env: { name: string }) => env.name)).size,
      ).toBe(500);
    } finally {
      await agent.close();
    }
  });

  it('keeps one environment under 100 concurrent updates of the same name', async () => {
    const descriptions = Array.from({ length: 100 }, (_, i) => `version ${i}`);
    const responses = await Promise.all(
      descriptions.map((description) =>
        send(`${emu.url}/api/v2/environments/acme`, {
          method: 'PUT',
          headers: { authorization: 'Bearer t' },
          json: { name: 'shared', description, type: 'S3' },
          dispatcher: emu.agent,
        }),
      ),
    );
    expect(responses.every((response) => response.status === 201)).toBe(true);
    const store = await emu.getStore();
    expect(store.orgs.acme).toHaveLength(1);
    expect(descriptions).toContain(store.orgs.acme?.[0]?.description);
  });
});
