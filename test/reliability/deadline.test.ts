/**
 * Every wait is bounded, as a user sees it: the CLI against a fake API on loopback that throttles
 * or fails (its `main` in this process for the one-shot reports; child processes where a signal
 * ends the wait, and for the daemon). Nothing here measures a duration: exit codes, reports, the
 * requests the server counted, and that a process exits before a generous guard.
 */
import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/core/report.ts';
import { envsyncInProcess, type LiveCli, startEnvsync } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'dl-7Hq2Xv9Lw4Zp-5f4e';
/** How long a stopped process may take to exit: generous, for a slow shared machine. */
const GUARD_MS = 10_000;

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: Awaited<ReturnType<typeof startFakeApi>> | undefined;
const runs: LiveCli[] = [];

beforeEach(async () => {
  tmp = await tempDir();
  await tmp.write('manifests/acme.yaml', manifest('acme', ['a', 'b']));
  await tmp.write('manifests/globex.yaml', manifest('globex', ['c']));
});
afterEach(async () => {
  for (const run of runs.splice(0)) await run.kill();
  await api?.close();
  api = undefined;
  await tmp.cleanup();
});

function manifest(org: string, names: string[]): string {
  return `org: ${org}\nenvironments:\n${names.map((n) => `  - name: ${n}\n    type: S3\n    description: ${n}\n`).join('')}`;
}

const env = () => ({ ENVSYNC_TOKEN: TOKEN, ENVSYNC_API_URL: api?.url ?? '' });

/** An empty listing for every GET; `put` answers the PUTs. */
function emptyListingAnd(put: (res: ServerResponse) => void) {
  return startFakeApi((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"env":[]}');
    } else put(res);
  });
}

/** Answers everything with a 429 asking for two minutes. */
function throttleEverything() {
  return startFakeApi((_req, res) => {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '120' });
    res.end('{"message":"slow down"}');
  });
}

/** Starts the CLI in the test's folder, with its token and the fake API's address. */
function start(args: string[]) {
  const run = startEnvsync(args, { cwd: tmp.dir, env: env() });
  runs.push(run);
  return run;
}

/** `promise`'s value, or 'guard' if it has not settled within GUARD_MS. */
async function beforeGuard<T>(promise: Promise<T>): Promise<T | 'guard'> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<'guard'>((resolve) => (timer = setTimeout(resolve, GUARD_MS, 'guard')));
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

