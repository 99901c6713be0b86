/**
 * An address that cannot be reached fails fast: the client against a closed loopback port (a
 * refused connection) and a host name under `.invalid` (RFC 6761: it never resolves). Attempts are
 * counted through the client's request events; no duration is asserted.
 */
import { lookup } from 'node:dns/promises';
import { createServer } from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/client.ts';
import { ApiError } from '../../src/api/errors.ts';
import { DEFAULT_RETRY_POLICY } from '../../src/core/retry-policy.ts';
import { systemClock } from '../../src/runtime/system-clock.ts';
import { desired } from '../helpers/builders.ts';
import { manualClock } from '../helpers/clock.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { waitFor } from '../helpers/wait.ts';

/** A name that never resolves (RFC 6761, section 6.4). */
const NOWHERE = 'api.envsync-test.invalid';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A client with the default retries (backoff shortened), counting the attempts it makes. */
function countingClient(url: string, retries = DEFAULT_RETRY_POLICY.retries) {
  const attempts: string[] = [];
  const client = createClient({
    apiUrl: new URL(url),
    getToken: () => 'unreachable-test-token',
    concurrency: 4,
    timeoutMs: 10_000,
    logger: pino({ level: 'silent' }),
    clock: systemClock,
    policy: { ...DEFAULT_RETRY_POLICY, retries, minDelayMs: 5 },
    events: { request: (method, status) => attempts.push(`${method} ${status}`) },
  });
  closers.push(() => client.close());
  return { client, attempts };
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('a refused connection', () => {
  it('is tried once more, not --retries times; then the host is known unreachable and later requests are not sent', async () => {
    const port = await closedPort();
    const { client, attempts } = countingClient(`http://127.0.0.1:${port}`);
    const first = await rejection(client.listEnvironments('acme'));
    expect(first.message).toBe(
      `GET /api/v2/environments/acme: connection refused by 127.0.0.1:${port} (ECONNREFUSED)`,
    );
    expect(first).toMatchObject({
      kind: 'network',
      code: 'ECONNREFUSED',
      host: `127.0.0.1:${port}`,
    });
    expect(attempts).toEqual(['GET error', 'GET error']);

    const second = await rejection(client.listEnvironments('beta'));
    expect(second.message).toBe(
      `GET /api/v2/environments/beta: not sent: an earlier request found the API unreachable: connection refused by 127.0.0.1:${port} (ECONNREFUSED)`,
    );
    expect(second).toMatchObject({ kind: 'network', code: 'ECONNREFUSED' });
    expect(attempts).toHaveLength(2);
  });

  it('with --retries 0, one attempt', async () => {
    const port = await closedPort();
    const { client, attempts } = countingClient(`http://127.0.0.1:${port}`, 0);
    await rejection(client.listEnvironments('acme'));
    expect(attempts).toEqual(['GET error']);
  });
});

describe('a host name that does not resolve', () => {
  it('is tried once more, then the later requests are not sent', async () => {
    // The precondition: this machine's resolver has no answer for the name (RFC 6761 says none
    // may); a resolver that cannot be asked at all says EAI_AGAIN, which is a DNS failure too.
    const resolved = await lookup(NOWHERE).then(
      () => 'resolved',
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(resolved);

    const { client, attempts } = countingClient(`https://${NOWHERE}`);
    const first = await rejection(client.listEnvironments('acme'));
    expect(first.message).toMatch(
      new RegExp(
        `^GET /api/v2/environments/acme: the host name ${NOWHERE.replaceAll('.', '\\.')} (does not resolve \\(ENOTFOUND\\)|could not be resolved \\(EAI_AGAIN\\))$`,
      ),
    );
    expect(first).toMatchObject({ kind: 'network', host: `${NOWHERE}:443` });
    expect(attempts).toEqual(['GET error', 'GET error']);
    const second = await rejection(client.putEnvironment('acme', desired('x')));
    expect(second.message).toMatch(
      /^PUT \S+: not sent: an earlier request found the API unreachable/,
    );
    expect(attempts).toHaveLength(2);
  });
});

describe('what is still retried as before', () => {
  it('a reset connection uses every retry, and leaves later requests to be sent', async () => {
    const api = await startFakeApi((req) => req.socket.destroy());
    closers.push(() => api.close());
    const { client, attempts } = countingClient(api.url, 2);
    const first = await rejection(client.listEnvironments('acme'));
    expect(first.kind).toBe('network');
    expect(attempts).toHaveLength(3);
    await rejection(client.listEnvironments('beta'));
    expect(attempts).toHaveLength(6);
    expect(api.requests).toHaveLength(6);
  });
});

describe('while the host is suspect, the others wait for the probe', () => {
  it('a probe answered on its quick retry lets the waiting requests go: nothing failed', async () => {
    const port = await closedPort();
    const clock = manualClock();
    const attempts: string[] = [];
    const client = createClient({
      apiUrl: new URL(`http://127.0.0.1:${port}`),
      getToken: () => 'unreachable-test-token',
      concurrency: 4,
      timeoutMs: 10_000,
      logger: pino({ level: 'silent' }),
      clock,
      policy: { ...DEFAULT_RETRY_POLICY, minDelayMs: 1000 },
      events: { request: (method, status) => attempts.push(`${method} ${status}`) },
    });
    closers.push(() => client.close());
    const probe = client.listEnvironments('acme');
    await waitFor('the first attempt refused', () => attempts.length === 1);
    // The host is suspect: this request waits, sending nothing, for the probe's verdict.
    const waiting = client.listEnvironments('beta');
    // The service comes back on its port before the probe's quick retry (after 1 to 2 s).
    const server = await startFakeApi((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"env":[]}');
    }, port);
    closers.push(() => server.close());
    expect(server.requests).toEqual([]);
    await clock.advance(2000);
    await expect(probe).resolves.toEqual([]);
    await expect(waiting).resolves.toEqual([]);
    expect(attempts).toEqual(['GET error', 'GET 200', 'GET 200']);
    expect(server.requests.map((r) => r.url)).toEqual([
      '/api/v2/environments/acme',
      '/api/v2/environments/beta',
    ]);
  });

  it('a probe refused again fails the waiting requests, not sent', async () => {
    const port = await closedPort();
    const clock = manualClock();
    const attempts: string[] = [];
    const client = createClient({
      apiUrl: new URL(`http://127.0.0.1:${port}`),
      getToken: () => 'unreachable-test-token',
      concurrency: 4,
      timeoutMs: 10_000,
      logger: pino({ level: 'silent' }),
      clock,
      policy: { ...DEFAULT_RETRY_POLICY, minDelayMs: 1000 },
      events: { request: (method, status) => attempts.push(`${method} ${status}`) },
    });
    closers.push(() => client.close());
    const probe = rejection(client.listEnvironments('acme'));
    await waitFor('the first attempt refused', () => attempts.length === 1);
    const waiting = rejection(client.listEnvironments('beta'));
    await clock.advance(2000);
    expect((await probe).message).toMatch(/acme: connection refused by/);
    expect((await waiting).message).toMatch(
      /^GET \/api\/v2\/environments\/beta: not sent: an earlier request found the API unreachable: connection refused by /,
    );
    expect(attempts).toEqual(['GET error', 'GET error']);
  });
});
