/** Fault injection: deterministic under a seed, each kind visible to a real client. */
import { afterEach, describe, expect, it } from 'vitest';
import { send, startTestEmulator } from '../helpers/emulator.ts';
import type { EmulatorOptions, JsonResponse, TestEmulator } from '../helpers/emulator.ts';
import type { Sleep } from '../../src/emulator/index.ts';

const AUTH = { authorization: 'Bearer t' };
const started: TestEmulator[] = [];

async function start(options: EmulatorOptions): Promise<TestEmulator> {
  const emu = await startTestEmulator({ orgs: ['acme'], ...options });
  started.push(emu);
  return emu;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((emu) => emu.close()));
});

function list(emu: TestEmulator, extra: { headersTimeout?: number } = {}): Promise<JsonResponse> {
  return send(`${emu.url}/api/v2/environments/acme`, {
    headers: AUTH,
    dispatcher: emu.agent,
    ...extra,
  });
}

async function statuses(emu: TestEmulator, count: number): Promise<number[]> {
  const result: number[] = [];
  for (let i = 0; i < count; i += 1) result.push((await list(emu)).status);
  return result;
}

describe('fail rate', () => {
  it('gives the same sequence of statuses for the same seed, on two fresh emulators', async () => {
    const first = await start({ seed: 1, faults: { failRate: 0.5 } });
    const second = await start({ seed: 1, faults: { failRate: 0.5 } });
    const a = await statuses(first, 30);
    const b = await statuses(second, 30);
    expect(a).toEqual(b);
    expect(a).toContain(200);
    expect(a).toContain(503);
    expect(new Set(a)).toEqual(new Set([200, 503]));
  });

  it('gives a different sequence for a different seed', async () => {
    const one = await start({ seed: 1, faults: { failRate: 0.5 } });
    const two = await start({ seed: 2, faults: { failRate: 0.5 } });
    expect(await statuses(one, 30)).not.toEqual(await statuses(two, 30));
  });

  it('answers 503 with a JSON message and counts it', async () => {
    const emu = await start({ faults: { failRate: 1 } });
    const response = await list(emu);
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ message: expect.any(String) });
    const stats = await emu.getStats();
    expect(stats.faults.fail).toBe(1);
    expect(stats.byStatus).toEqual({ '503': 1 });
  });

  it('replays the same sequence after POST /_emulator/reset and after a PATCH of the seed', async () => {
    const emu = await start({ seed: 7, faults: { failRate: 0.5 } });
    const before = await statuses(emu, 20);
    await emu.reset();
    expect(await statuses(emu, 20)).toEqual(before);
    await emu.setFaults({ seed: 7 });
    expect(await statuses(emu, 20)).toEqual(before);
  });

  it('keeps the fail sequence when latency is added (a fixed number of draws per request)', async () => {
    const plain = await start({ seed: 3, faults: { failRate: 0.5 } });
    const slow = await start({ seed: 3, faults: { failRate: 0.5, latencyMs: { min: 0, max: 3 } } });
    expect(await statuses(slow, 20)).toEqual(await statuses(plain, 20));
  });

  it('never applies faults to the admin endpoints', async () => {
    const emu = await start({
      faults: { failRate: 1, resetRate: 1, hangRate: 1, latencyMs: { min: 2000, max: 2000 } },
    });
    expect((await emu.getStats()).total).toBe(0);
    expect((await emu.getStore()).orgs).toEqual({});
  });

  it('applies to unknown /api/ paths but not to other paths', async () => {
    const emu = await start({ faults: { failRate: 1 } });
    const api = await send(`${emu.url}/api/v9/nothing`, { dispatcher: emu.agent });
    expect(api.status).toBe(503);
    const other = await send(`${emu.url}/favicon.ico`, { dispatcher: emu.agent });
    expect(other.status).toBe(404);
  });
});

describe('reset rate', () => {
  it('destroys the socket: the client sees a socket error, not an answer', async () => {
    const emu = await start({ faults: { resetRate: 1 } });
    await expect(list(emu)).rejects.toMatchObject({
      code: expect.stringMatching(/UND_ERR_SOCKET|ECONNRESET/),
    });
    const stats = await emu.getStats();
    expect(stats.faults.reset).toBe(1);
    expect(stats.byStatus).toEqual({});
    const [entry] = await emu.getRequests();
    expect(entry).toMatchObject({ status: null, fault: 'reset' });
  });

  it('leaves the emulator serving once the rate is set back to 0', async () => {
    const emu = await start({ faults: { resetRate: 1 } });
    await expect(list(emu)).rejects.toMatchObject({ code: expect.any(String) });
    await emu.setFaults({ resetRate: 0 });
    expect((await list(emu)).status).toBe(200);
  });
});

