/**
 * Listing faults: a listing that shows another org's environment, an entry with an empty name, or
 * entries without `org`, in both profiles and every shape, so the client's checks on a listing
 * can be tried over real HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { EmulatorOptions, TestEmulator } from '../helpers/emulator.ts';

const AUTH = { authorization: 'Bearer t' };
const started: TestEmulator[] = [];

async function start(options: EmulatorOptions): Promise<TestEmulator> {
  const emu = await startTestEmulator({ orgs: ['acme', 'beta'], ...options });
  started.push(emu);
  return emu;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((emu) => emu.close()));
});

async function list(emu: TestEmulator, org: string, query = ''): Promise<unknown> {
  const response = await send(`${emu.url}/api/v2/environments/${org}${query}`, {
    headers: AUTH,
    dispatcher: emu.agent,
  });
  expect(response.status).toBe(200);
  return response.body;
}

const SEEDED = {
  orgs: {
    acme: [
      { name: 'b-web', type: 'K8S', description: 'Web' },
      { name: 'd-db', type: 'S3', description: 'Data' },
    ],
    beta: [{ name: 'site', type: 'S3', description: 'Site' }],
  },
};
const INTRUDER = { org: 'beta', name: 'c-intruder', type: 'K8S', description: 'not acme' };
const UNNAMED = { org: 'acme', name: '', type: 'K8S', description: 'no name' };

describe('listingExtra', () => {
  it('spec: the extra entries are listed as given, in name order, for their org only', async () => {
    const emu = await start({ profile: 'spec' });
    await emu.putStore(SEEDED);
    await emu.setFaults({ listingExtra: { acme: [INTRUDER, UNNAMED] } });
    expect(await list(emu, 'acme')).toEqual({
      env: [
        UNNAMED,
        { org: 'acme', name: 'b-web', type: 'K8S', description: 'Web' },
        INTRUDER,
        { org: 'acme', name: 'd-db', type: 'S3', description: 'Data' },
      ],
    });
    expect(await list(emu, 'beta')).toEqual({
      env: [{ org: 'beta', name: 'site', type: 'S3', description: 'Site' }],
    });
  });

  it('kosli: in the bare array and on the pages of the envelope, which count them', async () => {
    const emu = await start({ profile: 'kosli' });
    await emu.putStore(SEEDED);
    await emu.setFaults({ listingExtra: { acme: [INTRUDER, UNNAMED] } });
    const bare = (await list(emu, 'acme')) as Record<string, unknown>[];
    expect(bare.map((entry) => entry['name'])).toEqual(['', 'b-web', 'c-intruder', 'd-db']);
    expect(bare[2]).toEqual(INTRUDER);
    const second = await list(emu, 'acme', '?page=2&per_page=2');
    expect(second).toMatchObject({
      page: 2,
      total_pages: 2,
      total_count: 4,
      environments: [INTRUDER, { org: 'acme', name: 'd-db' }],
    });
  });

  it('is shown in GET /_emulator/faults, replaced by a PATCH, and put back by a reset', async () => {
    const emu = await start({ profile: 'kosli' });
    await emu.putStore(SEEDED);
    expect((await emu.setFaults({ listingExtra: { acme: [INTRUDER] } })).listingExtra).toEqual({
      acme: [INTRUDER],
    });
    expect((await emu.setFaults({ listingExtra: {} })).listingExtra).toEqual({});
    expect((await list(emu, 'acme')) as unknown[]).toHaveLength(2);
    await emu.setFaults({ listingExtra: { acme: [INTRUDER] }, listingOmitOrg: true });
    await emu.reset();
    expect(await emu.getFaults()).toMatchObject({ listingExtra: {}, listingOmitOrg: false });
  });
});

describe('listingOmitOrg', () => {
  it.each(['spec', 'kosli'] as const)(
    '%s: the environments of the org are listed without org; extra entries stay as given',
    async (profile) => {
      const emu = await start({ profile });
      await emu.putStore(SEEDED);
      await emu.setFaults({ listingOmitOrg: true, listingExtra: { acme: [INTRUDER] } });
      const entriesOf = (body: unknown) =>
        (profile === 'spec'
          ? (body as { env: unknown[] }).env
          : Array.isArray(body)
            ? body
            : (body as { environments: unknown[] }).environments) as Record<string, unknown>[];
      const entries = entriesOf(await list(emu, 'acme'));
      expect(entries.map((entry) => entry['org'])).toEqual([undefined, 'beta', undefined]);
      expect(entries.map((entry) => entry['name'])).toEqual(['b-web', 'c-intruder', 'd-db']);
      // kosli's envelope (spec ignores the query): the same entries.
      expect(entriesOf(await list(emu, 'acme', '?per_page=50'))).toEqual(entries);
    },
  );
});
