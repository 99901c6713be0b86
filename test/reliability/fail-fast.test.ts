/**
 * Fast, clear failures, as a user meets them: a wrong port (a closed loopback port: the
 * connection is refused), a host name that does not resolve (under `.invalid`, which RFC 6761
 * keeps from ever resolving), a token the API refuses, a server that never answers. Each command
 * (plan, sync, export, run) is checked: the cause is said once with what to check, and the work
 * stops as it should. Nothing here measures a duration: attempts are counted (by the server, or
 * by recording the connects and lookups of the run), and outputs and exit codes are read.
 */
import { lookup } from 'node:dns/promises';
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/core/report.ts';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { startTestEmulator } from '../helpers/emulator.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { watchNetwork } from '../helpers/network-watch.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

// Random-looking: envsync masks any 12 characters of the token in a row, so a token made of
// words ("-api-token-") would blank those words out of the messages under test.
const TOKEN = 'fF9q4Tq9Lm2Zx7Vb';
/** A name that never resolves (RFC 6761, section 6.4). */
const NOWHERE = 'api.envsync-test.invalid';
const ORGS = ['acme', 'beta', 'gamma'];

let tmp: Awaited<ReturnType<typeof tempDir>>;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  tmp = await tempDir();
  for (const org of ORGS) await tmp.write(`manifests/${org}.yaml`, manifest(org));
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
  await tmp.cleanup();
});

function manifest(org: string): string {
  return `org: ${org}\nenvironments:\n  - name: web\n    type: S3\n    description: web\n`;
}

/** A loopback address nothing listens on: a port bound, then closed. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

const count = (text: string, part: string) => text.split(part).length - 1;

/** A one-shot command in this process, in the test's folder, with the token. */
function run(args: string[], env: Record<string, string> = {}) {
  return envsyncInProcess(args, { cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN, ...env } });
}

const pass = (command: 'plan' | 'sync', apiUrl: string, extra: string[] = []) => [
  command,
  '--manifests',
  'manifests',
  '--state',
  'state.json',
  '--api-url',
  apiUrl,
  ...extra,
];

const REFUSED_HINT =
  'Is --api-url right? Nothing accepts connections at that address: a wrong host or port, or the service is down.';

