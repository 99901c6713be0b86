/**
 * Network boundaries against real loopback servers: requests go to the configured origin and path
 * prefix only, redirects are not followed, plain http:// to a remote host is refused before
 * anything is sent, and TLS is always verified. Runs that set NODE_TLS_REJECT_UNAUTHORIZED or
 * NODE_EXTRA_CA_CERTS are child processes, whose trust Node sets from their own environment.
 */
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { rootCertificates } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/core/report.ts';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { ACME } from '../helpers/fixtures.ts';
import { watchNetwork } from '../helpers/network-watch.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'net-boundary-token-9d4f2a';
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CA_FILE = 'test/fixtures/tls/ca.pem';
const TLS = fileURLToPath(new URL('../fixtures/tls/', import.meta.url));
const PREFIX = '/some/prefix';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  tmp = await tempDir();
  await tmp.write('manifests/acme.yaml', ACME);
  await tmp.write(
    'manifests/beta.yaml',
    'org: beta\nenvironments: [{name: web, type: logical, description: W}]\n',
  );
});
afterEach(async () => {
  for (const cleanup of cleanups.toReversed()) await cleanup();
  cleanups = [];
  await tmp.cleanup();
});

/** What a recording server keeps of a request. */
const seenOf = ({ method = '', url = '', headers }: IncomingMessage) => {
  const { host, authorization } = headers;
  return { method, url, host, authorization };
};

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void | Promise<void>;

