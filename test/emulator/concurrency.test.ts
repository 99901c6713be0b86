/** Many writers at once: every write lands exactly once. */
import { Agent } from 'undici';
import type { Dispatcher } from 'undici';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';

const emu = await startTestEmulator({ orgs: ['acme'], tokens: [{ token: 't', orgs: ['acme'] }] });
afterAll(() => emu.close());
beforeEach(() => emu.reset());

const headers = { authorization: 'Bearer t' };
const put = (json: object, dispatcher: Dispatcher = emu.agent) =>
  send(`${emu.url}/api/v2/environments/acme`, { method: 'PUT', headers, json, dispatcher });

describe('concurrent writes', () => {
  it('lands 500 concurrent PUTs of distinct environments, none lost or duplicated', async () => {
    // One connection per request: 500 sockets at once, the hardest case for the server.
    const agent = new Agent({ connections: null, pipelining: 1 });
    try {
      const names = Array.from({ length: 500 }, (_, i) => `env-${String(i).padStart(3, '0')}`);
      const json = (name: string) => ({ name, description: `d-${name}`, type: 'K8S' });
      const responses = await Promise.all(names.map((name) => put(json(name), agent)));
      expect(responses.filter((response) => response.status === 201)).toHaveLength(500);
      const store = await emu.getStore();
      expect(store.orgs.acme?.map((env) => env.name)).toEqual(names);
      expect(store.orgs.acme?.every((env) => env.description === `d-${env.name}`)).toBe(true);
      const stats = await emu.getStats();
      expect([stats.byStatus['201'], stats.environments]).toEqual([500, 500]);
      const url = `${emu.url}/api/v2/environments/acme`;
      const listing = await send(url, { headers, dispatcher: agent });
      const listed = (listing.body as { env: { name: string }[] }).env.map((env) => env.name);
      expect(new Set(listed).size).toBe(500);
    } finally {
      await agent.close();
    }
  });

  it('keeps one environment under 100 concurrent updates of the same name', async () => {
    const descriptions = Array.from({ length: 100 }, (_, i) => `version ${i}`);
    const json = (description: string) => ({ name: 'shared', description, type: 'S3' });
    const responses = await Promise.all(descriptions.map((description) => put(json(description))));
    expect(responses.every((response) => response.status === 201)).toBe(true);
    const store = await emu.getStore();
    expect(store.orgs.acme).toHaveLength(1);
    expect(descriptions).toContain(store.orgs.acme?.[0]?.description);
  });
});
