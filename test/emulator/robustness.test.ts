/**
 * The emulator under hostile traffic: malformed HTTP, slowloris heads and bodies, a flood of
 * silent connections. It must answer (or close) every one of them, keep serving everyone else,
 * never crash, and never lose an environment. One emulator process (the real CLI, short timeouts)
 * takes all of it. No assertion measures time: the emulator's own counters say why each
 * connection was cut.
 */
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, spawnEmulator } from '../helpers/emulator.ts';
import type { EmulatorStats, SpawnedEmulator } from '../helpers/emulator.ts';

const TOKEN = 'robustness-token-7c1e';
const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1500;
/** How long a test waits for a cut before it gives up: only so a broken emulator fails the test. */
const SAFETY_NET_MS = 10_000;
/** One byte every this many milliseconds: a slowloris client. */
const DRIP_MS = 40;
/** Connections that connect and never send a byte, sized to the machine's descriptors. */
const SILENT = (() => {
  const limit = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  const open = limit === 'unlimited' ? Number.POSITIVE_INFINITY : Number(limit);
  return Math.max(25, Math.min(500, Math.floor((open - 512) / 8)));
})();

let emulator: SpawnedEmulator;
let agent: Agent;
let port: number;
const auth = { authorization: `Bearer ${TOKEN}` };
const listingUrl = () => `${emulator.url}/api/v2/environments/acme`;
/** Written before any hostile traffic; they must all survive it. */
const BEFORE = Array.from({ length: 20 }, (_, i) => `before-${i}`);

async function list(): Promise<string[]> {
  const response = await send(listingUrl(), { headers: auth, dispatcher: agent });
  expect(response.status, response.text).toBe(200);
  return (response.body as { env: { name: string }[] }).env.map((env) => env.name);
}

const stats = async () =>
  (await send(`${emulator.url}/_emulator/stats`, { dispatcher: agent })).body as EmulatorStats;

/**
 * Since `before`: every answer the normal client got was a 200 (one at least while the hostile
 * client lasted), and the connections were cut by the limits given, counted by the emulator.
 */
async function expectCuts(before: EmulatorStats, served: Served, headers: number, request = 0) {
  const after = await stats();
  expect({
    ok: (after.byStatus['200'] ?? 0) - (before.byStatus['200'] ?? 0),
    headers: after.timeouts.headers - before.timeouts.headers,
    request: after.timeouts.request - before.timeouts.request,
  }).toEqual({ ok: served.total, headers, request });
  expect(served.during).toBeGreaterThanOrEqual(1);
}

/** The emulator process is still running, serving, and holds every environment written before. */
async function expectAlive(): Promise<void> {
  expect([emulator.child.exitCode, emulator.child.signalCode]).toEqual([null, null]);
  expect(await list()).toEqual(expect.arrayContaining(BEFORE));
}

/** A raw TCP connection to the emulator; errors (resets) count as being cut. */
function raw() {
  const socket = net.connect({ host: '127.0.0.1', port });
  let data = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    data += chunk;
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, connected, closed, data: () => data };
}

/** Resolves with `promise`, or rejects once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  const late = sleep(ms, undefined, { ref: false }).then(() => {
    throw new Error(`${what}: still waiting after ${ms} ms`);
  });
  return Promise.race([promise, late]);
}

/** The status of a raw answer; null when closed without one; the text itself when not HTTP. */
function rawStatus(data: string): number | string | null {
  if (data === '') return null;
  const match = /^HTTP\/1\.1 (\d{3}) /.exec(data);
  return match === null ? data.slice(0, 200) : Number(match[1]);
}

/** Sends `payload` on a fresh connection; the emulator must answer one of `statuses` or close. */
async function expectRejected(payload: string | Buffer, statuses: number[]): Promise<void> {
  const conn = raw();
  await conn.connected;
  conn.socket.write(payload);
  await within(conn.closed, 5_000, 'the emulator neither answered nor closed');
  expect([null, ...statuses]).toContain(rawStatus(conn.data()));
}

/**
 * A well-behaved client beside a hostile one: GETs the listing every 50 ms until `until` settles,
 * then twice more; every answer must be 200. Returns how many were answered while it lasted.
 */
type Served = { during: number; total: number };
async function normalClient(until: Promise<unknown>): Promise<Served> {
  const state = { done: false };
  void until.finally(() => {
    state.done = true;
  });
  let during = 0;
  let total = 0;
  for (let i = 0; i < 200 && !state.done; i++) {
    await list();
    total++;
    if (!state.done) during++;
    await sleep(50);
  }
  await until;
  for (let i = 0; i < 2; i++, total++) await list();
  return { during, total };
}

/** Writes `bytes` one at a time, DRIP_MS apart, until they are all sent or the socket is gone. */
async function drip(socket: net.Socket, bytes: string): Promise<number> {
  let sent = 0;
  for (const byte of bytes) {
    if (socket.destroyed || !socket.writable) break;
    socket.write(byte);
    sent++;
    await sleep(DRIP_MS);
  }
  return sent;
}

