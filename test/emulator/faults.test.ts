/**
 * Fault injection: deterministic under a seed, each kind visible to a real client, changed at run
 * time; and the listing faults (extra entries, entries without `org`, placeholders).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Sleep } from '../../src/emulator/index.ts';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { EmulatorOptions, JsonResponse, TestEmulator } from '../helpers/emulator.ts';
import { entriesOf, heldSleep } from './api-client.ts';

const started: TestEmulator[] = [];
async function start(options: EmulatorOptions): Promise<TestEmulator> {
  const emu = await startTestEmulator({ orgs: ['acme', 'beta'], ...options });
  started.push(emu);
  return emu;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((emu) => emu.close()));
});

function list(emu: TestEmulator, path = 'acme', headersTimeout?: number): Promise<JsonResponse> {
  return send(`${emu.url}/api/v2/environments/${path}`, {
    headers: { authorization: 'Bearer t' },
    dispatcher: emu.agent,
    ...(headersTimeout === undefined ? {} : { headersTimeout }),
  });
}

async function statuses(emu: TestEmulator, count: number): Promise<number[]> {
  const result: number[] = [];
  for (let i = 0; i < count; i += 1) result.push((await list(emu)).status);
  return result;
}

const socketGone = { code: expect.stringMatching(/UND_ERR_SOCKET|ECONNRESET/) };

describe('fail rate and the seed', () => {
  it('gives the same statuses for the same seed and another for another seed, whatever the other rates', async () => {
    const failRate = 0.5;
    const [a, b, c, d] = await Promise.all([
      start({ seed: 1, faults: { failRate } }),
      start({ seed: 1, faults: { failRate } }),
      start({ seed: 2, faults: { failRate } }),
      start({ seed: 1, faults: { failRate, latencyMs: { min: 0, max: 3 }, conflictRate: 0.5 } }),
    ]);
    const first = await statuses(a, 30);
    expect(new Set(first)).toEqual(new Set([200, 503]));
    expect(await statuses(b, 30)).toEqual(first);
    expect(await statuses(c, 30)).not.toEqual(first);
    expect(await statuses(d, 30)).toEqual(first);
  });

  it('answers 503 with a JSON message, counted; replays after a reset and a PATCH of the seed', async () => {
    const emu = await start({ seed: 7, faults: { failRate: 0.5 } });
    const before = await statuses(emu, 20);
    const failed = before.filter((status) => status === 503).length;
    expect((await emu.getStats()).faults.fail).toBe(failed);
    await emu.reset();
    expect(await statuses(emu, 20)).toEqual(before);
    await emu.setFaults({ seed: 7 });
    expect(await statuses(emu, 20)).toEqual(before);
  });

  it('applies to /api/ paths only, never to the admin endpoints', async () => {
    const latencyMs = { min: 2000, max: 2000 };
    const emu = await start({ faults: { failRate: 1, resetRate: 1, hangRate: 1, latencyMs } });
    expect((await emu.getStore()).orgs).toEqual({});
    await emu.setFaults({ resetRate: 0, hangRate: 0, latencyMs: { min: 0, max: 0 } });
    const failed = await send(`${emu.url}/api/v9/nothing`, { dispatcher: emu.agent });
    expect([failed.status, failed.body]).toEqual([503, { message: expect.any(String) }]);
    expect((await send(`${emu.url}/favicon.ico`, { dispatcher: emu.agent })).status).toBe(404);
    expect((await emu.getStats()).total).toBe(2);
  });
});

describe('reset, hang, latency, rate limit', () => {
  it('reset: the socket is destroyed without an answer, logged with no status; rate 0 serves again', async () => {
    const emu = await start({ faults: { resetRate: 1 } });
    await expect(list(emu)).rejects.toMatchObject(socketGone);
    const logged = expect.objectContaining({ status: null, fault: 'reset' });
    expect(await emu.getRequests()).toEqual([logged]);
    expect((await emu.getStats()).byStatus).toEqual({});
    await emu.setFaults({ resetRate: 0 });
    expect((await list(emu)).status).toBe(200);
  });

  it('hang: never answered, so the client times out; dropped when the emulator closes', async () => {
    // Closed by the test itself, so not among the emulators closed after each test.
    const emu = await startTestEmulator({ orgs: ['acme'], faults: { hangRate: 1 } });
    await expect(list(emu, 'acme', 300)).rejects.toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
    const pending = list(emu);
    for (let i = 0; i < 200 && (await emu.getStats()).faults.hang < 2; i += 1) await emu.getStats();
    const closing = emu.close();
    await expect(pending).rejects.toMatchObject(socketGone);
    await closing;
  });

  it('latency: the answer waits until the drawn wait is over, then is logged with it', async () => {
    const held = heldSleep();
    const emu = await start({ faults: { latencyMs: { min: 150, max: 150 } }, sleep: held.sleep });
    const pending = list(emu);
    const wait = await held.next(emu);
    expect(wait.ms).toBe(150);
    const waiting = { total: 1, inFlight: 1, byStatus: {}, faults: { latency: 1 } };
    expect(await emu.getStats()).toMatchObject(waiting);
    wait.release();
    expect((await pending).status).toBe(200);
    const logged = expect.objectContaining({ status: 200, fault: 'latency', latencyMs: 150 });
    expect(await emu.getRequests(1)).toEqual([logged]);
  });

  it('latency: whole milliseconds from MIN to MAX; none logged when none drawn', async () => {
    const waited: number[] = [];
    const sleep: Sleep = (ms) => {
      waited.push(ms);
      return Promise.resolve();
    };
    const emu = await start({ seed: 1, faults: { latencyMs: { min: 30, max: 60 } }, sleep });
    await statuses(emu, 20);
    expect(waited.every((ms) => Number.isInteger(ms) && ms >= 30 && ms <= 60)).toBe(true);
    expect(new Set(waited).size).toBeGreaterThan(1);
    expect((await emu.getRequests(20)).map((entry) => entry.latencyMs)).toEqual(waited);
    await emu.setFaults({ latencyMs: { min: 0, max: 0 } });
    await list(emu);
    expect((await emu.getRequests(1))[0]).not.toHaveProperty('fault');
  });

  it('latency: stops waiting when the emulator closes, even for a sleep that never ends', async () => {
    const held = heldSleep();
    const latencyMs = { min: 60_000, max: 60_000 };
    const emu = await startTestEmulator({
      orgs: ['acme'],
      faults: { latencyMs },
      sleep: held.sleep,
    });
    const pending = list(emu);
    await held.next(emu);
    const closing = emu.close();
    const response = await pending;
    expect([response.status, response.headers.connection]).toEqual([200, 'close']);
    await closing;
  });

  it('rate limit: 429 with a whole-seconds Retry-After over the limit, before any other fault', async () => {
    const emu = await start({ faults: { rateLimit: 1, failRate: 1 } });
    const responses = await Promise.all(Array.from({ length: 6 }, () => list(emu)));
    const throttled = responses.filter((response) => response.status === 429);
    const failed = responses.filter((response) => response.status === 503).length;
    expect(failed).toBeGreaterThanOrEqual(1);
    expect(throttled.length + failed).toBe(6);
    for (const response of throttled) expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect((await emu.getStats()).throttled).toBe(throttled.length);
  });
});

describe('fault settings at run time', () => {
  it('reports the start-up settings and seed; a PATCH changes one and keeps the others', async () => {
    const given = { failRate: 0.25, latencyMs: { min: 1, max: 5 } };
    const emu = await start({ seed: 42, faults: given });
    const rates = { resetRate: 0, hangRate: 0, conflictRate: 0, rateLimit: 0, createHoldMs: 0 };
    const listing = {
      listingExtra: {},
      listingOmitOrg: false,
      ignoredWrites: [],
      placeholders: {},
    };
    expect(await emu.getFaults()).toEqual({ ...given, ...rates, ...listing, seed: 42 });
    const json = { latencyMs: 3 };
    const url = `${emu.url}/_emulator/faults`;
    const latency = await send(url, { method: 'PATCH', json, dispatcher: emu.agent });
    expect(latency.body).toMatchObject({ latencyMs: { min: 3, max: 3 }, failRate: 0.25, seed: 42 });
  });

  it.each([
    [{ failRate: 2 }],
    [{ resetRate: -0.1 }],
    [{ hangRate: 'often' }],
    [{ conflictRate: 1.5 }],
    [{ rateLimit: -1 }],
    [{ createHoldMs: 1.5 }],
    [{ latencyMs: { min: 10, max: 5 } }],
    [{ latencyMs: { min: 1.5, max: 5 } }],
    [{ seed: -1 }],
    [{ listingExtra: { acme: ['web'] } }],
    [{ listingExtra: { '': [{}] } }],
    [{ listingOmitOrg: 'yes' }],
    [{ ignoredWrites: ['delete'] }],
    [{ placeholders: { acme: 'web' } }],
    [{ placeholders: { acme: ['a~b'] } }],
    [{ flakiness: 1 }],
  ])('refuses %j with 400 and leaves the settings alone', async (patch) => {
    const emu = await start({ faults: { failRate: 0.1 } });
    const url = `${emu.url}/_emulator/faults`;
    const response = await send(url, { method: 'PATCH', json: patch, dispatcher: emu.agent });
    const errors = { [Object.keys(patch)[0] ?? '']: expect.any(String) };
    expect([response.status, response.body]).toEqual([
      400,
      { message: 'Invalid fault settings', errors },
    ]);
    expect((await emu.getFaults()).failRate).toBe(0.1);
  });
});

describe('listing faults', () => {
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
  const listed = async (emu: TestEmulator, field: string, path?: string) =>
    entriesOf(await list(emu, path)).map((entry) => entry[field]);

  it('spec: extra entries listed as given, in name order, for their org only; without org when asked', async () => {
    const emu = await start({ profile: 'spec' });
    await emu.putStore(SEEDED);
    await emu.setFaults({ listingExtra: { acme: [INTRUDER, UNNAMED] } });
    const [web, db] = SEEDED.orgs.acme.map((env) => ({ org: 'acme', ...env }));
    expect((await list(emu)).body).toEqual({ env: [UNNAMED, web, INTRUDER, db] });
    const site = { org: 'beta', ...SEEDED.orgs.beta[0] };
    expect((await list(emu, 'beta')).body).toEqual({ env: [site] });
    await emu.setFaults({ listingOmitOrg: true, listingExtra: { acme: [INTRUDER] } });
    expect(await listed(emu, 'org')).toEqual([undefined, 'beta', undefined]);
  });

  it('kosli: in the bare array and on every page, which count them; a reset puts them back', async () => {
    const emu = await start({ profile: 'kosli' });
    await emu.putStore(SEEDED);
    await emu.setFaults({ listingExtra: { acme: [INTRUDER, UNNAMED] }, listingOmitOrg: true });
    expect(await listed(emu, 'name')).toEqual(['', 'b-web', 'c-intruder', 'd-db']);
    expect(await listed(emu, 'org')).toEqual(['acme', undefined, 'beta', undefined]);
    const environments = [INTRUDER, expect.objectContaining({ name: 'd-db' })];
    const page = { total_pages: 2, total_count: 4, environments };
    expect((await list(emu, 'acme?page=2&per_page=2')).body).toMatchObject(page);
    await emu.reset();
    expect(await emu.getFaults()).toMatchObject({ listingExtra: {}, listingOmitOrg: false });
  });

  it.each(['spec', 'kosli'] as const)(
    '%s: placeholders in place of the named environments, per org or every org',
    async (profile) => {
      const emu = await start({ profile, faults: { placeholders: { acme: ['d-db'] } } });
      await emu.putStore(SEEDED);
      const error = 'record could not be rendered';
      const placeholder = { org: 'acme', name: 'd-db', placeholder: true, error };
      const web = expect.objectContaining({ name: 'b-web', type: 'K8S' });
      expect(entriesOf(await list(emu))).toEqual([web, placeholder]);
      // In every shape: kosli's pages too (the spec profile ignores the query).
      expect(entriesOf(await list(emu, 'acme?page=1&per_page=5'))).toHaveLength(2);
      await emu.setFaults({ placeholders: { '*': ['site', 'absent'] } });
      expect(await listed(emu, 'name')).toEqual(['b-web', 'd-db']);
      expect(entriesOf(await list(emu, 'beta'))).toEqual([
        { ...placeholder, org: 'beta', name: 'site' },
      ]);
    },
  );
});