describe('a wrong port: the connection is refused', { timeout: 120_000 }, () => {
  it('plan and sync say it once, with the hint, and exit 1; no org is tried in another round', async () => {
    const url = await closedPortUrl();
    const host = new URL(url).host;
    for (const command of ['plan', 'sync'] as const) {
      const text = await run(pass(command, url, ['--retry-delay', '10ms']));
      expect(text.code).toBe(1);
      expect(text.stdout).toContain(
        `error: all 3 orgs failed the same way: the API at ${host} refused the connection (ECONNREFUSED)\n  ${REFUSED_HINT}\n  orgs: acme, beta, gamma\n`,
      );
      expect(count(text.stdout, 'ECONNREFUSED')).toBe(1);
      expect(text.stdout).not.toMatch(/^org /m);
      // Nothing per org on stderr either (the default level is warn): no retry, no round.
      expect(text.stderr).toBe('');
    }
    const markdown = await run(pass('plan', url, ['--retry-delay', '10ms', '-o', 'markdown']));
    expect(count(markdown.stdout, 'ECONNREFUSED')).toBe(1);
    expect(markdown.stdout).toContain('Is --api-url right?');

    // JSON keeps each org's own error and cause, beside the cause said once.
    const json = await run(pass('plan', url, ['--retry-delay', '10ms', '-o', 'json']));
    const report = JSON.parse(json.stdout) as RunReport;
    expect(report.failure).toMatchObject({
      kind: 'refused',
      code: 'ECONNREFUSED',
      host,
      orgs: ORGS,
      hint: REFUSED_HINT,
    });
    for (const org of report.orgs) {
      expect(org.status).toBe('failed');
      expect(org.cause).toEqual({ kind: 'refused', code: 'ECONNREFUSED', host });
      expect(org.error).toMatch(
        new RegExp(
          `^cannot list the org: GET /api/v2/environments/${org.org}: (not sent( again)?: an earlier request found the API unreachable: )?connection refused by ${host} \\(ECONNREFUSED\\)$`,
        ),
      );
    }
  });

  it('--log-level debug shows each org on its way', async () => {
    const url = await closedPortUrl();
    const result = await run(pass('plan', url, ['--retry-delay', '10ms', '--log-level', 'debug']));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the API cannot be reached: connection refused by');
    expect(result.stderr).toMatch(/retrying: GET \/api\/v2\/environments\/\w+: connection refused/);
  });

  it('export says it once on stderr, with the hint, and exits 1', async () => {
    const url = await closedPortUrl();
    const result = await run(['export', '--api-url', url, '--retry-delay', '10ms', ...orgFlags()]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `envsync export: all 3 orgs failed the same way: the API at ${new URL(url).host} refused the connection (ECONNREFUSED). ${REFUSED_HINT} (orgs: acme, beta, gamma)\n`,
    );
  });

  it('sync --plan with the API gone says so once, not that the service moved', async () => {
    const api = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: null }] });
    const planned = await run(pass('plan', api.url, ['--out', 'plan.json']));
    expect(planned.code, planned.stderr).toBe(0);
    await api.close();
    const applied = await run([
      ...pass('sync', api.url, ['--retry-delay', '10ms']),
      '--plan',
      'plan.json',
    ]);
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain(
      `cannot check plan.json against the service: all 3 orgs failed the same way: the API at ${new URL(api.url).host} refused the connection (ECONNREFUSED). ${REFUSED_HINT}\nNothing was sent.`,
    );
    expect(applied.stderr).not.toContain('moved');
  });

  it('the daemon says it once per pass, in the pass line and /status; each org keeps its error', async () => {
    const url = await closedPortUrl();
    const d = await startTestDaemon({
      apiUrl: url,
      cwd: tmp.dir,
      token: TOKEN,
      flags: { manifests: 'manifests', state: 'state.json' },
    });
    cleanups.push(() => d.stop());
    await waitFor('the first pass', () => d.passes() >= 1);
    const status = (await (await request(`${d.url}/status`)).body.json()) as {
      lastPass: { result: string; failure?: Record<string, unknown> };
      orgs: Record<string, { status: string; lastError: { message: string } | null }>;
    };
    expect(status.lastPass.result).toBe('partial');
    expect(status.lastPass.failure).toEqual({
      kind: 'refused',
      code: 'ECONNREFUSED',
      host: new URL(url).host,
      orgs: 3,
      message: `all 3 orgs failed the same way: the API at ${new URL(url).host} refused the connection (ECONNREFUSED)`,
      hint: REFUSED_HINT,
    });
    for (const org of ORGS) expect(status.orgs[org]?.lastError?.message).toContain('ECONNREFUSED');
    const passLine = d.logs().find((l) => String(l['msg']).startsWith('pass '));
    expect(String(passLine?.['msg'])).toContain(
      `refused the connection (ECONNREFUSED). ${REFUSED_HINT}`,
    );
    expect(d.logs().filter((l) => String(l['msg']).includes('trying the org again'))).toEqual([]);
    // Each org's own line is there at debug; only the pass line says it above that.
    const refusedLines = d.logs().filter((l) => String(l['msg']).includes('ECONNREFUSED'));
    expect(refusedLines.filter((l) => Number(l['level']) > 20).map((l) => l['msg'])).toEqual([
      passLine?.['msg'],
    ]);
    for (const org of ORGS) {
      expect(refusedLines.some((l) => String(l['msg']).startsWith(`org ${org} failed: `))).toBe(
        true,
      );
    }
    const page = await (await request(`${d.url}/`)).body.text();
    expect(page).toContain('Every org failed');
  });
});

describe('a host name that does not resolve', { timeout: 120_000 }, () => {
  it('this machine resolves no name under .invalid (the precondition of what follows)', async () => {
    // A resolver that cannot be asked at all says EAI_AGAIN: a DNS failure all the same.
    const code = await lookup(NOWHERE).then(
      () => 'resolved',
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(code);
  });

  it('plan says it once, with the hint, and exits 1', async () => {
    const result = await run(pass('plan', `https://${NOWHERE}`, ['--retry-delay', '10ms']));
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^error: all 3 orgs failed the same way: the API's host name api\.envsync-test\.invalid (does not resolve \(ENOTFOUND\)|could not be resolved \(EAI_AGAIN\))\n {2}Is --api-url right\? Check the host name, and that DNS resolves it where envsync runs\.\n/,
    );
    expect(count(result.stdout, NOWHERE)).toBe(1);
    expect(result.stderr).toBe('');
  });

  it('export says it once', async () => {
    const result = await run([
      'export',
      '--api-url',
      `https://${NOWHERE}`,
      '--retry-delay',
      '10ms',
      ...orgFlags(),
    ]);
    expect(result.code).toBe(1);
    expect(count(result.stderr, NOWHERE)).toBe(1);
    expect(result.stderr).toContain('Is --api-url right? Check the host name');
  });
});