beforeAll(async () => {
  const timeouts = `--headers-timeout ${HEADERS_TIMEOUT_MS}ms --request-timeout ${REQUEST_TIMEOUT_MS}ms`;
  emulator = await spawnEmulator(
    `--org acme --token ${TOKEN} --log-level warn ${timeouts}`.split(' '),
  );
  port = Number(new URL(emulator.url).port);
  agent = new Agent({ connections: 16 });
  for (const name of BEFORE) {
    const json = { name, description: name, type: 'K8S' };
    const response = await send(listingUrl(), {
      method: 'PUT',
      headers: auth,
      json,
      dispatcher: agent,
    });
    if (response.status !== 201) throw new Error(`setup PUT: ${response.status} ${response.text}`);
  }
});

afterAll(async () => {
  await agent.close();
  await emulator.stop('SIGKILL');
});

describe('the emulator under hostile traffic', () => {
  it('answers malformed HTTP with 400/431 (or closes it) and keeps serving', async () => {
    await expectRejected(Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0d, 0x0a, 0x0d, 0x0a]), [400]);
    await expectRejected('this is not http at all\r\n\r\n', [400]);
    await expectRejected('GET\r\n\r\n', [400]);
    await expectRejected('GET /api/v2/environments/acme HTTP/9.9\r\n\r\n', [400, 505]);
    await expectRejected('G@T / HTTP/1.1\r\nHost: x\r\n\r\n', [400]);
    // An absurdly long header (node's limit is 16 KiB), and thousands of headers.
    await expectRejected(
      `GET /api/v2/environments/acme HTTP/1.1\r\nHost: x\r\nX-Long: ${'a'.repeat(256 * 1024)}\r\n\r\n`,
      [431],
    );
    await expectRejected(
      `GET / HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 5000 }, (_, i) => `X-${i}: y\r\n`).join('')}\r\n`,
      [400, 431],
    );
    // Request smuggling shapes and broken framing.
    const put = `PUT /api/v2/environments/acme HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n`;
    await expectRejected(
      `${put}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      [400],
    );
    await expectRejected(`${put}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!`, [400]);
    await expectRejected(`${put}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, [400]);
    // A client that hangs up at once, or in the middle of a body.
    const quitter = raw();
    await quitter.connected;
    quitter.socket.end();
    const resetter = raw();
    await resetter.connected;
    resetter.socket.write(`${put}Content-Length: 1000\r\n\r\n{"name":`);
    await sleep(20);
    resetter.socket.resetAndDestroy();
    await within(Promise.all([quitter.closed, resetter.closed]), 5_000, 'quitters');
    await expectAlive();
  });

  it(`cuts a client sending its head slower than --headers-timeout ${HEADERS_TIMEOUT_MS}ms, serving others`, async () => {
    const before = await stats();
    const conn = raw();
    await conn.connected;
    const head = `GET /api/v2/environments/acme HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\nAccept: application/json\r\n\r\n`;
    const [sent, , served] = await Promise.all([
      drip(conn.socket, head),
      within(conn.closed, SAFETY_NET_MS, 'slow head not cut'),
      normalClient(conn.closed),
    ]);
    expect(sent).toBeLessThan(head.length);
    expect([null, 408]).toContain(rawStatus(conn.data()));
    // Cut by the head timeout (the emulator counts each cut by the limit it broke), nothing else.
    await expectCuts(before, served, 1);
    await expectAlive();
  });

  it(`cuts a client sending its body slower than --request-timeout ${REQUEST_TIMEOUT_MS}ms, serving others`, async () => {
    const before = await stats();
    const conn = raw();
    await conn.connected;
    const body = JSON.stringify({ name: 'slow-body', description: 'x'.repeat(100), type: 'K8S' });
    conn.socket.write(
      `PUT /api/v2/environments/acme HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    const [sent, , served] = await Promise.all([
      drip(conn.socket, body),
      within(conn.closed, SAFETY_NET_MS, 'slow body not cut'),
      normalClient(conn.closed),
    ]);
    expect(sent).toBeLessThan(body.length);
    expect([null, 408]).toContain(rawStatus(conn.data()));
    // The head arrived in time; the whole-request timeout cut the body.
    await expectCuts(before, served, 0, 1);
    expect(await list()).not.toContain('slow-body');
    await expectAlive();
  });

  it(`cuts a flood of ${SILENT} silent connections after --headers-timeout, serving others`, async () => {
    const before = await stats();
    const conns = Array.from({ length: SILENT }, () => raw());
    try {
      await Promise.all(conns.map((conn) => conn.connected));
      const closed = Promise.all(conns.map((conn) => conn.closed));
      const allClosed = within(closed, SAFETY_NET_MS, 'silent connections not cut');
      const [, served] = await Promise.all([allClosed, normalClient(allClosed)]);
      for (const conn of conns) expect([null, 408]).toContain(rawStatus(conn.data()));
      await expectCuts(before, served, SILENT);
    } finally {
      for (const conn of conns) conn.socket.destroy();
    }
    await expectAlive();
    expect(emulator.stderr()).not.toMatch(/uncaught|unhandled|handler failed|"level":50/i);
  });
});