describe(
  '--deadline bounds a whole one-shot run, throttled waits included',
  { timeout: 120_000 },
  () => {
    it('plan against a service answering 429 Retry-After: 120 stops at the deadline, reports every org as not sent, and exits 1', async () => {
      api = await throttleEverything();
      const result = await envsyncInProcess(
        ['plan', '--manifests', 'manifests', '--deadline', '30s', '--output', 'json'],
        { cwd: tmp.dir, env: env(), timeoutMs: 60_000 },
      );
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as RunReport;
      expect(report.orgs.map((o) => [o.org, o.status])).toEqual([
        ['acme', 'failed'],
        ['globex', 'failed'],
      ]);
      for (const org of report.orgs) {
        expect(org.error).toMatch(
          /cannot list the org: GET \S+: not sent again: the run's deadline \(--deadline 30s\)/,
        );
      }
      // One GET per org, then nothing: the 120 s pause would pass the deadline, so it never began.
      expect(api.requests.filter((r) => r.method === 'GET')).toHaveLength(2);
      expect(api.requests).toHaveLength(2);
    });

    it('sync: a change whose retry would outlast the deadline is reported failed, not sent again; the text output says so; exit 1', async () => {
      api = await emptyListingAnd((res) => {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '120' });
        res.end('{"message":"maintenance"}');
      });
      const json = await envsyncInProcess(
        ['sync', '--manifests', 'manifests', '--org', 'acme', '--deadline', '30s', '-o', 'json'],
        { cwd: tmp.dir, env: env(), timeoutMs: 60_000 },
      );
      expect(json.code).toBe(1);
      const report = JSON.parse(json.stdout) as RunReport;
      const acme = report.orgs.find((o) => o.org === 'acme');
      expect(acme?.status).toBe('failed');
      expect(acme?.changes.map((c) => [c.name, c.result])).toEqual([
        ['a', 'failed'],
        ['b', 'failed'],
      ]);
      for (const change of acme?.changes ?? []) {
        expect(change.error).toMatch(
          /not sent again: the run's deadline \(--deadline 30s\) would pass/,
        );
        expect(change.error).toContain('503');
      }
      // One PUT per change: no retry and no second round.
      expect(api.requests.filter((r) => r.method === 'PUT')).toHaveLength(2);
      expect(report.summary.throttledMs).toBe(0);

      const text = await envsyncInProcess(
        ['sync', '--manifests', 'manifests', '--org', 'acme', '--deadline', '30s'],
        { cwd: tmp.dir, env: env(), timeoutMs: 60_000 },
      );
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(/deadline \(--deadline 30s\)/);
    });

    it('time spent throttled is in the report (summary and org)', async () => {
      let throttled = 0;
      api = await startFakeApi((req, res) => {
        if (req.method === 'GET' && throttled++ === 0) {
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
          res.end('{"message":"slow down"}');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"env":[]}');
      });
      const json = await envsyncInProcess(
        ['plan', '--manifests', 'manifests', '--org', 'acme', '-o', 'json'],
        { cwd: tmp.dir, env: env(), timeoutMs: 60_000 },
      );
      expect(json.code).toBe(0);
      const report = JSON.parse(json.stdout) as RunReport;
      expect(report.summary.throttledMs).toBeGreaterThan(0);
      expect(report.orgs[0]?.throttledMs).toBeGreaterThan(0);
      // The text output's line for it is the renderer's (test/core/render.test.ts).
    });

    it('nonsense limits are refused, naming the flag', async () => {
      api = await throttleEverything();
      for (const [flag, value] of [
        ['--deadline', '0'],
        ['--deadline', 'soon'],
        ['--max-retry-after', '0'],
        ['--max-response-bytes', '12GiB'],
      ] as const) {
        const result = await envsyncInProcess(['plan', '--manifests', 'manifests', flag, value], {
          cwd: tmp.dir,
          env: env(),
        });
        expect(result.code, `${flag} ${value}`).toBe(1);
        expect(result.stderr).toContain(flag);
      }
      expect(api.requests).toHaveLength(0);
    });
  },
);

describe(
  '--max-response-bytes: an oversized listing fails its org, final, downloaded once',
  { timeout: 120_000 },
  () => {
    it('plan reports the org failed naming the flag, other orgs go on, and the listing is fetched once (no retry, no second round)', async () => {
      const big = JSON.stringify({
        env: Array.from({ length: 300 }, (_, i) => ({
          org: 'acme',
          name: `env-${i}`,
          type: 'S3',
          description: 'x'.repeat(40),
        })),
      });
      api = await startFakeApi((req, res) => {
        const acme = req.url?.includes('/acme') === true;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(acme ? big : '{"env":[]}');
      });
      const result = await envsyncInProcess(
        ['plan', '--manifests', 'manifests', '--max-response-bytes', '4KiB', '-o', 'json'],
        { cwd: tmp.dir, env: env(), timeoutMs: 60_000 },
      );
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as RunReport;
      const acme = report.orgs.find((o) => o.org === 'acme');
      expect(acme?.status).toBe('failed');
      expect(acme?.error).toMatch(/larger than 4096 bytes.*--max-response-bytes/);
      expect(report.orgs.find((o) => o.org === 'globex')?.status).toBe('ok');
      expect(api.requests.filter((r) => r.url.includes('/acme'))).toHaveLength(1);
    });
  },
);