describe('hang rate', () => {
  it('never answers: the client times out', async () => {
    const emu = await start({ faults: { hangRate: 1 } });
    await expect(list(emu, { headersTimeout: 300 })).rejects.toMatchObject({
      code: 'UND_ERR_HEADERS_TIMEOUT',
    });
    const stats = await emu.getStats();
    expect(stats.faults.hang).toBe(1);
  });

  it('drops hung requests when the emulator closes, and closes promptly', async () => {
    const emu = await startTestEmulator({ orgs: ['acme'], faults: { hangRate: 1 } });
    const pending = list(emu);
    // Wait until the request has arrived and is hanging.
    for (let i = 0; i < 200 && (await emu.getStats()).faults.hang === 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const closing = emu.close();
    await expect(pending).rejects.toMatchObject({
      code: expect.stringMatching(/UND_ERR_SOCKET|ECONNRESET/),
    });
    await closing;
  });
});

/** One wait the emulator began through a test-controlled sleep. */
interface HeldWait {
  readonly ms: number;
  /** Ends the wait: the emulator goes on with the request. */
  release(): void;
}

/**
 * A sleep the test controls: each wait is recorded and lasts until the test releases it, so a
 * test can prove an answer waited for the injected latency without measuring time.
 */
function heldSleep(): { sleep: Sleep; next(): Promise<HeldWait> } {
  const waits: HeldWait[] = [];
  const takers: ((wait: HeldWait) => void)[] = [];
  const sleep: Sleep = (ms) =>
    new Promise<void>((resolve) => {
      const wait = { ms, release: () => resolve() };
      const taker = takers.shift();
      if (taker === undefined) waits.push(wait);
      else taker(wait);
    });
  const next = (): Promise<HeldWait> => {
    const wait = waits.shift();
    return wait === undefined
      ? new Promise((resolve) => takers.push(resolve))
      : Promise.resolve(wait);
  };
  return { sleep, next };
}

describe('latency', () => {
  it('holds the answer until the injected wait is over', async () => {
    const held = heldSleep();
    const emu = await start({ faults: { latencyMs: { min: 150, max: 150 } }, sleep: held.sleep });
    let answered = false;
    const pending = list(emu).then((response) => {
      answered = true;
      return response;
    });
    const wait = await held.next();
    expect(wait.ms).toBe(150);
    // Two admin round trips while the wait is held: the request is in flight, nothing answered.
    expect(await emu.getStats()).toMatchObject({
      total: 1,
      inFlight: 1,
      byStatus: {},
      faults: { latency: 1 },
    });
    expect(await emu.getRequests()).toEqual([]);
    expect(answered).toBe(false);
    wait.release();
    expect((await pending).status).toBe(200);
    const [entry] = await emu.getRequests(1);
    expect(entry).toMatchObject({ status: 200, fault: 'latency', latencyMs: 150 });
  });

  it('delays each API request by the drawn latency and logs it (the real timer)', async () => {
    const emu = await start({ faults: { latencyMs: { min: 150, max: 150 } } });
    const response = await list(emu);
    expect(response.status).toBe(200);
    const stats = await emu.getStats();
    expect(stats.faults.latency).toBe(1);
    const [entry] = await emu.getRequests(1);
    expect(entry).toMatchObject({ status: 200, fault: 'latency', latencyMs: 150 });
  });

  it('draws from the MIN-MAX range, whole milliseconds, and logs each draw', async () => {
    const waited: number[] = [];
    const emu = await start({
      seed: 1,
      faults: { latencyMs: { min: 30, max: 60 } },
      sleep: (ms) => {
        waited.push(ms);
        return Promise.resolve();
      },
    });
    expect(await statuses(emu, 20)).toEqual(Array.from({ length: 20 }, () => 200));
    expect(waited).toHaveLength(20);
    for (const ms of waited) {
      expect(Number.isInteger(ms)).toBe(true);
      expect(ms).toBeGreaterThanOrEqual(30);
      expect(ms).toBeLessThanOrEqual(60);
    }
    expect(new Set(waited).size).toBeGreaterThan(1);
    const log = await emu.getRequests(20);
    expect(log.map((entry) => entry.latencyMs)).toEqual(waited);
    expect(log.every((entry) => entry.fault === 'latency')).toBe(true);
  });

  it('logs no latency when none is injected', async () => {
    const emu = await start({ faults: { latencyMs: { min: 0, max: 0 } } });
    await list(emu);
    const [entry] = await emu.getRequests(1);
    expect(entry).not.toHaveProperty('latencyMs');
    expect(entry).not.toHaveProperty('fault');
  });

  it('stops waiting when the emulator closes, even for a sleep that never ends', async () => {
    const held = heldSleep();
    const emu = await startTestEmulator({
      orgs: ['acme'],
      faults: { latencyMs: { min: 60_000, max: 60_000 } },
      sleep: held.sleep,
    });
    const pending = list(emu);
    await held.next();
    const closing = emu.close();
    const response = await pending;
    expect(response.status).toBe(200);
    expect(response.headers.connection).toBe('close');
    await closing;
  });
});

describe('rate limit', () => {
  it('answers 429 with a whole-seconds Retry-After over the limit', async () => {
    const emu = await start({ faults: { rateLimit: 1 } });
    const responses = await Promise.all(Array.from({ length: 6 }, () => list(emu)));
    const throttled = responses.filter((response) => response.status === 429);
    expect(responses.filter((response) => response.status === 200).length).toBeGreaterThanOrEqual(
      1,
    );
    expect(throttled.length).toBeGreaterThanOrEqual(1);
    for (const response of throttled) {
      expect(response.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      expect(response.body).toEqual({ message: expect.any(String) });
    }
    expect((await emu.getStats()).throttled).toBe(throttled.length);
  });

  it('comes before the other faults', async () => {
    const emu = await start({ faults: { rateLimit: 1, failRate: 1 } });
    const responses = await Promise.all(Array.from({ length: 4 }, () => list(emu)));
    const codes = responses.map((response) => response.status);
    expect(codes).toContain(429);
    expect(codes.every((code) => code === 429 || code === 503)).toBe(true);
  });
});

describe('fault settings at run time', () => {
  it('reports the start-up settings and seed', async () => {
    const emu = await start({
      seed: 42,
      faults: { failRate: 0.25, latencyMs: { min: 1, max: 5 } },
    });
    expect(await emu.getFaults()).toEqual({
      latencyMs: { min: 1, max: 5 },
      failRate: 0.25,
      resetRate: 0,
      hangRate: 0,
      rateLimit: 0,
      listingExtra: {},
      listingOmitOrg: false,
      ignoredWrites: [],
      seed: 42,
    });
  });

  it('changes one setting with PATCH and keeps the others', async () => {
    const emu = await start({ seed: 5, faults: { failRate: 0.25 } });
    const after = await emu.setFaults({ failRate: 1 });
    expect(after).toMatchObject({ failRate: 1, seed: 5 });
    expect((await list(emu)).status).toBe(503);
    const latency = await send(`${emu.url}/_emulator/faults`, {
      method: 'PATCH',
      json: { latencyMs: 3 },
      dispatcher: emu.agent,
    });
    expect(latency.body).toMatchObject({ latencyMs: { min: 3, max: 3 }, failRate: 1 });
  });

  it.each([
    [{ failRate: 2 }, 'failRate'],
    [{ resetRate: -0.1 }, 'resetRate'],
    [{ hangRate: 'often' }, 'hangRate'],
    [{ rateLimit: -1 }, 'rateLimit'],
    [{ latencyMs: { min: 10, max: 5 } }, 'latencyMs'],
    [{ latencyMs: { min: 1.5, max: 5 } }, 'latencyMs'],
    [{ seed: -1 }, 'seed'],
    [{ listingExtra: [] }, 'listingExtra'],
    [{ listingExtra: { acme: {} } }, 'listingExtra'],
    [{ listingExtra: { acme: ['web'] } }, 'listingExtra'],
    [{ listingExtra: { '': [{}] } }, 'listingExtra'],
    [{ listingOmitOrg: 'yes' }, 'listingOmitOrg'],
    [{ ignoredWrites: ['delete'] }, 'ignoredWrites'],
    [{ ignoredWrites: 'archive' }, 'ignoredWrites'],
    [{ flakiness: 1 }, 'flakiness'],
  ])('rejects %j with 400 and leaves the settings alone', async (patch, field) => {
    const emu = await start({ faults: { failRate: 0.1 } });
    const response = await send(`${emu.url}/_emulator/faults`, {
      method: 'PATCH',
      json: patch,
      dispatcher: emu.agent,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: expect.any(String),
      errors: { [field]: expect.any(String) },
    });
    expect((await emu.getFaults()).failRate).toBe(0.1);
  });
});
