/**
 * Fast, clear failures as a user meets them (a closed port, a host name under `.invalid`, a refused
 * token, a server that never answers), for plan, sync, export and run: the cause said once with
 * what to check. Attempts are counted (by the server, or by recording the run's connects and
 * lookups), never timed.
 */
import { lookup } from 'node:dns/promises';
import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/core/report.ts';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { startTestEmulator } from '../helpers/emulator.ts';
import { closedPort, startFakeApi } from '../helpers/fake-api.ts';
import { watchNetwork } from '../helpers/network-watch.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

// Random-looking: a token made of words would mask those words in the messages under test.
const TOKEN = 'fF9q4Tq9Lm2Zx7Vb';
/** A name that never resolves (RFC 6761, section 6.4). */
const NOWHERE = 'api.envsync-test.invalid';
const ORGS = ['acme', 'beta', 'gamma'];
const REFUSED_HINT =
  'Is --api-url right? Nothing accepts connections at that address: a wrong host or port, or the service is down.';
const DNS_HINT =
  'Is --api-url right? Check the host name, and that DNS resolves it where envsync runs.';

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

const manifest = (org: string) =>
  `org: ${org}\nenvironments: [{name: web, type: S3, description: web}]\n`;

/** A daemon in this process against `apiUrl`, stopped after the test. */
async function daemon(apiUrl: string, flags = {}) {
  const base = { manifests: 'manifests', state: 'state.json' };
  const d = await startTestDaemon({
    apiUrl,
    cwd: tmp.dir,
    token: TOKEN,
    flags: { ...base, ...flags },
  });
  cleanups.push(() => d.stop());
  return d;
}

/** A loopback address nothing listens on. */
const closedPortUrl = async () => `http://127.0.0.1:${await closedPort()}`;

const count = (text: string, part: string) => text.split(part).length - 1;
const refusedBy = (host: string) => ({ kind: 'refused', code: 'ECONNREFUSED', host });

/** A one-shot command in this process, in the test's folder, with the token. */
const run = (args: string[]) =>
  envsyncInProcess(args, { cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN } });

/** `command` against `apiUrl` (its org flags for export), with `extra` flags. */
const args = (command: 'plan' | 'sync' | 'export', apiUrl: string, extra: string[] = []) =>
  command === 'export'
    ? ['export', '--api-url', apiUrl, ...ORGS.flatMap((org) => ['--org', org]), ...extra]
    : [command, '--manifests', 'manifests', '--state', 'state.json', '--api-url', apiUrl, ...extra];

const QUICK = ['--retry-delay', '10ms'];

/** Answers nothing, ever: every request hangs until the server closes. */
async function silentApi() {
  const held: ServerResponse[] = [];
  const api = await startFakeApi((_req, res) => held.push(res));
  cleanups.push(() => api.close());
  return api;
}

