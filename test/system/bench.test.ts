/**
 * The benchmark keeps working: a tiny run (3 orgs x 5 environments, short watch and idle windows,
 * 20 changes against a rate limit of 10 requests per second, a token directory of 1,000 keys
 * beside one token, once) into a temporary directory must
 * finish and write well-formed results with every scenario.
 * No timing is asserted here: timings belong to `npm run bench`, never to `npm test`.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/tmp.ts';

const RUN = fileURLToPath(new URL('../../bench/run.ts', import.meta.url));

function runBench(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [RUN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

describe('npm run bench (tiny)', () => {
  const dirs: { cleanup(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((d) => d.cleanup()));
  });

  it('runs every scenario and writes results.json and chart.svg', async () => {
    const out = await tempDir('envsync-bench-test-');
    dirs.push(out);
    const run = await runBench([
      '--quick',
      '--orgs',
      '3',
      '--envs',
      '5',
      '--edits',
      '2',
      '--idle-seconds',
      '1',
      '--out',
      out.dir,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('| Scenario');

    const results: unknown = JSON.parse(await readFile(out.path('results.json'), 'utf8'));
    expect(isRecord(results)).toBe(true);
    if (!isRecord(results)) return;
    expect(results['version']).toBe(1);
    expect(typeof results['date']).toBe('string');
    expect(isRecord(results['machine']) && typeof results['machine']['cpus']).toBe('number');
    expect(results['parameters']).toMatchObject({
      orgs: 3,
      environmentsPerOrg: 5,
      environments: 15,
    });

    const scenarios = results['scenarios'];
    expect(isRecord(scenarios)).toBe(true);
    if (!isRecord(scenarios)) return;
    expect(Object.keys(scenarios).sort()).toEqual(
      ['apply', 'noop', 'ratelimit', 'small', 'tokens', 'validate', 'watch'].sort(),
    );
    // The workload is what it says: one GET per org on the no-op, every PUT applied.
    expect(scenarios['noop']).toMatchObject({ requests: 3, gets: 3, puts: 0 });
    expect(scenarios['apply']).toMatchObject({ drifted: 2, puts: 2 });
    const watch = scenarios['watch'];
    // Both kinds of change: git-sync swaps (top level) and in-place edits.
    expect(
      isRecord(watch) && Array.isArray(watch['latenciesMs']) && watch['latenciesMs'].length,
    ).toBe(2);
    const inPlace = isRecord(watch) ? watch['inPlace'] : undefined;
    expect(
      isRecord(inPlace) && Array.isArray(inPlace['latenciesMs']) && inPlace['latenciesMs'].length,
    ).toBe(2);
    // The small repository: the examples, each figure beside its baseline of the same round.
    expect(scenarios['small']).toMatchObject({ reps: 1 });
    const small = scenarios['small'];
    for (const figure of ['planWarmVsBare', 'planColdVsBare', 'validateVsNode', 'helpVsNode']) {
      expect(isRecord(small) && Number(small[figure]) > 0).toBe(true);
    }
    expect(isRecord(small) && Number(small['daemonSettledRssMb']) > 0).toBe(true);
    // Against the rate limit (2 orgs x 10 environments in quick mode): every change made, and
    // the requests needed (2 listings, 20 PUTs, 2 verify listings) counted apart from the 429s.
    expect(scenarios['ratelimit']).toMatchObject({
      changes: 20,
      sync: { needed: 24 },
      daemonFirstPass: { needed: 24 },
      daemonSecondPass: { needed: 24 },
    });
    // A token directory of 1,000 keys, beside one token: both ways started and answered.
    const tokens = scenarios['tokens'];
    expect(tokens).toMatchObject({ keys: 1000, reps: 1 });
    for (const figure of ['planTokenDirMs', 'healthzTokenDirMs', 'readyzTokenDirMs']) {
      expect(isRecord(tokens) && Number(tokens[figure]) > 0).toBe(true);
    }

    // Every target is checked and marked, with finite numbers.
    const checks = results['checks'];
    expect(Array.isArray(checks)).toBe(true);
    if (!Array.isArray(checks)) return;
    const ids = checks.map((c: unknown) => (isRecord(c) ? c['id'] : undefined));
    for (const id of [
      'validate.time',
      'noop.requests',
      'noop.vs-floor',
      'apply.vs-bound',
      'apply.vs-bare',
      'watch.p95',
      'watch.inPlaceP95',
      'watch.idle-cpu',
      'watch.settled-rss',
      'rss.validate',
      'rss.noop',
      'rss.apply',
      'rss.watch',
      'small.plan',
      'small.planCold',
      'small.planRss',
      'small.validate',
      'small.help',
      'small.daemonRss',
      'ratelimit.sync-vs-floor',
      'ratelimit.sync-429',
      'ratelimit.daemon-vs-floor',
      'ratelimit.daemon-429',
      'tokens.plan',
      'tokens.healthz',
    ]) {
      expect(ids).toContain(id);
    }
    for (const c of checks) {
      expect(isRecord(c) && typeof c['pass']).toBe('boolean');
      expect(isRecord(c) && Number.isFinite(c['actual'])).toBe(true);
    }

    const svg = await readFile(out.path('chart.svg'), 'utf8');
    expect(svg.startsWith('<svg ')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<rect /g)?.length).toBe(checks.length + 1);
    // A safety net, not a timing: every scenario runs once, tiny, and a loaded machine (other
    // suites, or a soak beside it) has taken more than 90 s.
  }, 240_000);
});
