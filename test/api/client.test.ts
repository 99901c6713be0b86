/**
 * The client over real loopback HTTP: every wait and body bounded, the retry policy carried out,
 * an address that cannot be reached failing fast. Outcomes, error kinds and the requests the
 * server counted are asserted, never a duration.
 */
import type { ServerResponse } from 'node:http';
import pino from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createClient, type ClientOptions } from '../../src/api/client.ts';
import { ApiError } from '../../src/api/errors.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../src/api/retry-policy.ts';
import { MASKED, Masker } from '../../src/core/mask.ts';
import { systemClock } from '../../src/runtime/system-clock.ts';
import { desired } from '../helpers/builders.ts';
import { manualClock } from '../helpers/clock.ts';
import { closedPort, startFakeApi } from '../helpers/fake-api.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'Tq9Lacme42xZ7Vb3Wm1TkP8s';

async function fakeApi(handler: Parameters<typeof startFakeApi>[0], port?: number) {
  const api = await startFakeApi(handler, port);
  onTestFinished(() => api.close());
  return api;
}

type Extra = Partial<Omit<ClientOptions, 'policy'>> & { policy?: Partial<RetryPolicy> };

/** A client with a short backoff; `attempts` records each attempt's method and outcome. */
function client(url: string, { policy, ...extra }: Extra = {}) {
  const attempts: string[] = [];
  const c = createClient({
    apiUrl: new URL(url),
    getToken: () => TOKEN,
    concurrency: 2,
    timeoutMs: 10_000,
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    events: { request: (method, status) => attempts.push(`${method} ${status}`) },
    ...extra,
    policy: { ...DEFAULT_RETRY_POLICY, minDelayMs: 10, ...policy },
  });
  onTestFinished(() => c.close());
  return Object.assign(c, { attempts });
}

const LISTING = '{"env":[{"org":"acme","name":"a","type":"K8S","description":"a"}]}';

function answer(res: ServerResponse, status: number, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(status === 200 ? LISTING : JSON.stringify({ message: `answer ${status}` }));
}

