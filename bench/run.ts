/**
 * `npm run bench`: envsync at the largest realistic size, 1,000 orgs of 30 environments, side by
 * side with the floor and a bare script. Generates a synthetic manifest tree, starts the emulator
 * as a separate process on loopback and measures, in one run: a small repository (the examples)
 * beside its baselines, validate, the no-op plan (and its floor), apply with 10% drift, watch
 * latency, idle CPU and memory of the daemon, 1,000 changes against a rate-limited service, and
 * the start-up a token directory of 1,000 keys costs (one file each under scenarios/).
 * Prints a table, writes results.json and chart.svg to --out (default bench/).
 *
 *   node bench/run.ts [--orgs 1000] [--envs 100] [--concurrency 32] [--out DIR] [--quick]
 *   node bench/run.ts --only ratelimit [--out DIR]
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  APPLY_LATENCY_MS,
  type BenchConfig,
  DEBOUNCE_MS,
  log,
  prepare,
  TARGET,
} from './lib/context.ts';
import { type BenchEmulator, startBenchEmulator } from './lib/emulator.ts';
import { cliNodeFlags, cliPath, REPO, RSS_METHOD, useCli } from './lib/proc.ts';
import { check, type Check, checkRows, fmt, renderChart, renderTable } from './lib/report.ts';
import { storeDocument } from './lib/tree.ts';
import { apply, applyChecks, applyFigures } from './scenarios/apply.ts';
import { noop, noopChecks, noopFigures, plan } from './scenarios/noop.ts';
import { rateLimited, rateLimitedChecks, rateLimitedFigures } from './scenarios/ratelimit.ts';
import { small, smallChecks, smallFigures } from './scenarios/small.ts';
import { tokens, tokensChecks, tokensFigures } from './scenarios/tokens.ts';
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
    out: { type: 'string' },
    cli: { type: 'string' },
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  },
});
/** Every scenario, and the ones whose results another needs. */
const SCENARIOS = ['small', 'validate', 'noop', 'apply', 'watch', 'ratelimit', 'tokens'] as const;
type Scenario = (typeof SCENARIOS)[number];
const NEEDS: Partial<Record<Scenario, Scenario>> = {
  watch: 'apply',
};

