/**
 * Every wait is bounded, as a user sees it: the CLI against a fake API that throttles or fails.
 * Nothing measures a duration: exit codes, reports, the requests counted, and an exit before a
 * generous guard.
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
const DAEMON = ['run', '--manifests', 'manifests', '--state', 'state/state.json'];

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: Awaited<ReturnType<typeof startFakeApi>> | undefined;
const runs: LiveCli[] = [];

beforeEach(async () => {
  tmp = await tempDir();
  const manifest = (org: string, names: string[]) =>
    `org: ${org}\nenvironments:\n${names.map((n) => `  - {name: ${n}, type: S3, description: ${n}}\n`).join('')}`;
  await tmp.write('manifests/acme.yaml', manifest('acme', ['a', 'b']));
  await tmp.write('manifests/globex.yaml', manifest('globex', ['c']));
});
afterEach(async () => {
  for (const run of runs.splice(0)) await run.kill();
  await api?.close();
  api = undefined;
  await tmp.cleanup();
});

const env = () => ({ ENVSYNC_TOKEN: TOKEN, ENVSYNC_API_URL: api?.url ?? '' });

/** A one-shot command in this process, in the test's folder. */
const run = (args: string[]) =>
  envsyncInProcess(args, { cwd: tmp.dir, env: env(), timeoutMs: 60_000 });

/** The CLI in a child process, in the test's folder (`run --listen` on a free port). */
function start(args: string[]) {
  const listen = args[0] === 'run' ? ['--listen', '127.0.0.1:0'] : [];
  const live = startEnvsync([...args, ...listen], { cwd: tmp.dir, env: env() });
  runs.push(live);
  return live;
}

function slowDown(res: ServerResponse, seconds: string) {
  res.writeHead(429, { 'content-type': 'application/json', 'retry-after': seconds });
  res.end('{"message":"slow down"}');
}

/** Answers everything with a 429 asking for two minutes. */
const throttleEverything = () => startFakeApi((_req, res) => slowDown(res, '120'));

describe('--deadline bounds a whole one-shot run, throttled waits included', () => {
  it('plan against 429 Retry-After: 120 stops at the deadline, every org not sent, exit 1', async () => {
    api = await throttleEverything();
    const result = await run('plan --manifests manifests --deadline 30s -o json'.split(' '));
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as RunReport;
    expect(report.orgs.map((o) => [o.org, o.status])).toEqual([
      ['acme', 'failed'],
      ['globex', 'failed'],
    ]);
    const notSent =
      /cannot list the org: GET \S+: not sent again: the run's deadline \(--deadline 30s\)/;
    for (const org of report.orgs) expect(org.error).toMatch(notSent);
    // One GET per org, then nothing: the 120 s pause would pass the deadline, so it never began.
    expect(api.requests.map((r) => r.method)).toEqual(['GET', 'GET']);
  });

  it('sync: a change whose retry would outlast the deadline fails, not sent again; exit 1', async () => {
    api = await startFakeApi((req, res) => {
      if (req.method === 'GET') res.writeHead(200).end('{"env":[]}');
      else res.writeHead(503, { 'retry-after': '120' }).end('{"message":"maintenance"}');
    });
    const args = ['sync', '--manifests', 'manifests', '--org', 'acme', '--deadline', '30s'];
    const json = await run([...args, '-o', 'json']);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as RunReport;
    const acme = report.orgs.find((o) => o.org === 'acme');
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
    const text = await run(args);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/deadline \(--deadline 30s\)/);
  });

  it('time spent throttled is in the report (summary and org)', async () => {
    let throttled = 0;
    api = await startFakeApi((_req, res) =>
      throttled++ === 0 ? slowDown(res, '1') : res.writeHead(200).end('{"env":[]}'),
    );
    const json = await run(['plan', '--manifests', 'manifests', '--org', 'acme', '-o', 'json']);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as RunReport;
    expect(report.summary.throttledMs).toBeGreaterThan(0);
    expect(report.orgs[0]?.throttledMs).toBeGreaterThan(0);
  });

  it('nonsense limits are refused, naming the flag, before any request', async () => {
    api = await throttleEverything();
    for (const limit of [
      '--deadline 0',
      '--deadline soon',
      '--max-retry-after 0',
      '--max-response-bytes 12GiB',
    ]) {
      const result = await run(['plan', '--manifests', 'manifests', ...limit.split(' ')]);
      expect(result.code, limit).toBe(1);
      expect(result.stderr).toContain(limit.split(' ')[0]);
    }
    expect(api.requests).toHaveLength(0);
  });

  it('--max-response-bytes: an oversized listing fails its org, downloaded once; others go on', async () => {
    const entry = (i: number) => ({ name: `env-${i}`, type: 'S3', description: 'x'.repeat(40) });
    const big = JSON.stringify({ env: Array.from({ length: 300 }, (_, i) => entry(i)) });
    api = await startFakeApi((req, res) =>
      res.writeHead(200).end(req.url?.includes('/acme') === true ? big : '{"env":[]}'),
    );
    const result = await run(
      'plan --manifests manifests --max-response-bytes 4KiB -o json'.split(' '),
    );
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as RunReport;
    const acme = report.orgs.find((o) => o.org === 'acme');
    expect(acme?.error).toMatch(/larger than 4096 bytes.*--max-response-bytes/);
    expect(report.orgs.find((o) => o.org === 'globex')?.status).toBe('ok');
    // No retry, no second round.
    expect(api.requests.filter((r) => r.url.includes('/acme'))).toHaveLength(1);
  });
});