/** The ApiError a promise rejects with (the test fails if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error: unknown = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('the retry policy, carried out', () => {
  it.each([
    [404, 1, 'http', 'PUT /api/v2/environments/acme: 404 answer 404'],
    [422, 1, 'http', '422 answer 422'],
    [501, 1, 'http', '501 answer 501'],
    [409, 3, 'http', '409 answer 409'],
    [503, 3, 'http', '503 answer 503'],
    [302, 1, 'redirect', 'envsync does not follow redirects'],
    [401, 1, 'auth', 'the token was refused (401): answer 401'],
  ])('a %i is tried %i times with --retries 2', async (status, tries, kind, message) => {
    const api = await fakeApi((_req, res) => answer(res, status, { location: '/elsewhere' }));
    const c = client(api.url, { policy: { retries: 2 } });
    const error = await rejection(c.putEnvironment('acme', desired('a')));
    expect(error).toMatchObject({ kind, status });
    expect(error.message).toContain(message);
    expect(api.requests).toHaveLength(tries);
  });

  it('a 429 uses up no retry: with --retries 1, three 429s and then the answer', async () => {
    let count = 0;
    const api = await fakeApi((_req, res) =>
      ++count <= 3 ? answer(res, 429, { 'retry-after': '0' }) : answer(res, 200),
    );
    const c = client(api.url, { policy: { retries: 1 }, deadlineMs: 60_000 });
    expect((await c.listEnvironments('acme')).environments.map((e) => e.name)).toEqual(['a']);
    expect(api.requests).toHaveLength(4);
  });

  it('quotes the service masked, then cut: a cut through the token leaves no piece of it', async () => {
    // The token straddles the excerpt's cut (297 characters and "..."): cut first, 7 of its
    // characters would stay, too few to be masked.
    const said = `${'refused; '.repeat(33).slice(0, 290)}${TOKEN} and more ${'.'.repeat(100)}`;
    const api = await fakeApi((_req, res) => res.writeHead(500).end(said));
    const secrets = new Masker();
    secrets.add(TOKEN);
    const c = client(api.url, { mask: secrets.mask, policy: { retries: 0 } });
    const error = await rejection(c.listEnvironments('acme'));
    expect(error.message.endsWith(`${MASKED.slice(0, 7)}...`)).toBe(true);
    expect(error.message).not.toContain(TOKEN.slice(0, 4));
  });
});

describe('--timeout cuts each attempt, whole body included; a signal cuts a request in flight', () => {
  it('a request never answered, and a body that trickles in, both end as a timeout', async () => {
    const api = await fakeApi((req, res) => {
      if (req.url?.endsWith('/silent')) return; // never answers
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"env": ['); // then a byte now and then, never the end
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    });
    const c = client(api.url, { timeoutMs: 300, policy: { retries: 0 } });
    for (const org of ['silent', 'slow']) {
      const error = await rejection(c.listEnvironments(org));
      expect(error.kind).toBe('timeout');
      expect(error.message).toBe(
        `GET /api/v2/environments/${org}: no answer within 300 ms (--timeout)`,
      );
    }
  });

  it("runs on the client's clock: a request never answered ends as that clock passes it", async () => {
    const api = await fakeApi(() => undefined);
    const clock = manualClock();
    const c = client(api.url, { timeoutMs: 600_000, clock, policy: { retries: 0 } });
    let outcome: unknown;
    const pending = c.listEnvironments('silent');
    pending.catch((error: unknown) => (outcome = error));
    await waitFor('the request to reach the server', () => api.requests.length === 1);
    await clock.advance(599_999);
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    expect((await rejection(pending)).kind).toBe('timeout');
  });

  it('aborting the signal ends a request in flight with its reason', async () => {
    const api = await fakeApi(() => undefined);
    const abort = new AbortController();
    const pending = client(api.url, { signal: abort.signal }).listEnvironments('acme');
    await waitFor('the request to reach the server', () => api.requests.length === 1);
    abort.abort(new Error('shutting down'));
    await expect(pending).rejects.toThrow('shutting down');
  });
});

describe('--deadline: nothing is sent, and no wait begun, past the run deadline', () => {
  it('a 429 whose Retry-After would outlast the deadline fails at once, not sent again', async () => {
    const api = await fakeApi((_req, res) => answer(res, 429, { 'retry-after': '120' }));
    const c = client(api.url, { deadlineMs: 60_000 });
    const error = await rejection(c.listEnvironments('acme'));
    expect(error.kind).toBe('deadline');
    expect(error.message).toMatch(
      /not sent again: the run's deadline \(--deadline 1m\) would pass during the 120 s wait before sending; the last attempt: .*429/,
    );
    expect(api.requests).toHaveLength(1);
    expect(c.canSend()).toBe(true); // the deadline itself has not passed
  });

  it.each([
    ["a 503's Retry-After", { 'retry-after': '60' }, {}],
    ['a backoff', {}, { minDelayMs: 60_000, maxDelayMs: 120_000 }],
  ])('%s that would outlast the deadline is not begun', async (_t, headers, policy) => {
    const api = await fakeApi((_req, res) => answer(res, 503, headers));
    const c = client(api.url, { deadlineMs: 60_000, policy });
    const error = await rejection(c.putEnvironment('acme', desired('a')));
    expect(error.kind).toBe('deadline');
    expect(error.message).toMatch(/not sent again: .*deadline.*the last attempt: .*503/);
    expect(api.requests).toHaveLength(1);
  });

  it('once the deadline has passed no request is started', async () => {
    const api = await fakeApi((_req, res) => answer(res, 200));
    const clock = manualClock();
    const c = client(api.url, { deadlineMs: 1, clock });
    await clock.advance(1);
    expect(c.canSend()).toBe(false);
    const error = await rejection(c.listEnvironments('acme'));
    expect(error.kind).toBe('deadline');
    expect(error.message).toMatch(
      /^GET \S+: not sent: the run's deadline \(--deadline 1ms\) passed$/,
    );
    expect(api.requests).toHaveLength(0);
  });
});

describe('--max-retry-after: a longer Retry-After is waited only this long, and counted', () => {
  it.each([
    [429, { 'retry-after': '3600' }, true],
    [503, { 'retry-after': '3600' }, true],
    [500, {}, false],
  ])(
    'a %i asking for %j is retried (after the cap); the time is reported per org and to the hook',
    async (status, headers, throttled) => {
      let count = 0;
      const api = await fakeApi((_req, res) =>
        ++count === 1 ? answer(res, status, headers) : answer(res, 200),
      );
      const spans: number[] = [];
      const c = client(api.url, {
        deadlineMs: 60_000,
        policy: { maxRetryAfterMs: 300 },
        events: { throttledFor: (ms) => spans.push(ms) },
      });
      await c.listEnvironments('acme');
      expect(api.requests).toHaveLength(2);
      expect([c.throttledMs('acme') > 0, c.throttledMs() > 0]).toEqual([throttled, throttled]);
      expect(spans.reduce((a, b) => a + b, 0) > 0).toBe(throttled);
      expect(c.throttledMs('globex')).toBe(0);
    },
  );
});

describe('a stop ends every wait at once; a request that needs none still goes out', () => {
  it.each([
    ['a 120 s Retry-After pause', 429, { 'retry-after': '120' }, {}],
    ["a long backoff (p-retry's)", 500, {}, { minDelayMs: 60_000 }],
  ])(
    'during %s: the request fails as not sent, with no other request',
    async (_t, status, headers, policy) => {
      const api = await fakeApi((_req, res) => answer(res, status, headers));
      const stop = new AbortController();
      const c = client(api.url, { stop: stop.signal, policy });
      const settled = rejection(c.putEnvironment('acme', desired('a')));
      await waitFor('the first answer', () => c.attempts.length > 0);
      stop.abort(new Error('test stop'));
      const error = await settled;
      expect(error.kind).toBe('stopped');
      expect(error.message).toMatch(/not sent again: envsync is shutting down; the last attempt: /);
      expect(api.requests).toHaveLength(1);
      expect(c.canSend()).toBe(false);
    },
  );

  it('a request that needs no wait still goes out while stopping', async () => {
    const api = await fakeApi((_req, res) => answer(res, 200));
    const c = client(api.url, { stop: AbortSignal.abort(new Error('test stop')) });
    expect((await c.listEnvironments('acme')).environments.map((e) => e.name)).toEqual(['a']);
  });
});

describe('--max-response-bytes: an answer over the cap is final and never downloaded again', () => {
  const LIMIT = 64 * 1024;
  const big = JSON.stringify({
    env: Array.from({ length: 2000 }, (_, i) => ({
      org: 'acme',
      name: `env-${i}`,
      type: 'K8S',
      description: 'x'.repeat(40),
    })),
  });

  it.each([
    ['announced by Content-Length', false],
    ['streamed without a Content-Length', true],
  ])('%s: refused, not retried, not fetched again; a small one is read', async (_t, chunked) => {
    expect(Buffer.byteLength(big)).toBeGreaterThan(LIMIT);
    const api = await fakeApi((req, res) => {
      const body = req.url?.endsWith('/acme') ? big : '{"env":[]}';
      const length = chunked ? {} : { 'content-length': Buffer.byteLength(body) };
      res.writeHead(200, { 'content-type': 'application/json', ...length });
      // Chunked: several chunks, so the limit is met part-way through the stream.
      for (let i = 0; i < body.length; i += 4096) res.write(body.slice(i, i + 4096));
      res.end();
    });
    const c = client(api.url, { maxResponseBytes: LIMIT });
    const error = await rejection(c.listEnvironments('acme'));
    expect(error.kind).toBe('too-large');
    expect(error.message).toMatch(/larger than 65536 bytes.*--max-response-bytes/);
    await rejection(c.listEnvironments('acme'));
    expect(api.requests).toHaveLength(1);
    expect(await c.listEnvironments('globex')).toMatchObject({ environments: [] });
  });

  it('an endless body is cut at the cap, once: one request, and the connection closed', async () => {
    let closed = 0;
    const api = await fakeApi((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(16 * 1024, 0x20);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', pump);
      res.on('close', () => closed++);
      res.write('{"env":[');
      pump();
    });
    const c = client(api.url, { maxResponseBytes: LIMIT });
    expect((await rejection(c.listEnvironments('acme'))).kind).toBe('too-large');
    await waitFor('the connection closed', () => closed > 0);
    expect(api.requests).toHaveLength(1);
  });
});

describe('an address that cannot be reached fails fast', () => {
  it('a refused connection is tried once more, not --retries times; later requests are not sent', async () => {
    const port = await closedPort();
    const c = client(`http://127.0.0.1:${port}`);
    const first = await rejection(c.listEnvironments('acme'));
    expect(first.message).toBe(
      `GET /api/v2/environments/acme: connection refused by 127.0.0.1:${port} (ECONNREFUSED)`,
    );
    expect(first).toMatchObject({
      kind: 'network',
      code: 'ECONNREFUSED',
      host: `127.0.0.1:${port}`,
    });
    expect(c.attempts).toEqual(['GET error', 'GET error']);
    const second = await rejection(c.listEnvironments('beta'));
    expect(second.message).toBe(
      `GET /api/v2/environments/beta: not sent: an earlier request found the API unreachable: connection refused by 127.0.0.1:${port} (ECONNREFUSED)`,
    );
    expect(second).toMatchObject({ kind: 'network', code: 'ECONNREFUSED' });
    expect(c.attempts).toHaveLength(2);
    // With --retries 0, one attempt.
    const once = client(`http://127.0.0.1:${port}`, { policy: { retries: 0 } });
    await rejection(once.listEnvironments('acme'));
    expect(once.attempts).toEqual(['GET error']);
  });

  it('a reset connection uses every retry, and leaves later requests to be sent', async () => {
    const api = await fakeApi((req) => req.socket.destroy());
    const c = client(api.url, { policy: { retries: 2 } });
    expect((await rejection(c.listEnvironments('acme'))).kind).toBe('network');
    await rejection(c.listEnvironments('beta'));
    expect(api.requests).toHaveLength(6);
  });

  /** A probe refused once, and another request waiting for its verdict. */
  async function probing() {
    const port = await closedPort();
    // The manual clock never passes the bound of the wait for the probe's verdict; the probe's
    // quick retry waits p-retry's backoff, 1 to 2 s.
    const c = client(`http://127.0.0.1:${port}`, {
      clock: manualClock(),
      policy: { minDelayMs: 1000 },
    });
    const probe = c.listEnvironments('acme').catch((e: unknown) => e);
    await waitFor('the first attempt refused', () => c.attempts.length === 1);
    // The host is suspect: this request waits, sending nothing, for the probe's verdict.
    const waiting = c.listEnvironments('beta').catch((e: unknown) => e);
    return { port, c, probe, waiting };
  }

  it('while the host is suspect, a probe answered on its quick retry lets the waiting requests go', async () => {
    const { port, c, probe, waiting } = await probing();
    const server = await fakeApi((_req, res) => res.writeHead(200).end('{"env":[]}'), port);
    expect(await probe).toMatchObject({ environments: [] });
    expect(await waiting).toMatchObject({ environments: [] });
    expect(c.attempts).toEqual(['GET error', 'GET 200', 'GET 200']);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/api/v2/environments/acme',
      '/api/v2/environments/beta',
    ]);
  });

  it('while the host is suspect, a probe refused again fails the waiting requests, not sent', async () => {
    const { c, probe, waiting } = await probing();
    expect(String(await probe)).toMatch(/acme: connection refused by/);
    expect(String(await waiting)).toMatch(
      /^ApiError: GET \/api\/v2\/environments\/beta: not sent: an earlier request found the API unreachable: connection refused by /,
    );
    expect(c.attempts).toEqual(['GET error', 'GET error']);
  });
});
