/**
 * `envsync emulator` as a process: first stdout line, flags, logs, signals, --data. Its --help,
 * the flag values it refuses, a --data file it cannot use and a port it cannot listen on end
 * before it serves anything: those run in this process.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsyncInProcess } from '../helpers/cli.ts';
import { send, spawnEmulator } from '../helpers/emulator.ts';
import type { SpawnedEmulator } from '../helpers/emulator.ts';
import { VALID } from './api-client.ts';

const headers = { authorization: 'Bearer t' };
const running: SpawnedEmulator[] = [];
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'envsync-emulator-cli-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((emu) => emu.stop('SIGKILL')));
  await rm(dir, { recursive: true, force: true });
});

/** The CLI with `flags` (split at spaces) and then `more` as they are. */
async function spawn(flags: string, ...more: string[]): Promise<SpawnedEmulator> {
  const emu = await spawnEmulator([...flags.split(' '), ...more]);
  running.push(emu);
  return emu;
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('envsync emulator (process)', () => {
  it('prints exactly "listening on http://127.0.0.1:PORT" first, logs JSON to stderr, exits 0 on SIGTERM', async () => {
    const emu = await spawn('--org acme --token secret-token-123=acme --log-level debug');
    expect(emu.stdout()).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\n$/);
    const url = `${emu.url}/api/v2/environments/acme`;
    const known = { authorization: 'Bearer secret-token-123' };
    expect((await send(url, { method: 'PUT', headers: known, json: VALID })).status).toBe(201);
    const wrong = { authorization: 'Bearer wrong-token-456' };
    expect((await send(url, { headers: wrong })).status).toBe(401);
    expect(await emu.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(emu.stdout().split('\n').filter(Boolean)).toHaveLength(1);
    const lines = emu.stderr().trim().split('\n');
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(emu.stderr()).toContain('emulator listening');
    expect(emu.stderr()).not.toContain('secret-token-123');
    expect(emu.stderr()).not.toContain('wrong-token-456');
  });

  it('finishes a request in flight on SIGTERM, flushes --data, then exits 0', async () => {
    const file = join(dir, 'store.json');
    const emu = await spawn('--org acme --latency 400 --log-level warn', '--data', file);
    const inFlight = send(`${emu.url}/api/v2/environments/acme`, {
      method: 'PUT',
      headers: { authorization: 'Bearer any-token' },
      json: VALID,
    });
    const inFlightNow = async () =>
      Reflect.get(Object((await send(`${emu.url}/_emulator/stats`)).body), 'inFlight') === 1;
    await waitFor(inFlightNow, 'the PUT to arrive');
    const exit = emu.stop('SIGTERM');
    const response = await inFlight;
    expect([response.status, response.headers.connection]).toEqual([201, 'close']);
    expect(await exit).toEqual({ code: 0, signal: null });
    const saved: unknown = JSON.parse(await readFile(file, 'utf8'));
    expect(saved).toMatchObject({ orgs: { acme: [expect.objectContaining({ name: 'prod' })] } });
  });

  it('keeps the store across a restart with --data', async () => {
    const file = join(dir, 'store.json');
    const flags = '--profile kosli --log-level silent';
    const first = await spawn(flags, '--data', file);
    const url = `${first.url}/api/v2/environments/acme`;
    for (const name of ['b', 'a']) {
      expect((await send(url, { method: 'PUT', headers, json: { ...VALID, name } })).status).toBe(
        201,
      );
    }
    expect((await first.stop()).code).toBe(0);
    const second = await spawn(flags, '--data', file);
    const listing = await send(`${second.url}/api/v2/environments/acme`, { headers });
    expect(listing.body).toEqual([
      expect.objectContaining({ name: 'a', description: 'Production' }),
      expect.objectContaining({ name: 'b', description: 'Production' }),
    ]);
    expect((await second.stop()).code).toBe(0);
  });

  it('reads every fault flag into the fault settings; exits 0 on SIGINT too', async () => {
    const emu = await spawn(
      '--seed 77 --latency 1-3 --fail-rate 0.1 --reset-rate 0.2 --hang-rate 0.3 --rate-limit 50 ' +
        '--fault-placeholder web --fault-placeholder acme/db --fault-placeholder acme/api ' +
        '--log-level silent',
    );
    const faults = await send(`${emu.url}/_emulator/faults`);
    expect(faults.body).toEqual({
      latencyMs: { min: 1, max: 3 },
      failRate: 0.1,
      resetRate: 0.2,
      hangRate: 0.3,
      conflictRate: 0,
      rateLimit: 50,
      createHoldMs: 0,
      listingExtra: {},
      listingOmitOrg: false,
      ignoredWrites: [],
      seed: 77,
      placeholders: { '*': ['web'], acme: ['db', 'api'] },
    });
    expect(await emu.stop('SIGINT')).toEqual({ code: 0, signal: null });
  });

  it('prints usage with --help and exits 0', async () => {
    const result = await envsyncInProcess(['emulator', '--help'], { endsBeforeStart: true });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: envsync emulator');
    const flags =
      'host port org token profile seed latency fail-rate reset-rate hang-rate rate-limit ' +
      'fault-placeholder data log-level';
    for (const flag of flags.split(' ')) expect(result.stdout).toContain(`--${flag}`);
  });

  it('rejects an unknown flag: exit 1, usage on stderr, nothing on stdout', async () => {
    // Refused while the flags are read, before any server or signal handler: in this process.
    const result = await envsyncInProcess(['emulator', '--bogus'], { endsBeforeStart: true });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('--bogus');
    expect(result.stderr).toContain('Usage: envsync emulator');
    expect(result.stderr).toContain('envsync emulator --help');
    expect(result.stderr.split('\n').length).toBeLessThan(10);
  });

  it.each([
    [['--fail-rate', '2'], '--fail-rate'],
    [['--reset-rate', 'x'], '--reset-rate'],
    [['--hang-rate', '-0.5'], '--hang-rate'],
    [['--profile', 'x'], '--profile'],
    [['--latency', '50-10'], '--latency'],
    [['--latency', 'slow'], '--latency'],
    [['--rate-limit', '-3'], '--rate-limit'],
    [['--seed', 'abc'], '--seed'],
    [['--port', '70000'], '--port'],
    [['--org', 'bad org'], '--org'],
    [['--org', 'acme~eu'], '--org'],
    [['--fault-placeholder', 'a/b/c'], '--fault-placeholder'],
    [['--log-level', 'loud'], '--log-level'],
  ])('rejects %j with exit 1 naming the flag', async (args, flag) => {
    // Refused while the flags are read, before any server or signal handler: in this process.
    const result = await envsyncInProcess(['emulator', ...args], { endsBeforeStart: true });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain(flag);
  });

  it('refuses a corrupt --data file: exit 1 with a clear message', async () => {
    const file = join(dir, 'broken.json');
    await writeFile(file, '{ not json');
    // Refused before the server starts, its signal handlers undone: in this process.
    const result = await envsyncInProcess(
      ['emulator', '--port', '0', '--data', file, '--log-level', 'silent'],
      { endsBeforeStart: true },
    );
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain(file);
    expect(result.stderr).toContain('not valid JSON');
  });

  it('reports a port in use: exit 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as AddressInfo).port);
      // Refused when it cannot listen, its signal handlers undone: in this process.
      const result = await envsyncInProcess(['emulator', '--port', port, '--log-level', 'silent'], {
        endsBeforeStart: true,
      });
      expect(result).toMatchObject({ code: 1, stderr: expect.stringContaining('cannot listen') });
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
