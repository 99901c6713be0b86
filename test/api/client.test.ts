import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/runtime/system-clock.ts';
import { createClient } from '../../src/api/client.ts';
import type { Clock } from '../../src/core/clock.ts';
import { MASKED, Masker } from '../../src/core/mask.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/core/retry-policy.ts';
import { manualClock } from '../helpers/clock.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { waitFor } from '../helpers/wait.ts';

let api: Awaited<ReturnType<typeof startFakeApi>> | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const listing = (count: number, org: string) =>
  JSON.stringify({
    env: Array.from({ length: count }, (_, i) => ({
      org,
      name: `env-${i}`,
      type: 'K8S',
      description: 'x'.repeat(40),
    })),
  });

function client(
  url: string,
  maxResponseBytes: number,
  extra: { timeoutMs?: number; signal?: AbortSignal; clock?: Clock } = {},
) {
  return createClient({
    apiUrl: new URL(url),
    getToken: () => 'client-test-token',
    concurrency: 2,
    timeoutMs: extra.timeoutMs ?? 5000,
    ...(extra.signal ? { signal: extra.signal } : {}),
    policy: { ...DEFAULT_RETRY_POLICY, retries: 0 },
    logger: pino({ level: 'silent' }),
    clock: extra.clock ?? systemClock,
    maxResponseBytes,
  });
}

describe('the client reads whole listings, up to a limit', () => {
  it.each([
    ['with a Content-Length', false],
    ['chunked (no Content-Length)', true],
  ])('answered %s: read when within the limit, refused when over it', async (_title, chunked) => {
    const small = listing(3, 'small');
    const big = listing(200, 'big');
    api = await startFakeApi((req, res) => {
      const body = req.url?.endsWith('/big') ? big : small;
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(chunked ? {} : { 'content-length': Buffer.byteLength(body) }),
      });
      // Chunked: several chunks, so the limit is met part-way through the stream.
      const step = chunked ? 1000 : body.length;
      for (let i = 0; i < body.length; i += step) res.write(body.slice(i, i + step));
      res.end();
    });
    const limit = 4096;
    expect(Buffer.byteLength(small)).toBeLessThan(limit);
    expect(Buffer.byteLength(big)).toBeGreaterThan(limit);
    const c = client(api.url, limit);
    try {
      expect((await c.listEnvironments('small')).map((e) => e.name)).toEqual([
        'env-0',
        'env-1',
        'env-2',
      ]);
      await expect(c.listEnvironments('big')).rejects.toThrow(/larger than 4096 bytes/);
    } finally {
      await c.close();
    }
  });
});

describe('the client cuts a request at --timeout, whole body included, and stops on cancel', () => {
  it('a request never answered, and a body that trickles in, both end as a timeout', async () => {
    api = await startFakeApi((req, res) => {
      if (req.url?.endsWith('/silent')) return; // never answers
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"env": ['); // then a byte now and then, never the end
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    });
    const c = client(api.url, 1 << 20, { timeoutMs: 300 });
    try {
      // Cut by the client's own timer (kind "timeout"), not by the server or the test's timeout.
      await expect(c.listEnvironments('silent')).rejects.toThrow(
        /GET \/api\/v2\/environments\/silent: no answer within 300 ms \(--timeout\)/,
      );
      await expect(c.listEnvironments('silent')).rejects.toMatchObject({ kind: 'timeout' });
      await expect(c.listEnvironments('slow')).rejects.toThrow(/no answer within 300 ms/);
      await expect(c.listEnvironments('slow')).rejects.toMatchObject({ kind: 'timeout' });
    } finally {
      await c.close();
    }
  });

  it("the timeout runs on the client's clock: a request never answered ends as that clock passes it", async () => {
    api = await startFakeApi(() => undefined); // never answers
    const clock = manualClock();
    const c = client(api.url, 1 << 20, { timeoutMs: 600_000, clock });
    try {
      let outcome: unknown;
      const pending = c.listEnvironments('silent');
      void pending.then(
        () => (outcome = 'answered'),
        (error: unknown) => (outcome = error),
      );
      const server = api;
      await waitFor('the request to reach the server', () => server.requests.length === 1);
      await clock.advance(599_999);
      expect(outcome).toBeUndefined();
      await clock.advance(1);
      await expect(pending).rejects.toMatchObject({
        kind: 'timeout',
        message: 'GET /api/v2/environments/silent: no answer within 600000 ms (--timeout)',
      });
    } finally {
      await c.close();
    }
  });

  it('aborting the shutdown signal ends a request in flight with its reason', async () => {
    api = await startFakeApi(() => undefined); // never answers
    const shutdown = new AbortController();
    const c = client(api.url, 1 << 20, { timeoutMs: 60_000, signal: shutdown.signal });
    try {
      const pending = c.listEnvironments('acme');
      setTimeout(() => shutdown.abort(new Error('shutting down')), 100);
      await expect(pending).rejects.toThrow('shutting down');
    } finally {
      await c.close();
    }
  });
});

describe("the client's messages quote the service masked, then cut", () => {
  it('an excerpt cut in the middle of the token leaves no piece of it', async () => {
    const token = 'Tq9Lacme42xZ7Vb3Wm1TkP8s';
    // The token straddles the excerpt's cut (297 characters and "..."): a cut first would keep 7
    // of it, too few to be masked after.
    const said = `${'refused; '.repeat(33).slice(0, 290)}${token} and more ${'.'.repeat(100)}`;
    api = await startFakeApi((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(said);
    });
    const secrets = new Masker();
    secrets.add(token);
    const c = createClient({
      apiUrl: new URL(api.url),
      getToken: () => token,
      mask: secrets.mask,
      concurrency: 1,
      timeoutMs: 5000,
      policy: { ...DEFAULT_RETRY_POLICY, retries: 0 },
      logger: pino({ level: 'silent' }),
      clock: systemClock,
    });
    try {
      const error = await c.listEnvironments('acme').catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(Error);
      const message = (error as Error).message;
      expect(message.endsWith(`${MASKED.slice(0, 7)}...`)).toBe(true);
      expect(message.includes(token.slice(0, 4))).toBe(false);
    } finally {
      await c.close();
    }
  });
});