/** A loopback HTTP(S) server that records every request it receives (and every TLS handshake). */
async function recordingServer(handler: Handler, { tls = false } = {}) {
  const seen: ReturnType<typeof seenOf>[] = [];
  const handshakes = { ok: 0, failed: 0 };
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    seen.push(seenOf(req));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const failed = (error: unknown) => void res.writeHead(500).end(String(error));
      Promise.resolve(handler(req, res, Buffer.concat(chunks))).catch(failed);
    });
  };
  const keys = {
    key: await readFile(`${TLS}server-key.pem`),
    cert: await readFile(`${TLS}server.pem`),
  };
  const server: Server = tls
    ? createHttpsServer(keys, listener)
        .on('secureConnection', () => handshakes.ok++)
        .on('tlsClientError', () => handshakes.failed++)
    : createHttpServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  cleanups.push(close);
  return { url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`, port, seen, handshakes };
}

async function emulator(): Promise<TestEmulator> {
  const running = await startTestEmulator({
    orgs: ['acme', 'beta'],
    tokens: [{ token: TOKEN, orgs: null }],
  });
  cleanups.push(() => running.close());
  return running;
}

/** Forwards requests under PREFIX to the emulator (prefix stripped); anything else is a 404. */
function forwardTo(api: TestEmulator): Handler {
  return async (req, res, body) => {
    const url = req.url ?? '';
    if (!url.startsWith(`${PREFIX}/`)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"outside"}');
      return;
    }
    const { authorization = '', 'content-type': type = '' } = req.headers;
    const headers = { authorization, 'content-type': type };
    const upstream = await request(`${api.url}${url.slice(PREFIX.length)}`, {
      method: req.method === 'PUT' ? 'PUT' : 'GET',
      headers,
      ...(req.method === 'PUT' ? { body } : {}),
      dispatcher: api.agent,
    });
    const text = await upstream.body.text();
    res.writeHead(upstream.statusCode, { 'content-type': 'application/json' }).end(text);
  };
}

const QUICK = ['--retries', '1', '--retry-delay', '10ms', '-o', 'json'];
const syncArgs = (apiUrl: string, extra: string[]) => {
  const files = ['--manifests', tmp.path('manifests'), '--state', tmp.path('state.json')];
  return ['sync', ...files, '--api-url', apiUrl, ...QUICK, ...extra];
};

/** One sync against `apiUrl`, in a child process. */
function sync(apiUrl: string, extra: string[] = [], env: Record<string, string> = {}) {
  return envsync(syncArgs(apiUrl, extra), { env: { ENVSYNC_TOKEN: TOKEN, ...env }, cwd: REPO });
}

/** One sync against `apiUrl`, the CLI's `main` in this process (in `cwd`, the repository's). */
function syncInProcess(apiUrl: string, extra: string[] = [], { cwd = REPO } = {}) {
  return envsyncInProcess(syncArgs(apiUrl, extra), { env: { ENVSYNC_TOKEN: TOKEN }, cwd });
}

const report = (stdout: string) => JSON.parse(stdout) as RunReport;

/** The emulator holds exactly the manifests' environments. */
async function expectConverged(api: TestEmulator): Promise<void> {
  const store = await api.getStore();
  const names = (org: string) => (store.orgs[org] ?? []).map((env) => env.name).toSorted();
  expect(names('acme')).toEqual(['production', 'staging']);
  expect(names('beta')).toEqual(['web']);
}

function expectNoCrash(result: { stdout: string; stderr: string }): void {
  expect(result.stderr).not.toMatch(/unexpected error|\n\s+at .+:\d+:\d+/);
}

describe('network boundaries', () => {
  it.each([PREFIX, `${PREFIX}/`])(
    'sends every request to the configured origin and path prefix only (--api-url ...%s)',
    async (prefix) => {
      const api = await emulator();
      const front = await recordingServer(forwardTo(api));
      const result = await syncInProcess(`${front.url}${prefix}`);
      expect(result.code, result.stderr).toBe(0);
      expectNoCrash(result);
      await expectConverged(api);
      const methods = new Set(front.seen.map((r) => r.method));
      expect(methods).toEqual(new Set(['GET', 'PUT']));
      for (const org of ['acme', 'beta'])
        expect(front.seen.some((r) => r.url === `${PREFIX}/api/v2/environments/${org}`)).toBe(true);
      for (const seen of front.seen) {
        expect(seen.url.startsWith(`${PREFIX}/api/v2/environments/`), seen.url).toBe(true);
        expect(seen.host).toBe(`127.0.0.1:${front.port}`);
        expect(seen.authorization).toBe(`Bearer ${TOKEN}`);
      }
      // Everything the emulator saw came through the front server.
      const reached = await api.getRequests(1000);
      expect(reached).toHaveLength(front.seen.length);
    },
  );

  it.each([301, 302, 303, 307, 308])(
    'does not follow a %i redirect: the org fails and the target receives nothing',
    async (status) => {
      const target = await recordingServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"env":[]}');
      });
      const redirector = await recordingServer((req, res) => {
        res.writeHead(status, { location: `${target.url}${req.url ?? '/'}` }).end();
      });
      const result = await syncInProcess(redirector.url);
      expect(result.code).toBe(1);
      expectNoCrash(result);
      for (const org of report(result.stdout).orgs) {
        expect(org.status).toBe('failed');
        expect(org.error).toContain('does not follow redirects');
      }
      expect(target.seen).toEqual([]);
      // One GET per org and attempt round at most, never a PUT.
      expect(redirector.seen.every((r) => r.method === 'GET')).toBe(true);
      expect(redirector.seen.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
    },
  );

  it.each([
    ['--api-url', 'http://api.example.invalid'],
    ['--api-url', 'http://api.example.invalid:8080/some/prefix'],
    ['--api-url', 'http://10.0.0.1'],
    ['ENVSYNC_API_URL', 'http://api.example.invalid'],
  ])(
    'refuses plain http:// to a non-loopback host before any request (%s %s)',
    async (where, url) => {
      // Were a request tried, it would fail fast rather than hit the test timeout.
      const args = ['sync', '--manifests', 'manifests', '--retries', '0', '--timeout', '2s'];
      const viaFlag = where === '--api-url';
      const env = { ENVSYNC_TOKEN: TOKEN, ...(viaFlag ? {} : { ENVSYNC_API_URL: url }) };
      const attempt = () =>
        envsyncInProcess(viaFlag ? [...args, '--api-url', url] : args, { env, cwd: tmp.dir });
      const { result, calls } = await watchNetwork(attempt, { offMachine: 'block' });
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toContain('plain http://');
      expect(result.stderr).toContain('--insecure-http');
      expectNoCrash(result);
      expect(calls).toEqual([]);
    },
  );

  it('the guard of the test above sees every attempt (and keeps it on the machine)', async () => {
    const api = await emulator();
    const allowed = await watchNetwork(() => syncInProcess(api.url), { offMachine: 'block' });
    expect(allowed.result.code, allowed.result.stderr).toBe(0);
    expect(allowed.calls).toContain(`connect 127.0.0.1:${api.port}`);
    // With --insecure-http the same URL as above is tried: the guard sees it and blocks it.
    const insecure = await watchNetwork(
      () => syncInProcess('http://api.example.invalid', ['--insecure-http']),
      { offMachine: 'block' },
    );
    expect(insecure.result.code).toBe(1);
    expect(insecure.calls.some((call) => call.includes('api.example.invalid'))).toBe(true);
  });

  describe('TLS', () => {
    it('refuses a server whose certificate it cannot verify: the org fails, exit 1, nothing sent', async () => {
      const api = await emulator();
      const front = await recordingServer(forwardTo(api), { tls: true });
      const result = await syncInProcess(`${front.url}${PREFIX}`);
      expect(result.code).toBe(1);
      expectNoCrash(result);
      const { orgs, failure } = report(result.stdout);
      expect(orgs.map((o) => o.status)).toEqual(['failed', 'failed']);
      for (const org of orgs)
        expect(org.error).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|certificate/i);
      // Said once for both orgs, with what to check.
      expect(failure).toMatchObject({ kind: 'tls', orgs: ['acme', 'beta'] });
      expect(failure?.hint).toContain('--ca-file');
      expect(front.handshakes.ok).toBe(0);
      // A certificate that cannot be verified is final: one handshake per org, no retry, no round.
      await waitFor('both handshakes seen', () => front.handshakes.failed >= 2);
      expect(front.handshakes.failed).toBe(2);
      // No request, so no Authorization header, ever reached the server.
      expect(front.seen).toEqual([]);
      expect((await api.getStore()).orgs).toEqual({});
    });

    it('trusts it with --ca-file, a relative one found from the command directory', async () => {
      const api = await emulator();
      const front = await recordingServer(forwardTo(api), { tls: true });
      // The command's directory is not this process's: the file is only found from the former.
      await tmp.write(CA_FILE, await readFile(`${REPO}${CA_FILE}`));
      const flags = ['--ca-file', CA_FILE];
      const result = await syncInProcess(`${front.url}${PREFIX}`, flags, { cwd: tmp.dir });
      expect(result.code, result.stderr).toBe(0);
      expectNoCrash(result);
      await expectConverged(api);
      expect(front.seen.length).toBeGreaterThan(0);
      for (const seen of front.seen)
        expect(seen.url.startsWith(`${PREFIX}/api/v2/environments/`)).toBe(true);
    });

    it.each([
      ['NODE_TLS_REJECT_UNAUTHORIZED=0', [], { NODE_TLS_REJECT_UNAUTHORIZED: '0' }],
      ['--insecure-http', ['--insecure-http'], {}],
      [
        'both, and --ca-file with another CA',
        ['--insecure-http', '--ca-file', 'other-ca.pem'],
        { NODE_TLS_REJECT_UNAUTHORIZED: '0' },
      ],
    ] as const)(
      'no flag or environment variable turns verification off (%s)',
      async (_what, extra, env) => {
        await tmp.write('other-ca.pem', rootCertificates[0] ?? '');
        const api = await emulator();
        const front = await recordingServer(forwardTo(api), { tls: true });
        const args = extra.map((arg) => (arg === 'other-ca.pem' ? tmp.path(arg) : arg));
        // Node reads NODE_TLS_REJECT_UNAUTHORIZED from its process: a child process of its own.
        const result =
          'NODE_TLS_REJECT_UNAUTHORIZED' in env
            ? await sync(`${front.url}${PREFIX}`, args, env)
            : await syncInProcess(`${front.url}${PREFIX}`, args);
        expect(result.code).toBe(1);
        expectNoCrash(result);
        for (const org of report(result.stdout).orgs) {
          expect(org.status).toBe('failed');
          expect(org.error).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|certificate/i);
        }
        expect(front.handshakes.ok).toBe(0);
        expect(front.seen).toEqual([]);
      },
    );

    it('--ca-file adds to the default trust store rather than replacing it', async () => {
      // NODE_EXTRA_CA_CERTS stands in for the system store: it trusts the fixture CA, while
      // --ca-file names an unrelated (public) root. Both must be trusted.
      await tmp.write('other-ca.pem', rootCertificates[0] ?? '');
      const api = await emulator();
      const front = await recordingServer(forwardTo(api), { tls: true });
      const result = await sync(`${front.url}${PREFIX}`, ['--ca-file', tmp.path('other-ca.pem')], {
        NODE_EXTRA_CA_CERTS: `${REPO}${CA_FILE}`,
      });
      expect(result.code, result.stderr).toBe(0);
      await expectConverged(api);
    });
  });
});
