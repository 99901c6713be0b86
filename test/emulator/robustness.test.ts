/**
 * The emulator under hostile traffic: malformed HTTP, bad and huge bodies, slowloris heads and
 * bodies, thousands of connections. It must answer (or close) every one of them, keep serving
 * everyone else, never crash, and never lose or invent an environment. One emulator process (the
 * real CLI, short timeouts) takes all of it but the thousands of connections, while a seeded write
 * load runs through every test; the last test compares its store with everything that load sent.
 * The thousands of connections go to a second emulator process whose timeouts outlast the test, so
 * that a busy machine opening them slowly never has one cut. No assertion measures time: the
 * emulator's own counters say why each connection was cut.
 */
import { execFileSync } from 'node:child_process';
import { mulberry32 } from '../../src/emulator/faults.ts';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, spawnEmulator } from '../helpers/emulator.ts';
import type {
  EmulatorStats,
  JsonResponse,
  SpawnedEmulator,
  StoreDocument,
} from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';

const TOKEN = 'robustness-token-7c1e';
const ORG = 'acme';
const HEADERS_TIMEOUT_MS = 500;
const REQUEST_TIMEOUT_MS = 1500;
/**
 * How long a test waits for a cut before it gives up: only so a broken emulator fails the test
 * instead of hanging it, never a measure of how fast the cut came.
 */
const SAFETY_NET_MS = 10_000;
/** One byte every this many milliseconds: a slowloris client. */
const DRIP_MS = 40;
const LOAD_SEED = 20_260_501;
const LOAD_WORKERS = 4;
const LOAD_PER_TEST = 48;
const LOAD_TOTAL = 300;
const MAX_BODY_BYTES = 1024 * 1024;

/** Sized to the machine: two descriptors per connection (client and emulator), some to spare. */
function connectionCount(): number {
  const limit = execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  const open = limit === 'unlimited' ? Number.POSITIVE_INFINITY : Number(limit);
  return Math.max(100, Math.min(2000, Math.floor((open - 512) / 2)));
}
const CONNECTIONS = connectionCount();
/** Connections that connect and never send a byte. */
const SILENT = Math.ceil(CONNECTIONS / 4);

let emulator: SpawnedEmulator;
let agent: Agent;
let tmp: Awaited<ReturnType<typeof tempDir>>;
let port: number;

const auth = { authorization: `Bearer ${TOKEN}` };
const listingUrl = () => `${emulator.url}/api/v2/environments/${ORG}`;

interface Body {
  name: string;
  description: string;
  type: string;
  include_scaling: boolean;
  policies: string[];
}

/** The environments written before any hostile traffic; they must all survive it. */
const BEFORE: Body[] = Array.from({ length: 20 }, (_, i) => ({
  name: `before-${i}`,
  description: `written before the storm #${i}`,
  type: ['K8S', 'S3', 'logical'][i % 3] ?? 'K8S',
  include_scaling: i % 2 === 0,
  policies: i % 4 === 0 ? ['pci', 'baseline'] : [],
}));

async function put(body: unknown): Promise<JsonResponse> {
  return send(listingUrl(), { method: 'PUT', headers: auth, json: body, dispatcher: agent });
}

async function list(): Promise<{ name: string }[]> {
  const response = await send(listingUrl(), { headers: auth, dispatcher: agent });
  expect(response.status, response.text).toBe(200);
  return (response.body as { env: { name: string }[] }).env;
}

async function stats(): Promise<EmulatorStats> {
  const response = await send(`${emulator.url}/_emulator/stats`, { dispatcher: agent });
  expect(response.status).toBe(200);
  return response.body as EmulatorStats;
}

/** What changed in the counters that tell why and how connections ended. */
function countersSince(before: EmulatorStats, after: EmulatorStats) {
  return {
    ok: (after.byStatus['200'] ?? 0) - (before.byStatus['200'] ?? 0),
    headersTimeouts: after.timeouts.headers - before.timeouts.headers,
    requestTimeouts: after.timeouts.request - before.timeouts.request,
  };
}

