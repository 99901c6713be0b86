/**
 * The benchmark keeps working: a tiny run of every scenario into a temporary directory writes
 * well-formed results. No timing is asserted: timings belong to `npm run bench`.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const RUN = fileURLToPath(new URL('../../bench/run.ts', import.meta.url));

type Scenario = Record<string, unknown>;
interface Results {
  scenarios: Record<string, Scenario>;
  checks: { id: string; pass: unknown; actual: unknown }[];
}

/** Expects every `figures` of `scenario` to be a number above 0. */
const expectPositive = (scenario: Scenario | undefined, figures: string[]) => {
  for (const figure of figures) expect(Number(scenario?.[figure]), figure).toBeGreaterThan(0);
};

describe('npm run bench (tiny)', () => {
  const dirs: { cleanup(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(dirs.map((d) => d.cleanup()));
  });

  it('runs every scenario and writes results.json and chart.svg', async () => {
    const out = await tempDir('envsync-bench-test-');
    dirs.push(out);
    const flags = `--quick --orgs 3 --envs 5 --edits 2 --idle-seconds 1 --out ${out.dir}`;
    // A safety net, not a timing: every scenario runs once, tiny, and a loaded machine (other
    // suites, or a soak beside it) has taken more than 90 s.
    const run = await runProcess(process.execPath, [RUN, ...flags.split(' ')], {
      env: process.env,
      timeoutMs: 230_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('| Scenario');

    const results = JSON.parse(await readFile(out.path('results.json'), 'utf8')) as Results;
    expect(results).toMatchObject({
      version: 1,
      date: expect.any(String),
      machine: { cpus: expect.any(Number) },
      parameters: { orgs: 3, environmentsPerOrg: 5, environments: 15 },
    });
    const { scenarios, checks } = results;
    expect(Object.keys(scenarios).sort()).toEqual(
      ['apply', 'noop', 'ratelimit', 'small', 'tokens', 'validate', 'watch'].sort(),
    );
    // The workload is what it says: one GET per org on the no-op, every PUT applied.
    expect(scenarios['noop']).toMatchObject({ requests: 3, gets: 3, puts: 0 });
    expect(scenarios['apply']).toMatchObject({ drifted: 2, puts: 2 });
    // Both kinds of change: git-sync swaps (top level) and in-place edits.
    const twice = [expect.any(Number), expect.any(Number)];
    expect(scenarios['watch']).toMatchObject({
      latenciesMs: twice,
      inPlace: { latenciesMs: twice },
    });
    // The small repository: the examples, each figure beside its baseline of the same round.
    expect(scenarios['small']).toMatchObject({ reps: 1 });
    const small = ['planWarmVsBare', 'planColdVsBare', 'validateVsNode', 'helpVsNode'];
    expectPositive(scenarios['small'], [...small, 'daemonSettledRssMb']);
    // Against the rate limit (2 orgs x 10 environments in quick mode): every change made, and
    // the requests needed (2 listings, 20 PUTs, 2 verify listings) counted apart from the 429s.
    expect(scenarios['ratelimit']).toMatchObject({
      changes: 20,
      sync: { needed: 24 },
      daemonFirstPass: { needed: 24 },
      daemonSecondPass: { needed: 24 },
    });
    // A token directory of 1,000 keys, beside one token: both ways started and answered.
    expect(scenarios['tokens']).toMatchObject({ keys: 1000, reps: 1 });
    expectPositive(scenarios['tokens'], [
      'planTokenDirMs',
      'healthzTokenDirMs',
      'readyzTokenDirMs',
    ]);

    // Every target is checked and marked, with finite numbers.
    const ids = checks.map((c) => c.id);
    const targets = [
      'validate.time noop.requests noop.vs-floor apply.vs-bound apply.vs-bare watch.p95',
      'watch.inPlaceP95 watch.idle-cpu watch.settled-rss rss.validate rss.noop rss.apply rss.watch',
      'small.plan small.planCold small.planRss small.validate small.help small.daemonRss',
      'ratelimit.sync-vs-floor ratelimit.sync-429 ratelimit.daemon-vs-floor ratelimit.daemon-429',
      'tokens.plan tokens.healthz',
    ];
    expect(ids).toEqual(expect.arrayContaining(targets.join(' ').split(' ')));
    for (const c of checks) {
      expect(typeof c.pass, c.id).toBe('boolean');
      expect(Number.isFinite(c.actual), c.id).toBe(true);
    }

    const svg = await readFile(out.path('chart.svg'), 'utf8');
    expect(svg.startsWith('<svg ')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg.match(/<rect /g)?.length).toBe(checks.length + 1);
  }, 240_000);
});