describe('--deadline bounds each pass of the daemon', { timeout: 120_000 }, () => {
  it('a pass against a service asking for 120 s ends at its deadline, its orgs failed as not sent; the daemon goes on', async () => {
    api = await throttleEverything();
    const run = start([
      'run',
      '--manifests',
      'manifests',
      '--state',
      'state/state.json',
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '0',
      '--deadline',
      '30s',
    ]);
    const logs = () => run.logs();
    const pass = await waitFor(
      'the first pass to end',
      () => logs().find((l) => String(l['msg']).startsWith('pass ')),
      { timeoutMs: 30_000 },
    );
    expect(pass).toBeDefined();
    // Each org's failure names the deadline (in the logs, whatever their wording around it).
    for (const org of ['acme', 'globex']) {
      expect(run.stderr()).toMatch(
        new RegExp(
          `GET /api/v2/environments/${org}: not sent again: the run's deadline \\(--deadline 30s\\)`,
        ),
      );
    }
    expect(api.requests).toHaveLength(2);
    expect(run.child.exitCode).toBeNull();
    run.child.kill('SIGTERM');
    expect(await beforeGuard(run.exited)).toEqual({ code: 0, signal: null });
  });
});

describe('SIGTERM ends a 120 s Retry-After wait at once', { timeout: 120_000 }, () => {
  it('sync exits before the guard', async () => {
    api = await throttleEverything();
    const run = start(['sync', '--manifests', 'manifests']);
    await waitFor('a throttled request', () => api !== undefined && api.requests.length > 0, {
      timeoutMs: 30_000,
    });
    run.child.kill('SIGTERM');
    const exit = await beforeGuard(run.exited);
    expect(exit).not.toBe('guard');
  });

  it('the daemon (run) stops gracefully, exit 0, before the guard, and its metrics count throttled time', async () => {
    // Each org's first request is asked to wait a second: a short throttled wait the metrics can
    // count. The metrics count a stretch of throttled time once nothing waits any more, so the
    // later requests are held unanswered until they have (were one asked for two minutes while
    // another org still waited its second, that stretch would not end before the guard); then
    // they, and any after them, are asked for two minutes.
    const asked = new Set<string>();
    const held: ServerResponse[] = [];
    let holding = true;
    let longAnswers = 0;
    const slowDown = (res: ServerResponse, seconds: string) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': seconds });
      res.end('{"message":"slow down"}');
    };
    api = await startFakeApi((req, res) => {
      const org = req.url ?? '';
      if (!asked.has(org)) {
        asked.add(org);
        slowDown(res, '1');
      } else if (holding) held.push(res);
      else {
        longAnswers++;
        slowDown(res, '120');
      }
    });
    const run = start([
      'run',
      '--manifests',
      'manifests',
      '--state',
      'state/state.json',
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '0',
    ]);
    const logs = () => run.logs();
    const url = await run.listenUrl();
    // Both orgs' listings were answered 429 (one second) and that pause has ended.
    await waitFor(
      'throttled time in the metrics',
      async () => {
        const metrics = await (await request(`${url}/metrics`)).body.text();
        const value = /^envsync_throttled_seconds_total (\S+)$/m.exec(metrics)?.[1];
        return value !== undefined && Number(value) > 0;
      },
      { timeoutMs: 30_000 },
    );
    // A retry is answered 429 (two minutes): no request is due before that pause ends.
    holding = false;
    for (const res of held.splice(0)) {
      longAnswers++;
      slowDown(res, '120');
    }
    await waitFor('a two-minute Retry-After', () => longAnswers > 0, { timeoutMs: 30_000 });
    run.child.kill('SIGTERM');
    const exit = await beforeGuard(run.exited);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(logs().map((l) => l['msg'])).toContain('stopped');
    // No request ignored the two-minute pause: two first attempts, at most one retry per org.
    expect(api.requests.length).toBeLessThanOrEqual(4);
    expect(run.stderr()).toMatch(/(not sent again|cancelled): envsync is shutting down/);
  });
});
