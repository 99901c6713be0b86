/**
 * `npm run bench`: envsync at 100,000 environments, side by side with the floor and the naive way.
 * Generates a synthetic manifest tree, starts the emulator as a separate process on loopback and
 * measures, in one run: validate, the no-op plan (and its floor), apply with 10% drift, watch
 * latency and idle CPU of the daemon, the naive PUT-everything loop, and the no-op plan's scaling
 * curve (one file each under scenarios/). Prints a table, writes results.json and chart.svg to
 * --out (default bench/).
 *
 *   node bench/run.ts [--orgs 1000] [--envs 100] [--concurrency 32] [--out DIR] [--quick]
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  APPLY_LATENCY_MS,
  DEBOUNCE_MS,
  log,
  prepare,
  TARGET,
  type BenchConfig,
} from './lib/context.ts';
import { startBenchEmulator, type BenchEmulator } from './lib/emulator.ts';
import { cliNodeFlags, cliPath, REPO, RSS_METHOD, useCli } from './lib/proc.ts';
import { check, checkRows, fmt, renderChart, renderTable, type Check } from './lib/report.ts';
import { storeDocument } from './lib/tree.ts';
import { apply, applyChecks, applyFigures } from './scenarios/apply.ts';
import { naive, naiveChecks, naiveFigures } from './scenarios/naive.ts';
import { noop, noopChecks, noopFigures, plan } from './scenarios/noop.ts';
import { scaling, scalingFigures } from './scenarios/scaling.ts';
import { small, smallChecks, smallFigures } from './scenarios/small.ts';
import { validate, validateChecks, validateFigures } from './scenarios/validate.ts';
import { watch, watchChecks, watchFigures } from './scenarios/watch.ts';

const { values: flags } = parseArgs({
  options: {
    orgs: { type: 'string' },
    envs: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
    reps: { type: 'string' },
    edits: { type: 'string' },
    'idle-seconds': { type: 'string' },
    out: { type: 'string', default: path.join(REPO, 'bench') },
    cli: { type: 'string' },
    quick: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
if (flags.help) {
  process.stdout.write(`Usage: node bench/run.ts [flags]
  --orgs N           orgs in the synthetic tree (default 1000; --quick: 3)
  --envs N           environments per org (default 100; --quick: 5)
  --concurrency N    requests in flight, for envsync and the baselines alike (default 32)
  --reps N           runs of each one-shot measurement; the median is reported (default 5; --quick: 1)
  --edits N          file edits in the watch scenario (default 20; --quick: 4)
  --idle-seconds N   idle window for the daemon's CPU (default 30; --quick: 2)
  --out DIR          where results.json and chart.svg go (default bench/)
  --cli FILE         the envsync entry to run, as it is (default: this checkout, compiled as
                     the package ships it; another checkout's src/cli.ts to compare)
  --quick            a tiny run, for the tests
  --keep             keep the temporary work directory
`);
  process.exit(0);
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name}: a positive integer`);
  return value;
}

const quick = flags.quick;
if (flags.cli !== undefined) useCli(flags.cli);
const ORGS = positive('orgs', flags.orgs, quick ? 3 : 1000);
/** The scaling curve: 10, 100, 1,000 and 3,000 orgs for the default 1,000. */
const SIZES = [
  ...new Set([ORGS / 100, ORGS / 10, ORGS, ORGS * 3].map((n) => Math.max(1, Math.round(n)))),
].sort((a, b) => a - b);
const config: BenchConfig = {
  orgs: ORGS,
  envs: positive('envs', flags.envs, quick ? 5 : 100),
  concurrency: positive('concurrency', flags.concurrency, 32),
  reps: positive('reps', flags.reps, quick ? 1 : 5),
  edits: positive('edits', flags.edits, quick ? 4 : 20),
  idleSeconds: positive('idle-seconds', flags['idle-seconds'], quick ? 2 : 30),
  quick,
  sizes: SIZES,
  maxOrgs: Math.max(...SIZES),
};
const OUT = path.resolve(flags.out);

/**
 * The checkout whose envsync is measured: this one, compiled at the start of the run, or the one
 * `--cli` names (its `src/cli.ts`, run as it is).
 */