describe(
  'attempts: one probe and its quick retry; the other orgs wait for it, and send nothing',
  { timeout: 120_000 },
  () => {
    /** 20 orgs more than the three of every test: 23 in all. */
    async function manyOrgs(): Promise<string[]> {
      const orgs = Array.from({ length: 20 }, (_, i) => `org${String(i).padStart(2, '0')}`);
      for (const org of orgs) await tmp.write(`manifests/${org}.yaml`, manifest(org));
      return [...ORGS, ...orgs];
    }

    /** A plan of the 23 orgs against `apiUrl`, its connects and lookups recorded. */
    async function planAgainst(apiUrl: string, concurrency: number) {
      const orgs = await manyOrgs();
      const args = pass('plan', apiUrl, ['--concurrency', String(concurrency), '-o', 'json']);
      const { result, calls } = await watchNetwork(() => run([...args, '--retry-delay', '10ms']));
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as RunReport;
      expect(report.failure?.orgs).toHaveLength(orgs.length);
      expect(result.stderr).not.toContain('trying the org again');
      const notSent = report.orgs.filter((o) =>
        /: not sent( again)?: an earlier request found the API unreachable/.test(o.error ?? ''),
      );
      return { calls, notSent };
    }

    it('a refused connection, one request at a time: two connections in all, the probe and its retry', async () => {
      const url = await closedPortUrl();
      const { calls, notSent } = await planAgainst(url, 1);
      const target = `connect 127.0.0.1:${new URL(url).port}`;
      expect(calls.filter((c) => c.startsWith('connect '))).toEqual([target, target]);
      expect(notSent).toHaveLength(22);
    });

    it('a refused connection, 8 at a time: those already in flight and the probe retry, no more', async () => {
      const url = await closedPortUrl();
      const { calls, notSent } = await planAgainst(url, 8);
      const connects = calls.filter((c) => c.startsWith('connect '));
      expect(connects.length).toBeGreaterThanOrEqual(2);
      expect(connects.length).toBeLessThanOrEqual(8 + 1);
      expect(notSent.length).toBeGreaterThanOrEqual(23 - 8);
    });

    it('a host name that does not resolve: two lookups in all, the probe and its retry', async () => {
      const { calls, notSent } = await planAgainst(`https://${NOWHERE}`, 1);
      expect(calls.filter((c) => c.startsWith('lookup '))).toEqual([
        `lookup ${NOWHERE}`,
        `lookup ${NOWHERE}`,
      ]);
      expect(notSent).toHaveLength(22);
    });
  },
);

describe('the token refused on every org', { timeout: 120_000 }, () => {
  const TOKEN_HINT = 'Is the token for this API?';

  it('401 (a token the API does not know): said once, with the hint', async () => {
    const api = await startTestEmulator({
      tokens: [{ token: 'aQ7w9x8y7zK2mP', orgs: null }],
    });
    cleanups.push(() => api.close());
    const result = await run(pass('plan', api.url));
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'error: all 3 orgs failed the same way: the token was refused (401)\n  Is the token for this API? Check ENVSYNC_TOKEN, --token-file or --token-dir, and --api-url.\n',
    );
    expect(count(result.stdout, '401')).toBe(1);
    // One request per org: a refused token is final.
    expect(await api.getRequests()).toHaveLength(ORGS.length);
  });

  it('403 on every org: said once; 403 on some orgs only: each says its own', async () => {
    const api = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: ['other'] }] });
    cleanups.push(() => api.close());
    const all = await run(pass('plan', api.url));
    expect(all.code).toBe(1);
    expect(all.stdout).toContain(
      `error: all 3 orgs failed the same way: the token was refused (403)\n  ${TOKEN_HINT} It is allowed none of these orgs.\n`,
    );
    expect(count(all.stdout, '403')).toBe(1);

    const some = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: ['acme'] }] });
    cleanups.push(() => some.close());
    const partly = await run(pass('plan', some.url));
    expect(partly.code).toBe(1);
    expect(partly.stdout).not.toContain(TOKEN_HINT);
    expect(count(partly.stdout, 'the token was refused (403)')).toBe(2);
  });
});