async function storedAcme(): Promise<Map<string, Body>> {
  const response = await send(`${emulator.url}/_emulator/store`, { dispatcher: agent });
  expect(response.status).toBe(200);
  const store = response.body as StoreDocument;
  return new Map(
    (store.orgs[ORG] ?? []).map((env) => [
      env.name,
      {
        name: env.name,
        description: env.description,
        type: env.type,
        include_scaling: env.include_scaling,
        policies: env.policies ?? [],
      },
    ]),
  );
}

/** The emulator process is still running and serving. */
async function expectAlive(): Promise<void> {
  expect(emulator.child.exitCode).toBeNull();
  expect(emulator.child.signalCode).toBeNull();
  const names = (await list()).map((env) => env.name);
  for (const env of BEFORE) expect(names).toContain(env.name);
}

/** The emulator's own seeded PRNG, so the load is the same in every run. */
const prng = mulberry32;

/**
 * A seeded write load: LOAD_WORKERS workers, each owning 10 names and sending its PUTs one after
 * another, so the last body sent for a name is the one the store must hold.
 */
const load = {
  expected: new Map<string, Body>(),
  sent: 0,
  failures: [] as string[],
  workers: Array.from({ length: LOAD_WORKERS }, (_, w) => prng(LOAD_SEED + w)),
  async run(count: number): Promise<void> {
    await Promise.all(
      this.workers.map(async (random, w) => {
        for (let i = 0; i < count / LOAD_WORKERS; i++) {
          const seq = this.sent++;
          const body: Body = {
            name: `load-${w}-${Math.floor(random() * 10)}`,
            description: `put #${seq} ${random().toString(36).slice(2)}`,
            type: ['K8S', 'S3', 'logical'][Math.floor(random() * 3)] ?? 'K8S',
            include_scaling: random() < 0.5,
            policies: ['pci', 'baseline', 'sox'].filter(() => random() < 0.5),
          };
          try {
            const response = await put(body);
            if (response.status === 201) this.expected.set(body.name, body);
            else this.failures.push(`PUT #${seq}: ${response.status} ${response.text}`);
          } catch (error) {
            this.failures.push(`PUT #${seq}: ${String(error)}`);
          }
        }
      }),
    );
  },
};

/** Whether `data` holds one whole HTTP answer (head and Content-Length body). */
function wholeAnswer(data: string): boolean {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = /\r\ncontent-length: *(\d+)\r\n/i.exec(data.slice(0, end + 2));
  return length !== null && data.length >= end + 4 + Number(length[1]);
}

/** A raw TCP connection to the emulator (or another port); errors (resets) count as being cut. */
function raw(to = port) {
  const socket = net.connect({ host: '127.0.0.1', port: to });
  let data = '';
  let onAnswer = (): void => {};
  const answered = new Promise<void>((resolve) => {
    onAnswer = resolve;
  });
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    data += chunk;
    if (wholeAnswer(data)) onAnswer();
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => {
    socket.once('close', () => {
      onAnswer();
      resolve();
    });
  });
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, connected, answered, closed, data: () => data };
}

/** Resolves with `promise`, or rejects once `ms` have passed. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
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

/** The GETs a well-behaved client got answered beside a hostile one, all of them 200. */
interface Served {
  /** Answered while the hostile client was still connected. */
  readonly during: number;
  /** All of them, the two sent after the cut included. */
  readonly total: number;
}

/**
 * A well-behaved client: GETs the listing every 50 ms until `until` settles (at most 200 times),
 * then twice more. Every answer must be 200 (`list` checks it).
 */
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
  // The emulator goes on serving once the hostile client is gone.
  for (let i = 0; i < 2; i++) {
    await list();
    total++;
  }
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
  tmp = await tempDir();
  emulator = await spawnEmulator([
    '--org',
    ORG,
    '--token',
    TOKEN,
    '--headers-timeout',
    `${HEADERS_TIMEOUT_MS}ms`,
    '--request-timeout',
    `${REQUEST_TIMEOUT_MS}ms`,
    '--data',
    tmp.path('store.json'),
    '--log-level',
    'warn',
  ]);
  port = Number(new URL(emulator.url).port);
  agent = new Agent({ connections: 16 });
  for (const env of BEFORE) {
    const response = await put(env);
    if (response.status !== 201) throw new Error(`setup PUT: ${response.status} ${response.text}`);
  }
});

