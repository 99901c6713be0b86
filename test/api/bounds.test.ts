/**
 * Every wait is bounded, and so is memory: the client over a real loopback HTTP server. No
 * duration is asserted: outcomes, error kinds and the requests the server counted are.
 */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/runtime/system-clock.ts';
import { createClient, type ClientOptions } from '../../src/api/client.ts';
import { ApiError } from '../../src/api/errors.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../src/core/retry-policy.ts';
import { desired } from '../helpers/builders.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { waitFor } from '../helpers/wait.ts';

let api: Awaited<ReturnType<typeof startFakeApi>> | undefined;
let closeClient: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeClient?.();
  closeClient = undefined;
  await api?.close();
  api = undefined;
});

const LISTING = JSON.stringify({
  env: [{ org: 'acme', name: 'a', type: 'K8S', description: 'a' }],
});

function answer(res: ServerResponse, status: number, headers: Record<string, string> = {}) {
  const body = status === 200 ? LISTING : JSON.stringify({ message: `answer ${status}` });
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
}

function makeClient(
  url: string,
  extra: Partial<Omit<ClientOptions, 'policy'>> & { policy?: Partial<RetryPolicy> } = {},
) {
  const { policy, ...rest } = extra;
  const client = createClient({
    apiUrl: new URL(url),
    getToken: () => 'bounds-test-token',
    concurrency: 2,
    timeoutMs: 10_000,
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    ...rest,
    policy: { ...DEFAULT_RETRY_POLICY, retries: 4, minDelayMs: 10, ...policy },
  });
  closeClient = () => client.close();
  return client;
}

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

/** Resolves with `promise`'s settlement, or with 'guard' if it is still pending after `ms`. */
async function beforeGuard<T>(promise: Promise<T>, ms = 10_000): Promise<T | 'guard'> {
  const guard = new AbortController();
  try {
    return await Promise.race([promise, sleep(ms, 'guard' as const, { signal: guard.signal })]);
  } finally {
    guard.abort();
  }
}

describe('--deadline: nothing is sent, and no wait begun, past the run deadline', () => {
  it('a 429 with Retry-After: 120 that would outlast the deadline fails the request at once as not sent, without another request', async () => {
    api = await startFakeApi((_req, res) => answer(res, 429, { 'retry-after': '120' }));
    const client = makeClient(api.url, { deadlineMs: 60_000 });
    const error = await rejection(beforeGuard(client.listEnvironments('acme')));
    expect(error.kind).toBe('deadline');
    expect(error.message).toMatch(/not sent.*deadline \(--deadline 1m\) would pass/);
    expect(api.requests).toHaveLength(1);
    expect(client.canSend()).toBe(true); // the deadline itself has not passed yet
  });

  it('a 503 whose Retry-After would outlast the deadline is not retried, and the error keeps the last answer', async () => {
    api = await startFakeApi((_req, res) => answer(res, 503, { 'retry-after': '60' }));
    const client = makeClient(api.url, { deadlineMs: 60_000 });
    const error = await rejection(beforeGuard(client.listEnvironments('acme')));
    expect(error.kind).toBe('deadline');
    expect(error.message).toMatch(/not sent again: .*deadline.*the last attempt: .*503/);
    expect(api.requests).toHaveLength(1);
  });

  it('a backoff sleep that would outlast the deadline is not started', async () => {
    api = await startFakeApi((_req, res) => answer(res, 500));
    const client = makeClient(api.url, {
      deadlineMs: 60_000,
      policy: { minDelayMs: 60_000, maxDelayMs: 120_000 },
    });
    const error = await rejection(beforeGuard(client.putEnvironment('acme', desired('a'))));
    expect(error.kind).toBe('deadline');
    expect(api.requests).toHaveLength(1);
  });

  it('once the deadline has passed no request is started: the error says not sent', async () => {
    api = await startFakeApi((_req, res) => answer(res, 200));
    const client = makeClient(api.url, { deadlineMs: 1 });
    await sleep(20);
    expect(client.canSend()).toBe(false);
    const error = await rejection(client.listEnvironments('acme'));
    expect(error.kind).toBe('deadline');
    expect(error.message).toMatch(
      /^GET \S+: not sent: the run's deadline \(--deadline 1ms\) passed/,
    );
    expect(api.requests).toHaveLength(0);
  });

  it('within the deadline, throttled requests are retried as before and succeed', async () => {
    let count = 0;
    api = await startFakeApi((_req, res) =>
      ++count <= 2 ? answer(res, 429, { 'retry-after': '0' }) : answer(res, 200),
    );
    const client = makeClient(api.url, { deadlineMs: 60_000 });
    expect((await client.listEnvironments('acme')).map((e) => e.name)).toEqual(['a']);
    expect(api.requests).toHaveLength(3);
  });
});