describe('the daemon and SIGTERM', { timeout: 120_000 }, () => {
  it('--deadline ends each pass: its orgs failed as not sent; the daemon goes on', async () => {
    api = await throttleEverything();
    const live = start([...DAEMON, '--interval', '0', '--deadline', '30s']);
    const passed = () => live.logs().some((l) => String(l['msg']).startsWith('pass '));
    await waitFor('the first pass to end', passed, { timeoutMs: 30_000 });
    for (const org of ['acme', 'globex'])
      expect(live.stderr()).toContain(
        `GET /api/v2/environments/${org}: not sent again: the run's deadline (--deadline 30s)`,
      );
    expect(api.requests).toHaveLength(2);
    expect(live.child.exitCode).toBeNull();
    live.child.kill('SIGTERM');
    expect(await live.exitedWithin(GUARD_MS)).toEqual({ code: 0, signal: null });
  });

  it('ends a 120 s Retry-After wait of sync at once', async () => {
    api = await throttleEverything();
    const live = start(['sync', '--manifests', 'manifests']);
    await waitFor('a throttled request', () => (api?.requests.length ?? 0) > 0, {
      timeoutMs: 30_000,
    });
    live.child.kill('SIGTERM');
    expect(await live.exitedWithin(GUARD_MS)).not.toBe('still running');
  });

  it('stops the daemon gracefully during a 120 s wait, exit 0; its metrics count throttled time', async () => {
    // Each org's first request is asked to wait a second: throttled time the metrics can count
    // once that stretch ends (nothing waits any more), so the later requests are held until then.
    // Then they, and any after them, are asked for two minutes.
    const asked = new Set<string>();
    const held: ServerResponse[] = [];
    let holding = true;
    let longAnswers = 0;
    const long = (res: ServerResponse) => {
      longAnswers++;
      slowDown(res, '120');
    };
    api = await startFakeApi((req, res) => {
      if (!asked.has(req.url ?? '')) {
        asked.add(req.url ?? '');
        slowDown(res, '1');
      } else if (holding) held.push(res);
      else long(res);
    });
    const live = start([...DAEMON, '--interval', '0']);
    const url = await live.listenUrl();
    const throttled = async () => {
      const metrics = await (await request(`${url}/metrics`)).body.text();
      return Number(/^envsync_throttled_seconds_total (\S+)$/m.exec(metrics)?.[1] ?? 0) > 0;
    };
    await waitFor('throttled time in the metrics', throttled, { timeoutMs: 30_000 });
    holding = false;
    for (const res of held.splice(0)) long(res);
    await waitFor('a two-minute Retry-After', () => longAnswers > 0, { timeoutMs: 30_000 });
    live.child.kill('SIGTERM');
    expect(await live.exitedWithin(GUARD_MS)).toEqual({ code: 0, signal: null });
    expect(live.logs().map((l) => l['msg'])).toContain('stopped');
    // No request ignored the two-minute pause: two first attempts, at most one retry per org.
    expect(api.requests.length).toBeLessThanOrEqual(4);
    expect(live.stderr()).toMatch(/(not sent again|cancelled): envsync is shutting down/);
  });
});