afterAll(async () => {
  await agent.close();
  await emulator.stop('SIGKILL');
  await tmp.cleanup();
});

describe('the emulator under hostile traffic', () => {
  it('answers malformed HTTP on a raw socket with 400/431 (or closes it) and keeps serving', async () => {
    const hostile = async () => {
      // Garbage bytes, binary included.
      await expectRejected(Buffer.from([0x00, 0xff, 0x13, 0x37, 0x0d, 0x0a, 0x0d, 0x0a]), [400]);
      await expectRejected('this is not http at all\r\n\r\n', [400]);
      // Bad request lines.
      await expectRejected('GET\r\n\r\n', [400]);
      await expectRejected('GET /api/v2/environments/acme HTTP/9.9\r\n\r\n', [400, 505]);
      await expectRejected('G@T / HTTP/1.1\r\nHost: x\r\n\r\n', [400]);
      // An absurdly long header (node's limit is 16 KiB).
      await expectRejected(
        `GET /api/v2/environments/acme HTTP/1.1\r\nHost: x\r\nX-Long: ${'a'.repeat(256 * 1024)}\r\n\r\n`,
        [431],
      );
      // Thousands of headers.
      await expectRejected(
        `GET / HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 5000 }, (_, i) => `X-${i}: y\r\n`).join('')}\r\n`,
        [400, 431],
      );
      // Request smuggling shapes and broken framing.
      await expectRejected(
        `PUT /api/v2/environments/acme HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
        [400],
      );
      await expectRejected(
        `PUT /api/v2/environments/acme HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!`,
        [400],
      );
      await expectRejected(
        `PUT /api/v2/environments/acme HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        [400],
      );
      // A client that connects and hangs up at once, or resets mid-request.
      const quitter = raw();
      await quitter.connected;
      quitter.socket.end();
      await within(quitter.closed, 5_000, 'quitter');
      const resetter = raw();
      await resetter.connected;
      resetter.socket.write('PUT /api/v2/environments/acme HTTP/1.1\r\nContent-Length: 100\r\n');
      await sleep(20);
      resetter.socket.resetAndDestroy();
      await within(resetter.closed, 5_000, 'resetter');
    };
    await Promise.all([hostile(), load.run(LOAD_PER_TEST)]);
    await expectAlive();
  });

  it('refuses invalid JSON and bodies over 1 MiB (413) and leaves the store intact', async () => {
    const hostile = async () => {
      const putRaw = (body: string | Buffer | Readable) =>
        send(listingUrl(), {
          method: 'PUT',
          headers: { ...auth, 'content-type': 'application/json' },
          body: body as string,
          dispatcher: agent,
        });
      // Invalid JSON, truncated JSON, non-UTF-8, the wrong shape, a poisoned prototype.
      for (const body of [
        '{"name": "bad-json", "description": "x", "type": "K8S"',
        '{"name": "bad-json" "description": "x"}',
        Buffer.from([0x7b, 0x22, 0x6e, 0xff, 0xfe, 0x22, 0x7d]),
        '[{"name": "bad-json", "description": "x", "type": "K8S"}]',
        '{"__proto__": {"name": "bad-json"}, "description": "x", "type": "K8S"}',
        '"bad-json"',
        '',
      ]) {
        const response = await putRaw(body);
        expect(response.status, response.text).toBe(400);
      }
      const huge = JSON.stringify({
        name: 'too-big',
        description: 'x'.repeat(MAX_BODY_BYTES),
        type: 'K8S',
      });
      // Declared length over 1 MiB.
      const declared = await putRaw(huge);
      expect(declared.status, declared.text).toBe(413);
      // No length declared (chunked): the limit holds while reading.
      const chunks = Array.from({ length: 40 }, () => Buffer.alloc(64 * 1024, 0x61));
      // The emulator may also close the connection before the upload ends: a refusal too.
      const streamed = await putRaw(Readable.from(chunks)).then(
        (response) => String(response.status),
        (error: unknown) => String(error),
      );
      expect(streamed).toMatch(/^413$|closed|reset|EPIPE|socket/i);
    };
    await Promise.all([hostile(), load.run(LOAD_PER_TEST)]);
    const names = [...(await storedAcme()).keys()];
    expect(names).not.toContain('bad-json');
    expect(names).not.toContain('too-big');
    await expectAlive();
  });

  it(`cuts a client sending its head slower than --headers-timeout ${HEADERS_TIMEOUT_MS}ms, serving others`, async () => {
    const before = await stats();
    const conn = raw();
    await conn.connected;
    const head =
      `GET /api/v2/environments/${ORG} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${TOKEN}\r\nAccept: application/json\r\n\r\n`;
    const [sent, , served] = await Promise.all([
      drip(conn.socket, head),
      within(conn.closed, SAFETY_NET_MS, 'slow head not cut'),
      normalClient(conn.closed),
      load.run(LOAD_PER_TEST),
    ]);
    expect(sent).toBeLessThan(head.length);
    expect([null, 408]).toContain(rawStatus(conn.data()));
    // Cut by the head timeout (the emulator counts each cut by the limit it broke), nothing else.
    expect(countersSince(before, await stats())).toEqual({
      ok: served.total,
      headersTimeouts: 1,
      requestTimeouts: 0,
    });
    expect(served.during).toBeGreaterThanOrEqual(1);
    await expectAlive();
  });

  it(`cuts a client sending its body slower than --request-timeout ${REQUEST_TIMEOUT_MS}ms, serving others`, async () => {
    const before = await stats();
    const conn = raw();
    await conn.connected;
    const body = JSON.stringify({ name: 'slow-body', description: 'x'.repeat(100), type: 'K8S' });
    conn.socket.write(
      `PUT /api/v2/environments/${ORG} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Authorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n`,
    );
    const [sent, , served] = await Promise.all([
      drip(conn.socket, body),
      within(conn.closed, SAFETY_NET_MS, 'slow body not cut'),
      normalClient(conn.closed),
      load.run(LOAD_PER_TEST),
    ]);
    expect(sent).toBeLessThan(body.length);
    expect([null, 408]).toContain(rawStatus(conn.data()));
    // The head arrived in time; the whole-request timeout cut the body.
    expect(countersSince(before, await stats())).toEqual({
      ok: served.total,
      headersTimeouts: 0,
      requestTimeouts: 1,
    });
    expect(served.during).toBeGreaterThanOrEqual(1);
    expect([...(await storedAcme()).keys()]).not.toContain('slow-body');
    await expectAlive();
  });

  it(`holds ${CONNECTIONS} concurrent connections, answers PUT and GET meanwhile, then each of them`, async () => {
    // An emulator of its own, whose timeouts outlast the test: it holds a connection until its
    // head comes. The short timeouts of the one above would cut connections of a flood that a
    // busy machine opens slowly (a head later than --headers-timeout, an answered connection
    // idle past the keep-alive time): cutting is what the tests before and after this one check.
    const roomy = await spawnEmulator([
      '--org',
      ORG,
      '--token',
      TOKEN,
      '--headers-timeout',
      '60s',
      '--request-timeout',
      '60s',
      '--log-level',
      'warn',
    ]);
    const roomyPort = Number(new URL(roomy.url).port);
    const roomyAgent = new Agent({ connections: 2 });
    const conns: ReturnType<typeof raw>[] = [];
    try {
      // Batches of 200, each connected while every earlier one stays open, none asking yet.
      const flood = async () => {
        for (let batch = 0; batch < CONNECTIONS; batch += 200) {
          const opened = Array.from({ length: Math.min(200, CONNECTIONS - batch) }, () =>
            raw(roomyPort),
          );
          conns.push(...opened);
          await Promise.all(opened.map((conn) => conn.connected));
        }
      };
      await Promise.all([flood(), load.run(LOAD_PER_TEST)]);
      expect(conns).toHaveLength(CONNECTIONS);
      // With all of them connected, a PUT and a GET work.
      const during = { name: 'during-flood', description: 'x', type: 'S3' };
      const roomyUrl = `${roomy.url}/api/v2/environments/${ORG}`;
      const written = await send(roomyUrl, {
        method: 'PUT',
        headers: auth,
        json: during,
        dispatcher: roomyAgent,
      });
      expect(written.status, written.text).toBe(201);
      const listed = await send(roomyUrl, { headers: auth, dispatcher: roomyAgent });
      expect(listed.status, listed.text).toBe(200);
      expect((listed.body as { env: { name: string }[] }).env.map((env) => env.name)).toEqual([
        'during-flood',
      ]);
      expect(conns.filter((conn) => conn.socket.destroyed)).toHaveLength(0);
      // Then every one of them asks, and is answered.
      const request =
        `GET /api/v2/environments/${ORG} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Authorization: Bearer ${TOKEN}\r\n\r\n`;
      for (const conn of conns) conn.socket.write(request);
      await within(
        Promise.all(conns.map((conn) => conn.answered)),
        SAFETY_NET_MS,
        'not every connection was answered',
      );
      for (const conn of conns) expect(rawStatus(conn.data())).toBe(200);
      expect(roomy.child.exitCode).toBeNull();
    } finally {
      for (const conn of conns) conn.socket.destroy();
      await Promise.all(conns.map((conn) => conn.closed));
      await roomyAgent.close();
      await roomy.stop('SIGKILL');
    }
    await expectAlive();
  });

  it(`cuts a flood of ${SILENT} silent connections after --headers-timeout, serving others`, async () => {
    const before = await stats();
    const conns = Array.from({ length: SILENT }, () => raw());
    try {
      await Promise.all(conns.map((conn) => conn.connected));
      const allClosed = within(
        Promise.all(conns.map((conn) => conn.closed)),
        SAFETY_NET_MS,
        'silent connections not cut',
      );
      const [, served] = await Promise.all([
        allClosed,
        normalClient(allClosed),
        load.run(LOAD_PER_TEST),
      ]);
      for (const conn of conns) {
        expect([null, 408]).toContain(rawStatus(conn.data()));
      }
      // Every one of them cut by the head timeout, none for any other reason.
      expect(countersSince(before, await stats())).toEqual({
        ok: served.total,
        headersTimeouts: SILENT,
        requestTimeouts: 0,
      });
      expect(served.during).toBeGreaterThanOrEqual(1);
    } finally {
      for (const conn of conns) conn.socket.destroy();
    }
    await expectAlive();
  });

  it(`loses nothing of a seeded load of ${LOAD_TOTAL} PUTs interleaved with all of the above`, async () => {
    await load.run(LOAD_TOTAL - load.sent);
    expect(load.sent).toBe(LOAD_TOTAL);
    expect(load.failures).toEqual([]);
    const stored = await storedAcme();
    const expected = new Map([...BEFORE.map((env) => [env.name, env] as const), ...load.expected]);
    expect(new Set(stored.keys())).toEqual(new Set(expected.keys()));
    for (const [name, body] of expected) expect(stored.get(name), name).toEqual(body);
    expect(emulator.stderr()).not.toMatch(/uncaught|unhandled|handler failed|"level":50/i);
    // A graceful stop writes exactly that store to --data.
    const stoppedStore = (await send(`${emulator.url}/_emulator/store`, { dispatcher: agent }))
      .body;
    expect(await emulator.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(JSON.parse(await readFile(tmp.path('store.json'), 'utf8'))).toEqual(stoppedStore);
  });
});