describe('--max-retry-after: a longer Retry-After is waited only this long, and throttled time is counted', () => {
  it.each([429, 503])(
    'a %i asking for an hour is retried after the cap; the time is reported per org and to the metrics hook',
    async (status) => {
      let count = 0;
      api = await startFakeApi((_req, res) =>
        ++count === 1 ? answer(res, status, { 'retry-after': '3600' }) : answer(res, 200),
      );
      const spans: number[] = [];
      const client = makeClient(api.url, {
        deadlineMs: 60_000,
        policy: { maxRetryAfterMs: 300 },
        events: { throttledFor: (ms) => spans.push(ms) },
      });
      const result = await beforeGuard(client.listEnvironments('acme'));
      expect(result).not.toBe('guard');
      expect(api.requests).toHaveLength(2);
      expect(client.throttledMs('acme')).toBeGreaterThan(0);
      expect(client.throttledMs()).toBeGreaterThan(0);
      expect(client.throttledMs('globex')).toBe(0);
      // One stretch, or a few back to back (a timer may fire a millisecond before the clock says).
      expect(spans.length).toBeGreaterThan(0);
      expect(spans.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    },
  );

  it('an answer without Retry-After counts no throttled time', async () => {
    let count = 0;
    api = await startFakeApi((_req, res) => (++count === 1 ? answer(res, 500) : answer(res, 200)));
    const client = makeClient(api.url);
    await client.listEnvironments('acme');
    expect(api.requests).toHaveLength(2);
    expect(client.throttledMs()).toBe(0);
  });
});

describe('shutdown (the stop signal) ends waits at once', () => {
  it('during a 120 s Retry-After pause the request fails as not sent, with no other request', async () => {
    api = await startFakeApi((_req, res) => answer(res, 429, { 'retry-after': '120' }));
    const stop = new AbortController();
    const client = makeClient(api.url, { stop: stop.signal });
    const listing = client.listEnvironments('acme');
    const settled = listing.catch((e: unknown) => e);
    await waitFor('the first request', () => (api?.requests.length ?? 0) > 0);
    await sleep(50); // the answer arrives and the pause begins
    stop.abort(new Error('test stop'));
    const error = await beforeGuard(settled);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).kind).toBe('stopped');
    expect((error as ApiError).message).toMatch(/not sent again: envsync is shutting down/);
    expect(api.requests).toHaveLength(1);
    expect(client.canSend()).toBe(false);
  });

  it("during a long backoff (p-retry's delay is ours) the request fails as not sent", async () => {
    api = await startFakeApi((_req, res) => answer(res, 500));
    const stop = new AbortController();
    const client = makeClient(api.url, { stop: stop.signal, policy: { minDelayMs: 60_000 } });
    const settled = client.putEnvironment('acme', desired('a')).catch((e: unknown) => e);
    await waitFor('the first request', () => (api?.requests.length ?? 0) > 0);
    await sleep(50);
    stop.abort(new Error('test stop'));
    const error = await beforeGuard(settled);
    expect((error as ApiError).kind).toBe('stopped');
    expect(api.requests).toHaveLength(1);
  });

  it('a request that needs no wait still goes out while stopping', async () => {
    api = await startFakeApi((_req, res) => answer(res, 200));
    const stop = new AbortController();
    stop.abort(new Error('test stop'));
    const client = makeClient(api.url, { stop: stop.signal });
    expect((await client.listEnvironments('acme')).map((e) => e.name)).toEqual(['a']);
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
  ])('%s: refused, not retried, and not fetched again by the same client', async (_t, chunked) => {
    expect(Buffer.byteLength(big)).toBeGreaterThan(LIMIT);
    api = await startFakeApi((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(chunked ? {} : { 'content-length': String(Buffer.byteLength(big)) }),
      });
      res.end(big);
    });
    const client = makeClient(api.url, { maxResponseBytes: LIMIT });
    const error = await rejection(client.listEnvironments('acme'));
    expect(error.kind).toBe('too-large');
    expect(error.message).toMatch(/larger than 65536 bytes.*--max-response-bytes/);
    expect(api.requests).toHaveLength(1);
    const again = await rejection(client.listEnvironments('acme'));
    expect(again.kind).toBe('too-large');
    expect(api.requests).toHaveLength(1);
    // Another org's listing is still read.
    await rejection(client.listEnvironments('globex'));
    expect(api.requests).toHaveLength(2);
  });

  it('an endless body is cut at the cap, once: the server sees one request and a closed connection', async () => {
    let closed = 0;
    api = await startFakeApi((_req, res) => {
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
    const client = makeClient(api.url, { maxResponseBytes: LIMIT });
    const error = await rejection(beforeGuard(client.listEnvironments('acme')));
    expect(error.kind).toBe('too-large');
    expect(api.requests).toHaveLength(1);
    await waitFor('the connection closed', () => closed > 0);
    await rejection(client.listEnvironments('acme'));
    expect(api.requests).toHaveLength(1);
  });
});