const SOURCE = flags.cli === undefined ? REPO : path.dirname(path.dirname(path.resolve(flags.cli)));

/**
 * Without --cli, envsync runs as users install it: compiled JavaScript, built into the work folder
 * by the project's own build step (scripts/build.ts --out-dir), as `npm pack` builds the package.
 */
function buildPackage(work: string): string {
  const out = path.join(work, 'package');
  execFileSync(process.execPath, [path.join(REPO, 'scripts', 'build.ts'), '--out-dir', out], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 120_000,
  });
  return path.join(out, 'dist', 'cli.js');
}

/** The commit of the envsync checkout measured, and whether its src/ differs from it. */
function revision(): { commit: string | null; srcModified: boolean | null } {
  const cwd = SOURCE;
  const git = (args: string[]) =>
    execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  try {
    return {
      commit: git(['rev-parse', 'HEAD']),
      srcModified: git(['status', '--porcelain', 'src']) !== '',
    };
  } catch {
    return { commit: null, srcModified: null };
  }
}

const loadNow = () => loadavg().map((n) => Math.round(n * 100) / 100);

async function main(c: BenchConfig): Promise<void> {
  const started = Date.now();
  const loadAtStart = loadNow();
  if ((loadAtStart[0] ?? 0) > cpus().length / 2) {
    log(
      `warning: load average ${loadAtStart.join(' ')} on ${cpus().length} CPUs: other work will skew the timings`,
    );
  }
  const work = await mkdtemp(path.join(tmpdir(), 'envsync-bench-'));
  let emulator: BenchEmulator | undefined;
  try {
    log(
      `work dir ${work}; sizes ${c.sizes.join(', ')} orgs x ${c.envs} envs; concurrency ${c.concurrency}`,
    );
    if (flags.cli === undefined) {
      log('building envsync as the package ships it (compiled JavaScript)');
      useCli(buildPackage(work));
    }
    const w = await prepare(c, work);
    log('emulator: starting (separate process, spec profile)');
    emulator = await startBenchEmulator();

    log('0/6 a small repository (the examples), start-up beside its baselines');
    const smallResult = await small(c);

    log('1/6 validate');
    const validated = await validate(c, w);

    log('2/6 no-op plan and its floor');
    // One store for every size: the trees of smaller sizes are the first orgs of the largest.
    await emulator.putStore(storeDocument(w.orgs.get(c.maxOrgs) as string[], c.envs).document);
    // Let the emulator digest the big store, and warm the page cache: one plan not measured.
    await sleep(c.quick ? 100 : 2000);
    await plan(c, w, emulator, c.orgs);
    const noopResult = await noop(c, w, emulator);

    // Apply drifts the store, so everything that needs it in step runs first; the step numbers
    // follow the tables' order, not the run's.
    log('5/6 the naive way');
    const naiveResult = await naive(c, w, emulator, noopResult.requests, noopResult.wallMs);

    log('6/6 scaling curve');
    const scale = await scaling(c, w, emulator, noopResult);

    log(`3/6 apply with 10% drift (latency ${APPLY_LATENCY_MS} ms, concurrency ${c.concurrency})`);
    const applied = await apply(c, w, emulator);

    log(`4/6 watch: ${c.edits} edits, then ${c.idleSeconds} s idle`);
    const watched = await watch(c, w, emulator, applied.state);

    const rssRows: [string, string, number][] = [
      ['validate', 'validate', validated.peakRssMb],
      ['noop', 'no-op plan', noopResult.peakRssMb],
      ['apply', 'apply', applied.peakRssMb],
      ['watch', 'watch (daemon)', watched.peakRssMb],
      ...scale.points.map((p): [string, string, number] => [
        `scaling-${p.orgs}`,
        `scaling ${fmt(p.orgs)} orgs`,
        p.peakRssMb,
      ]),
    ];
    const checks: Check[] = [
      ...smallChecks(smallResult),
      ...validateChecks(c, validated),
      ...noopChecks(c, noopResult),
      ...applyChecks(applied),
      ...watchChecks(c, watched),
      ...naiveChecks(naiveResult),
      ...rssRows.map(([id, name, value]) =>
        check(`rss.${id}`, 'peak RSS', name, value, 'MB', '<=', TARGET.rssMb),
      ),
      // The largest tree of the scaling curve (300,000 environments in a full run).
      ...scale.points
        .slice(-1)
        .map((p) =>
          check(
            'scaling.largest-rss',
            'scaling',
            `no-op plan peak RSS, ${fmt(p.environments)} envs`,
            p.peakRssMb,
            'MB',
            '<=',
            TARGET.largestRssMb,
          ),
        ),
    ];
    const figures: string[][] = [
      ...smallFigures(smallResult),
      ...validateFigures(validated),
      ...noopFigures(noopResult),
      ...applyFigures(applied),
      ...watchFigures(watched),
      ...naiveFigures(naiveResult),
      ...scalingFigures(scale),
    ];

    const machine = {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadNow(),
    };
    const results = {
      version: 1,
      date: new Date().toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      machine,
      parameters: {
        orgs: c.orgs,
        environmentsPerOrg: c.envs,
        environments: c.orgs * c.envs,
        concurrency: c.concurrency,
        reps: c.reps,
        quick: c.quick,
        scalingSizes: c.sizes,
        applyLatencyMs: APPLY_LATENCY_MS,
        debounceMs: DEBOUNCE_MS,
        edits: c.edits,
        idleSeconds: c.idleSeconds,
        emulator:
          'separate process, loopback, --profile spec (listing without include_scaling/policies)',
        statePresent: 'yes: the state file envsync would have written, so the no-op is a no-op',
        envsyncCli:
          flags.cli === undefined
            ? 'dist/cli.js of this checkout, compiled at the start of the run (scripts/build.ts)'
            : path.relative(REPO, cliPath()),
        envsyncRevision: revision(),
        envsyncNodeFlags: cliNodeFlags(),
        yamlParserOfBaselines: 'js-yaml',
        rssMethod:
          RSS_METHOD === 'gnu-time'
            ? '/usr/bin/time -f %M (ru_maxrss) for one-shot processes; VmHWM for the daemon'
            : 'VmHWM polled from /proc/<pid>/status every 10 ms; VmHWM for the daemon',
        timing: `wall time of the whole process (start-up included), median of ${c.reps} run(s)`,
      },
      targets: TARGET,
      scenarios: {
        small: smallResult,
        validate: validated,
        noop: noopResult,
        // The state file's path is a temporary directory's, gone after the run.
        apply: { ...applied, state: undefined },
        watch: watched,
        naive: naiveResult,
        scaling: scale,
      },
      checks,
      pass: checks.every((entry) => entry.pass),
    };

    const table = renderTable(checkRows(checks), [
      'Scenario',
      'Figure',
      'Measured',
      'Target',
      'Result',
    ]);
    const details = renderTable(
      figures.map((r) => [...r, '', '']).map((r) => r.slice(0, 3)),
      ['Scenario', 'Figure', 'Value'],
    );
    process.stdout.write(
      `\nenvsync benchmark: ${fmt(c.orgs)} orgs x ${c.envs} environments, concurrency ${c.concurrency}, ` +
        `${machine.cpus} CPUs, Node ${machine.node}\n\n${table}\n\n${details}\n\n` +
        `${checks.filter((entry) => !entry.pass).length} miss(es) of ${checks.length} checks.\n`,
    );
    await mkdir(OUT, { recursive: true });
    await writeFile(path.join(OUT, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    await writeFile(
      path.join(OUT, 'chart.svg'),
      renderChart(
        checks,
        `envsync benchmark: ${fmt(c.orgs * c.envs)} environments (${fmt(c.orgs)} orgs x ${c.envs})`,
        `${machine.cpus} CPUs, Node ${machine.node}, ${results.date.slice(0, 10)}; bar = measured / target`,
      ),
    );
    log(`wrote ${path.join(OUT, 'results.json')} and chart.svg in ${results.durationSeconds} s`);
  } finally {
    await emulator?.stop();
    if (flags.keep) log(`kept ${work}`);
    else await rm(work, { recursive: true, force: true });
  }
}

await main(config);