describe('a wrong port: the connection is refused', { timeout: 120_000 }, () => {
  it('plan and sync say it once, with the hint, and exit 1; no org is tried in another round', async () => {
    const url = await closedPortUrl();
    const host = new URL(url).host;
    for (const command of ['plan', 'sync'] as const) {
      const text = await run(args(command, url, QUICK));
      expect(text.code).toBe(1);
      expect(text.stdout).toContain(
        `error: all 3 orgs failed the same way: the API at ${host} refused the connection (ECONNREFUSED)\n  ${REFUSED_HINT}\n  orgs: acme, beta, gamma\n`,
      );
      expect(count(text.stdout, 'ECONNREFUSED')).toBe(1);
      expect(text.stdout).not.toMatch(/^org /m);
      // Nothing per org on stderr either (the default level is warn): no retry, no round.
      expect(text.stderr).toBe('');
    }
    const markdown = await run(args('plan', url, [...QUICK, '-o', 'markdown']));
    expect(count(markdown.stdout, 'ECONNREFUSED')).toBe(1);
    expect(markdown.stdout).toContain('Is --api-url right?');

    // JSON keeps each org's own error and cause, beside the cause said once.
    const json = await run(args('plan', url, [...QUICK, '-o', 'json']));
    const report = JSON.parse(json.stdout) as RunReport;
    const cause = refusedBy(host);
    expect(report.failure).toMatchObject({ ...cause, orgs: ORGS, hint: REFUSED_HINT });
    for (const org of report.orgs) {
      expect(org.cause).toEqual(cause);
      expect(org.error).toMatch(
        new RegExp(
          `^cannot list the org: GET /api/v2/environments/${org.org}: (not sent( again)?: an earlier request found the API unreachable: )?connection refused by ${host} \\(ECONNREFUSED\\)$`,
        ),
      );
    }

    // At debug, each org on its way.
    const debug = await run(args('plan', url, [...QUICK, '--log-level', 'debug']));
    expect(debug.stderr).toContain('the API cannot be reached: connection refused by');
    expect(debug.stderr).toMatch(/retrying: GET \/api\/v2\/environments\/\w+: connection refused/);
  });

  it('export says it once on stderr, with the hint, and exits 1', async () => {
    const url = await closedPortUrl();
    const result = await run(args('export', url, QUICK));
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(
      `envsync export: all 3 orgs failed the same way: the API at ${new URL(url).host} refused the connection (ECONNREFUSED). ${REFUSED_HINT} (orgs: acme, beta, gamma)\n`,
    );
  });

  it('sync --plan with the API gone says so once, not that the service moved', async () => {
    const api = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: null }] });
    const planned = await run(args('plan', api.url, ['--out', 'plan.json']));
    expect(planned.code, planned.stderr).toBe(0);
    await api.close();
    const applied = await run(args('sync', api.url, [...QUICK, '--plan', 'plan.json']));
    expect(applied.code).toBe(1);
    expect(applied.stderr).toContain(
      `cannot check plan.json against the service: all 3 orgs failed the same way: the API at ${new URL(api.url).host} refused the connection (ECONNREFUSED). ${REFUSED_HINT}\nNothing was sent.`,
    );
    expect(applied.stderr).not.toContain('moved');
  });

  it('the daemon says it once per pass, in the pass line and /status; each org keeps its error', async () => {
    const url = await closedPortUrl();
    const host = new URL(url).host;
    const d = await daemon(url);
    await waitFor('the first pass', () => d.passes() >= 1);
    const status = (await (await request(`${d.url}/status`)).body.json()) as {
      lastPass: { result: string; failure?: Record<string, unknown> };
      orgs: Record<string, { lastError: { message: string } | null }>;
    };
    expect(status.lastPass.result).toBe('failed');
    const message = `all 3 orgs failed the same way: the API at ${host} refused the connection (ECONNREFUSED)`;
    const failure = { ...refusedBy(host), orgs: 3, message, hint: REFUSED_HINT };
    expect(status.lastPass.failure).toEqual(failure);
    for (const org of ORGS) expect(status.orgs[org]?.lastError?.message).toContain('ECONNREFUSED');
    const passLine = d.logs().find((l) => String(l['msg']).startsWith('pass '));
    expect(String(passLine?.['msg'])).toContain(
      `refused the connection (ECONNREFUSED). ${REFUSED_HINT}`,
    );
    expect(d.logs().filter((l) => String(l['msg']).includes('trying the org again'))).toEqual([]);
    // Each org's own line is there at debug; only the pass line says it above that.
    const refused = d.logs().filter((l) => String(l['msg']).includes('ECONNREFUSED'));
    expect(refused.filter((l) => Number(l['level']) > 20).map((l) => l['msg'])).toEqual([
      passLine?.['msg'],
    ]);
    for (const org of ORGS)
      expect(refused.some((l) => String(l['msg']).startsWith(`org ${org} failed: `))).toBe(true);
    expect(await (await request(`${d.url}/`)).body.text()).toContain('Every org failed');
  });
});

describe('a host name that does not resolve', { timeout: 120_000 }, () => {
  it('plan says it once, with the hint, and exits 1', async () => {
    // The precondition: a resolver that cannot be asked at all says EAI_AGAIN, a DNS failure too.
    const failed = (error: NodeJS.ErrnoException) => error.code;
    const code = await lookup(NOWHERE).then(() => 'resolved', failed);
    expect(['ENOTFOUND', 'EAI_AGAIN']).toContain(code);
    const result = await run(args('plan', `https://${NOWHERE}`, QUICK));
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^error: all 3 orgs failed the same way: the API's host name api\.envsync-test\.invalid (does not resolve \(ENOTFOUND\)|could not be resolved \(EAI_AGAIN\))\n {2}Is --api-url right\? Check the host name/,
    );
    expect([count(result.stdout, NOWHERE), result.stderr]).toEqual([1, '']);
  });

  it('export says it once on stderr, with the hint, and exits 1', async () => {
    const result = await run(args('export', `https://${NOWHERE}`, QUICK));
    expect([result.code, result.stdout, count(result.stderr, NOWHERE)]).toEqual([1, '', 1]);
    expect(result.stderr).toContain(DNS_HINT);
  });
});

describe(
  'attempts: one probe and its quick retry; the other orgs wait for it, and send nothing',
  { timeout: 120_000 },
  () => {
    /** A plan of 23 orgs against `apiUrl`, its connects and lookups recorded. */
    async function planAgainst(apiUrl: string, concurrency: number) {
      const orgs = [
        ...ORGS,
        ...Array.from({ length: 20 }, (_, i) => `org${String(i).padStart(2, '0')}`),
      ];
      for (const org of orgs.slice(3)) await tmp.write(`manifests/${org}.yaml`, manifest(org));
      const plan = args('plan', apiUrl, [
        '--concurrency',
        String(concurrency),
        '-o',
        'json',
        ...QUICK,
      ]);
      const { result, calls } = await watchNetwork(() => run(plan));
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
      const { calls, notSent } = await planAgainst(await closedPortUrl(), 8);
      const connects = calls.filter((c) => c.startsWith('connect '));
      expect(connects.length).toBeGreaterThanOrEqual(2);
      expect(connects.length).toBeLessThanOrEqual(8 + 1);
      expect(notSent.length).toBeGreaterThanOrEqual(23 - 8);
    });

    it('a host name that does not resolve: two lookups in all, the probe and its retry', async () => {
      const { calls, notSent } = await planAgainst(`https://${NOWHERE}`, 1);
      expect(calls.filter((c) => c.startsWith('lookup '))).toEqual(
        Array(2).fill(`lookup ${NOWHERE}`),
      );
      expect(notSent).toHaveLength(22);
    });
  },
);