if (flags.help) {
  process.stdout.write(`Usage: node bench/run.ts [flags]
  --orgs N           orgs in the synthetic tree (default 1000; --quick: 3)
  --envs N           environments per org (default 30; --quick: 5)
  --concurrency N    requests in flight, for envsync and the baselines alike (default 32)
  --reps N           runs of each one-shot measurement; the median is reported (default 5; --quick: 1)
  --edits N          file edits in the watch scenario (default 20; --quick: 4)
  --idle-seconds N   idle window for the daemon's CPU (default 30; --quick: 2)
  --out DIR          where results.json and chart.svg go (default bench/)
  --cli FILE         the envsync entry to run, as it is (default: this checkout, compiled as
                     the package ships it; another checkout's src/cli.ts to compare)
  --quick            a tiny run, for the tests
  --only NAMES       run only these scenarios (comma-separated: ${SCENARIOS.join(', ')}), and those
                     they need; writes results.json and chart.svg only with --out
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
const config: BenchConfig = {
  orgs: positive('orgs', flags.orgs, quick ? 3 : 1000),
  envs: positive('envs', flags.envs, quick ? 5 : 30),
  concurrency: positive('concurrency', flags.concurrency, 32),
  reps: positive('reps', flags.reps, quick ? 1 : 5),
  edits: positive('edits', flags.edits, quick ? 4 : 20),
  idleSeconds: positive('idle-seconds', flags['idle-seconds'], quick ? 2 : 30),
  quick,
};
/** The scenarios this run makes: all, or `--only`'s and what they need. */
function selected(raw: string | undefined): ReadonlySet<Scenario> {
  if (raw === undefined) return new Set(SCENARIOS);
  const names = raw.split(',').map((name) => name.trim());
  const out = new Set<Scenario>();
  for (const name of names) {
    const scenario = SCENARIOS.find((s) => s === name);
    if (scenario === undefined) {
      throw new Error(`--only: unknown scenario ${JSON.stringify(name)} (${SCENARIOS.join(', ')})`);
    }
    out.add(scenario);
    const need = NEEDS[scenario];
    if (need !== undefined) out.add(need);
  }
  return out;
}
const RUN = selected(flags.only);
/** A partial run leaves the full run's results alone unless told where to write its own. */
const OUT =
  flags.out !== undefined
    ? path.resolve(flags.out)
    : flags.only === undefined
      ? path.join(REPO, 'bench')
      : undefined;

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
      `work dir ${work}; ${c.orgs} orgs x ${c.envs} envs; concurrency ${c.concurrency}` +
        (flags.only === undefined ? '' : `; only ${[...RUN].join(', ')}`),
    );
    if (flags.cli === undefined) {
      log('building envsync as the package ships it (compiled JavaScript)');
      useCli(buildPackage(work));
    }
    // The large tree and the shared emulator, for every scenario but the small and rate-limited.
    const large = [...RUN].some((s) => s !== 'small' && s !== 'ratelimit' && s !== 'tokens');
    const w = large ? await prepare(c, work) : undefined;
    const needLarge = () => {
      if (w === undefined || emulator === undefined) throw new Error('the large tree is not ready');
      return { w, emulator };
    };
    if (large) {
      log('emulator: starting (separate process, spec profile)');
      emulator = await startBenchEmulator();
    }

    let smallResult;
    if (RUN.has('small')) {
      log('0/8 a small repository (the examples), start-up beside its baselines');
      smallResult = await small(c);
    }

    let validated;
    if (RUN.has('validate')) {
      log('1/8 validate');
      validated = await validate(c, needLarge().w);
    }

    let noopResult;
    if (RUN.has('noop')) {
      const l = needLarge();
      log('2/8 no-op plan and its floor');
      await l.emulator.putStore(storeDocument(l.w.orgs, c.envs).document);
      // Let the emulator digest the big store, and warm the page cache: one plan not measured.
      await sleep(c.quick ? 100 : 2000);
      await plan(c, l.w, l.emulator);
      noopResult = await noop(c, l.w, l.emulator);
    }

    let applied;
    if (RUN.has('apply')) {
      const l = needLarge();
      log(
        `3/8 apply with 10% drift (latency ${APPLY_LATENCY_MS} ms, concurrency ${c.concurrency})`,
      );
      applied = await apply(c, l.w, l.emulator);
    }

    let watched;
    if (RUN.has('watch') && applied !== undefined) {
      const l = needLarge();
      log(`4/8 watch: ${c.edits} edits, then ${c.idleSeconds} s idle`);
      watched = await watch(c, l.w, l.emulator, applied.state);
    }

    let limited;
    if (RUN.has('ratelimit')) {
      log('7/8 1,000 changes against a rate-limited service (its own emulator)');
      limited = await rateLimited(c, work);
    }

    let tokenDir;
    if (RUN.has('tokens')) {
      log('8/8 a token directory of 1,000 keys: start-up of plan and of the daemon');
      tokenDir = await tokens(c);
    }

    // Peak RSS of every scenario that ran and measures one.
    const rssRows: [string, string, number][] = [];
    const rss = (id: string, name: string, value: number | undefined) => {
      if (value !== undefined) rssRows.push([id, name, value]);
    };
    rss('validate', 'validate', validated?.peakRssMb);
    rss('noop', 'no-op plan', noopResult?.peakRssMb);
    rss('apply', 'apply', applied?.peakRssMb);
    rss('watch', 'watch (daemon)', watched?.peakRssMb);
    const checks: Check[] = [
      ...(smallResult === undefined ? [] : smallChecks(smallResult)),
      ...(validated === undefined ? [] : validateChecks(c, validated)),
      ...(noopResult === undefined ? [] : noopChecks(c, noopResult)),
      ...(applied === undefined ? [] : applyChecks(applied)),
      ...(watched === undefined ? [] : watchChecks(c, watched)),
      ...(limited === undefined ? [] : rateLimitedChecks(limited)),
      ...(tokenDir === undefined ? [] : tokensChecks(tokenDir)),
      ...rssRows.map(([id, name, value]) =>
        check(`rss.${id}`, 'peak RSS', name, value, 'MB', '<=', TARGET.rssMb),
      ),
    ];
    const figures: string[][] = [
      ...(smallResult === undefined ? [] : smallFigures(smallResult)),
      ...(validated === undefined ? [] : validateFigures(validated)),
      ...(noopResult === undefined ? [] : noopFigures(noopResult)),
      ...(applied === undefined ? [] : applyFigures(applied)),
      ...(watched === undefined ? [] : watchFigures(watched)),
      ...(limited === undefined ? [] : rateLimitedFigures(limited)),
      ...(tokenDir === undefined ? [] : tokensFigures(tokenDir)),
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
        ...(flags.only === undefined ? {} : { only: [...RUN] }),
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
        yamlParserOfBaselines: 'yaml',
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
        apply: applied === undefined ? undefined : { ...applied, state: undefined },
        watch: watched,
        ratelimit: limited,
        tokens: tokenDir,
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
      `\nenvsync benchmark${flags.only === undefined ? '' : ` (only ${[...RUN].join(', ')})`}: ` +
        `${fmt(c.orgs)} orgs x ${c.envs} environments, concurrency ${c.concurrency}, ` +
        `${machine.cpus} CPUs, Node ${machine.node}, load average ${loadAtStart.join(' ')} -> ` +
        `${machine.loadAverageAtEnd.join(' ')}\n\n${table}\n\n${details}\n\n` +
        `${checks.filter((entry) => !entry.pass).length} miss(es) of ${checks.length} checks.\n`,
    );
    if (OUT === undefined) {
      log(`--only without --out: results.json and chart.svg left as they are`);
      return;
    }
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