/** Answers nothing, ever: every request hangs until the server closes. */
async function silentApi() {
  const held: ServerResponse[] = [];
  const api = await startFakeApi((_req, res) => held.push(res));
  cleanups.push(() => api.close());
  return api;
}

function orgFlags(): string[] {
  return ORGS.flatMap((org) => ['--org', org]);
}

describe(
  '--timeout cuts a server that never answers, in every command',
  { timeout: 120_000 },
  () => {
    const LIMITS = ['--timeout', '150ms', '--retries', '1', '--retry-delay', '10ms'];

    it('plan and sync: each attempt ends at --timeout; the org is tried again in its rounds, then fails', async () => {
      for (const command of ['plan', 'sync'] as const) {
        const api = await silentApi();
        const result = await run([...pass(command, api.url, LIMITS), '-o', 'json']);
        expect(result.code).toBe(1);
        const report = JSON.parse(result.stdout) as RunReport;
        for (const org of report.orgs) {
          expect(org.error).toBe(
            `cannot list the org: GET /api/v2/environments/${org.org}: no answer within 150 ms (--timeout)`,
          );
        }
        // Two attempts (one retry) in each of the three rounds, per org.
        expect(api.requests).toHaveLength(ORGS.length * 2 * 3);
        expect(report.failure).toBeUndefined();
      }
    });

    it('export: each attempt ends at --timeout, one retry, no rounds', async () => {
      const api = await silentApi();
      const result = await run(['export', '--api-url', api.url, ...LIMITS, ...orgFlags()]);
      expect(result.code).toBe(1);
      for (const org of ORGS) {
        expect(result.stderr).toContain(
          `envsync export: org ${org}: GET /api/v2/environments/${org}: no answer within 150 ms (--timeout)\n`,
        );
      }
      expect(api.requests).toHaveLength(ORGS.length * 2);
    });

    it('run: each pass ends, its orgs failed at --timeout; the daemon goes on', async () => {
      const api = await silentApi();
      const d = await startTestDaemon({
        apiUrl: api.url,
        cwd: tmp.dir,
        token: TOKEN,
        flags: { manifests: 'manifests', state: 'state.json', timeout: '150ms', retries: '1' },
      });
      cleanups.push(() => d.stop());
      await waitFor('the first pass', () => d.passes() >= 1, { timeoutMs: 60_000 });
      for (const org of ORGS) {
        expect(d.daemon.status().orgs[org]?.lastError?.message).toBe(
          `cannot list the org: GET /api/v2/environments/${org}: no answer within 150 ms (--timeout)`,
        );
      }
      expect(api.requests).toHaveLength(ORGS.length * 2 * 3);
    });
  },
);

describe('--deadline ends a run against a server that never answers', { timeout: 120_000 }, () => {
  // The first attempt of each org starts within the deadline and is cut at --timeout, after it:
  // no retry, no other round.
  const LIMITS = ['--deadline', '1s', '--timeout', '2s', '--retry-delay', '10ms'];
  const NOT_SENT =
    /GET \/api\/v2\/environments\/\w+: not sent again: the run's deadline \(--deadline 1s\) (passed|would pass)[^;]*; the last attempt: GET \S+: no answer within 2000 ms \(--timeout\)/;

  it('plan and sync', async () => {
    for (const command of ['plan', 'sync'] as const) {
      const api = await silentApi();
      const result = await run([...pass(command, api.url, LIMITS), '-o', 'json']);
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as RunReport;
      for (const org of report.orgs) expect(org.error).toMatch(NOT_SENT);
      expect(api.requests).toHaveLength(ORGS.length);
    }
  });

  it('export', async () => {
    const api = await silentApi();
    const result = await run(['export', '--api-url', api.url, ...LIMITS, ...orgFlags()]);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n').filter((line) => NOT_SENT.test(line))).toHaveLength(3);
    expect(api.requests).toHaveLength(ORGS.length);
  });

  it('run: each pass', async () => {
    const api = await silentApi();
    const d = await startTestDaemon({
      apiUrl: api.url,
      cwd: tmp.dir,
      token: TOKEN,
      flags: { manifests: 'manifests', state: 'state.json', deadline: '1s', timeout: '2s' },
    });
    cleanups.push(() => d.stop());
    await waitFor('the first pass', () => d.passes() >= 1, { timeoutMs: 60_000 });
    for (const org of ORGS)
      expect(d.daemon.status().orgs[org]?.lastError?.message).toMatch(NOT_SENT);
    expect(api.requests).toHaveLength(ORGS.length);
  });
});