describe('the token refused on every org', { timeout: 120_000 }, () => {
  it('401 (a token the API does not know): said once, with the hint; one request per org', async () => {
    const api = await startTestEmulator({ tokens: [{ token: 'aQ7w9x8y7zK2mP', orgs: null }] });
    cleanups.push(() => api.close());
    const result = await run(args('plan', api.url));
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'error: all 3 orgs failed the same way: the token was refused (401)\n  Is the token for this API? Check ENVSYNC_TOKEN, --token-file or --token-dir, and --api-url.\n',
    );
    expect(count(result.stdout, '401')).toBe(1);
    expect(await api.getRequests()).toHaveLength(ORGS.length);
  });

  it('403 on every org: said once; 403 on some orgs only: each says its own', async () => {
    const all = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: ['other'] }] });
    const some = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: ['acme'] }] });
    cleanups.push(
      () => all.close(),
      () => some.close(),
    );
    const refused = await run(args('plan', all.url));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      'error: all 3 orgs failed the same way: the token was refused (403)\n  Is the token for this API? It is allowed none of these orgs.\n',
    );
    expect(count(refused.stdout, '403')).toBe(1);
    const partly = await run(args('plan', some.url));
    expect(partly.code).toBe(1);
    expect(partly.stdout).not.toContain('Is the token for this API?');
    expect(count(partly.stdout, 'the token was refused (403)')).toBe(2);
  });
});

describe('a server that never answers', { timeout: 120_000 }, () => {
  /** Each org's error of `command` against a server that never answers, and its requests. */
  async function silently(command: 'plan' | 'sync' | 'export', limits: string[]) {
    const api = await silentApi();
    const result = await run(
      args(command, api.url, command === 'export' ? limits : [...limits, '-o', 'json']),
    );
    expect(result.code).toBe(1);
    const errors =
      command === 'export'
        ? result.stderr.split('\n').filter((line) => line.startsWith('envsync export: '))
        : (JSON.parse(result.stdout) as RunReport).orgs.map((o) => o.error ?? '');
    return { errors, requests: api.requests.length };
  }

  it('--timeout cuts each attempt: plan and sync try the org in their rounds, export once', async () => {
    const limits = ['--timeout', '150ms', '--retries', '1', ...QUICK];
    const said = (org: string) =>
      `GET /api/v2/environments/${org}: no answer within 150 ms (--timeout)`;
    for (const command of ['plan', 'sync'] as const) {
      const { errors, requests } = await silently(command, limits);
      expect(errors).toEqual(ORGS.map((org) => `cannot list the org: ${said(org)}`));
      // Two attempts (one retry) in each of three rounds.
      expect(requests).toBe(ORGS.length * 2 * 3);
    }
    const { errors, requests } = await silently('export', limits);
    expect(errors).toEqual(ORGS.map((org) => `envsync export: org ${org}: ${said(org)}`));
    expect(requests).toBe(ORGS.length * 2);
  });

  it('--deadline ends the run: the first attempt of each org only, cut at --timeout', async () => {
    const limits = ['--deadline', '1s', '--timeout', '2s', ...QUICK];
    const notSent =
      /GET \/api\/v2\/environments\/\w+: not sent again: the run's deadline \(--deadline 1s\) (passed|would pass)[^;]*; the last attempt: GET \S+: no answer within 2000 ms \(--timeout\)/;
    for (const command of ['plan', 'sync', 'export'] as const) {
      const { errors, requests } = await silently(command, limits);
      expect(errors.filter((line) => notSent.test(line))).toHaveLength(3);
      expect(requests).toBe(ORGS.length);
    }
  });

  it.each([
    [
      '--timeout',
      { timeout: '150ms', retries: '1' },
      /: no answer within 150 ms \(--timeout\)$/,
      6,
    ],
    [
      '--deadline',
      { deadline: '1s', timeout: '2s' },
      /not sent again: the run's deadline \(--deadline 1s\)/,
      1,
    ],
  ])(
    'the daemon: %s ends each pass, its orgs failed; the daemon goes on',
    async (_t, flags, message, attempts) => {
      const api = await silentApi();
      const d = await daemon(api.url, flags);
      await waitFor('the first pass', () => d.passes() >= 1, { timeoutMs: 60_000 });
      for (const org of ORGS)
        expect(d.daemon.status().orgs[org]?.lastError?.message).toMatch(message);
      expect(api.requests).toHaveLength(ORGS.length * attempts);
    },
  );
});
