/**
 * `npm run bench`: envsync at 100,000 environments, side by side with the floor and the naive way
 * (issue 6). Generates a synthetic manifest tree, starts the emulator as a separate process on
 * loopback and measures, in one run: validate, the no-op plan (and its floor), apply with 10%
 * drift, watch latency and idle CPU of the daemon, the naive PUT-everything loop, and the no-op
 * plan's scaling curve. Prints a table, writes results.json and chart.svg to --out (default bench/).
 *
 *   node bench/run.ts [--orgs 1000] [--envs 100] [--concurrency 32] [--out DIR] [--quick]
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { startBenchEmulator, statsDelta, type BenchEmulator } from './lib/emulator.ts';
import {
  cliNodeFlags,
  cliPath,
  cpuSeconds,
  envsyncCommand,
  measure,
  median,
  percentile,
  REPO,
  RSS_METHOD,
  useCli,
  vmHwmBytes,
  type Measured,
} from './lib/proc.ts';
import { check, checkRows, fmt, renderChart, renderTable, type Check } from './lib/report.ts';
import {
  environmentsOf,
  manifestFile,
  manifestText,
  storeDocument,
  writeStateFile,
  writeTree,
} from './lib/tree.ts';

// ---------------------------------------------------------------------------------------------
// Parameters

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
  --cli FILE         the envsync entry to run (default src/cli.ts; another checkout to compare)
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
const ENVS = positive('envs', flags.envs, quick ? 5 : 100);
const CONCURRENCY = positive('concurrency', flags.concurrency, 32);
const REPS = positive('reps', flags.reps, quick ? 1 : 5);
const EDITS = positive('edits', flags.edits, quick ? 4 : 20);
const IDLE_SECONDS = positive('idle-seconds', flags['idle-seconds'], quick ? 2 : 30);
const OUT = path.resolve(flags.out);
const APPLY_LATENCY_MS = 20;
const DEBOUNCE_MS = 200;
const TOKEN = 'bench-token-0123456789';
/** The scaling curve: 10, 100, 1,000 and 3,000 orgs for the default 1,000. */
const SIZES = [
  ...new Set([ORGS / 100, ORGS / 10, ORGS, ORGS * 3].map((n) => Math.max(1, Math.round(n)))),
].sort((a, b) => a - b);
const MAX_ORGS = Math.max(...SIZES);
const MB = 1_000_000;

// Targets (issue 6).
const TARGET = {
  validateMs: 2000,
  rssMb: 250,
  noopVsFloor: 1.25,
  applyVsBound: 1.2,
  watchP95Ms: DEBOUNCE_MS + 150,
  idleCpuPercent: 1,
  naiveRequestRatio: 100,
};

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

/** The environment every envsync process gets: no ENVSYNC_* from the caller's shell. */
const childEnv: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !key.startsWith('ENVSYNC_')),
);
childEnv['ENVSYNC_TOKEN'] = TOKEN;
childEnv['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`;
delete childEnv['NODE_OPTIONS'];
delete childEnv['NODE_COMPILE_CACHE'];

/** The commit of the envsync checkout measured, and whether its src/ differs from it. */
function revision(): { commit: string | null; srcModified: boolean | null } {
  const cwd = path.dirname(path.dirname(cliPath()));
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

function mb(bytes: number | null): number {
  return bytes === null ? Number.NaN : bytes / MB;
}

function expectOk(what: string, run: Measured): void {
  if (run.code !== 0) {
    throw new Error(
      `${what} exited with ${run.code ?? run.signal}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}`,
    );
  }
}

function baselineCommand(script: string, manifests: string, apiUrl: string): string[] {
  return [
    process.execPath,
    ...cliNodeFlags(),
    path.join(REPO, 'bench', script),
    '--manifests',
    manifests,
    '--api-url',
    apiUrl,
    '--concurrency',
    String(CONCURRENCY),
  ];
}

// ---------------------------------------------------------------------------------------------
// Scenarios

interface Workload {
  readonly work: string;
  /** Manifest root per size (orgs). */
  readonly trees: Map<number, string>;
  /** Org names per size. */
  readonly orgs: Map<number, string[]>;
  /** State file per size, as `envsync sync` would have left it. */
  readonly states: Map<number, string>;
}

async function prepare(work: string): Promise<Workload> {
  const trees = new Map<number, string>();
  const orgs = new Map<number, string[]>();
  const states = new Map<number, string>();
  for (const size of SIZES) {
    const root = path.join(work, `manifests-${size}`);
    orgs.set(size, await writeTree(root, size, ENVS, MAX_ORGS));
    trees.set(size, root);
    const state = path.join(work, `state-${size}.json`);
    await writeStateFile(state, orgs.get(size) ?? [], ENVS);
    states.set(size, state);
  }
  return { work, trees, orgs, states };
}

async function validate(w: Workload) {
  const runs: Measured[] = [];
  for (let i = 0; i < REPS; i++) {
    const run = await measure(
      envsyncCommand(['validate', '--manifests', w.trees.get(ORGS) as string]),
      { env: childEnv, cwd: w.work },
    );
    expectOk('envsync validate', run);
    if (!run.stdout.includes(`${ORGS} org(s), ${ORGS * ENVS} environment(s)`)) {
      throw new Error(`envsync validate said: ${run.stdout}`);
    }
    runs.push(run);
  }
  return {
    environments: ORGS * ENVS,
    wallMs: median(runs.map((r) => r.wallMs)),
    wallMsRuns: runs.map((r) => r.wallMs),
    peakRssMb: Math.max(...runs.map((r) => mb(r.peakRssBytes))),
  };
}

/** `envsync COMMAND` against the emulator, over one tree and one state file, at CONCURRENCY. */
function envsyncAgainst(
  command: 'plan' | 'sync' | 'run',
  manifests: string,
  apiUrl: string,
  state: string,
  extra: readonly string[] = [],
): string[] {
  return envsyncCommand([
    command,
    '--manifests',
    manifests,
    '--api-url',
    apiUrl,
    '--state',
    state,
    '--concurrency',
    String(CONCURRENCY),
    ...extra,
  ]);
}

/** One `envsync plan` on the tree of `size` orgs; counts the requests it made. */
async function plan(w: Workload, emulator: BenchEmulator, size: number) {
  const before = await emulator.stats();
  const run = await measure(
    envsyncAgainst('plan', w.trees.get(size) as string, emulator.url, w.states.get(size) as string),
    { env: childEnv, cwd: w.work },
  );
  const requests = statsDelta(before, await emulator.stats());
  expectOk('envsync plan', run);
  const expected = `Plan: 0 to create, 0 to update, 0 unverified, ${size * ENVS} unchanged`;
  if (!run.stdout.includes(expected)) {
    throw new Error(`not a no-op: expected "${expected}", got ${run.stdout.slice(-500)}`);
  }
  return { run, requests };
}

async function noop(w: Workload, emulator: BenchEmulator) {
  const plans: Awaited<ReturnType<typeof plan>>[] = [];
  const floors: Measured[] = [];
  let floorRequests = 0;
  for (let i = 0; i < REPS; i++) {
    plans.push(await plan(w, emulator, ORGS));
    const before = await emulator.stats();
    const floor = await measure(
      baselineCommand('floor.ts', w.trees.get(ORGS) as string, emulator.url),
      {
        env: childEnv,
      },
    );
    floorRequests = statsDelta(before, await emulator.stats()).total;
    expectOk('bench/floor.ts', floor);
    floors.push(floor);
  }
  const first = plans[0]?.requests;
  const planMs = median(plans.map((p) => p.run.wallMs));
  const floorMs = median(floors.map((r) => r.wallMs));
  return {
    orgs: ORGS,
    requests: first?.total ?? Number.NaN,
    gets: first?.get ?? Number.NaN,
    puts: first?.put ?? Number.NaN,
    requestsEveryRun: plans.map((p) => p.requests.total),
    wallMs: planMs,
    wallMsRuns: plans.map((p) => p.run.wallMs),
    peakRssMb: Math.max(...plans.map((p) => mb(p.run.peakRssBytes))),
    floor: {
      parser: 'js-yaml (loadAll, CORE_SCHEMA)',
      client: 'undici Pool, same concurrency',
      requests: floorRequests,
      wallMs: floorMs,
      wallMsRuns: floors.map((r) => r.wallMs),
      peakRssMb: Math.max(...floors.map((r) => mb(r.peakRssBytes))),
    },
    vsFloor: planMs / floorMs,
  };
}

async function naive(
  w: Workload,
  emulator: BenchEmulator,
  envsyncRequests: number,
  envsyncMs: number,
) {
  const before = await emulator.stats();
  const run = await measure(
    baselineCommand('naive.ts', w.trees.get(ORGS) as string, emulator.url),
    {
      env: childEnv,
    },
  );
  const requests = statsDelta(before, await emulator.stats());
  expectOk('bench/naive.ts', run);
  return {
    requests: requests.total,
    puts: requests.put,
    wallMs: run.wallMs,
    peakRssMb: mb(run.peakRssBytes),
    /** naive / envsync: how many times more requests the naive way makes. */
    requestRatio: requests.total / envsyncRequests,
    envsyncOverNaiveRequests: envsyncRequests / requests.total,
    /** naive / envsync wall time (envsync's no-op plan). */
    timeRatio: run.wallMs / envsyncMs,
    envsyncOverNaiveTime: envsyncMs / run.wallMs,
  };
}

async function scaling(
  w: Workload,
  emulator: BenchEmulator,
  measured: { wallMs: number; peakRssMb: number; requests: number },
) {
  const points: {
    orgs: number;
    environments: number;
    requests: number;
    wallMs: number;
    peakRssMb: number;
    msPerOrg: number;
  }[] = [];
  for (const size of SIZES) {
    let wallMs: number;
    let peakRssMb: number;
    let requests: number;
    if (size === ORGS) {
      ({ wallMs, peakRssMb, requests } = measured); // in the no-op scenario
    } else {
      const runs = [];
      for (let i = 0; i < REPS; i++) runs.push(await plan(w, emulator, size));
      wallMs = median(runs.map((r) => r.run.wallMs));
      peakRssMb = Math.max(...runs.map((r) => mb(r.run.peakRssBytes)));
      requests = runs[0]?.requests.total ?? Number.NaN;
    }
    points.push({
      orgs: size,
      environments: size * ENVS,
      requests,
      wallMs,
      peakRssMb,
      msPerOrg: wallMs / size,
    });
  }
  // The cost of each further org between consecutive sizes (the process start-up cancels out).
  const marginal = points.slice(1).map((p, i) => {
    const q = points[i] as (typeof points)[number];
    return {
      from: q.orgs,
      to: p.orgs,
      msPerOrg: (p.wallMs - q.wallMs) / (p.orgs - q.orgs),
      kbPerOrg: ((p.peakRssMb - q.peakRssMb) * 1000) / (p.orgs - q.orgs),
    };
  });
  // Linear when the last segment's cost per org is within 1.5x of the one before it (time and
  // memory), i.e. no super-linear term shows between 1,000 and 3,000 orgs.
  const last = marginal.at(-1);
  const previous = marginal.at(-2);
  const timeGrowth = last && previous ? last.msPerOrg / previous.msPerOrg : Number.NaN;
  const memoryGrowth =
    last && previous ? last.kbPerOrg / Math.max(previous.kbPerOrg, 1e-9) : Number.NaN;
  const linear =
    !(timeGrowth > 1.5) && !(memoryGrowth > 1.5) && points.every((p) => p.requests === p.orgs);
  return { points, marginal, timeGrowth, memoryGrowth, linear };
}

async function apply(w: Workload, emulator: BenchEmulator) {
  const orgs = w.orgs.get(ORGS) as string[];
  // 10% of the environments (every tenth) had their description changed by hand in the service.
  const { document, drifted } = storeDocument(orgs, ENVS, (k) => k % 10 === 0);
  await emulator.putStore(document);
  const state = path.join(w.work, 'state-apply.json');
  await copyFile(w.states.get(ORGS) as string, state);
  await emulator.setLatency(APPLY_LATENCY_MS);
  const before = await emulator.stats();
  const run = await measure(
    envsyncAgainst('sync', w.trees.get(ORGS) as string, emulator.url, state),
    { env: childEnv, cwd: w.work },
  );
  const requests = statsDelta(before, await emulator.stats());
  expectOk('envsync sync', run);
  if (!run.stdout.includes(`Sync: ${drifted} applied, 0 failed, 0 not converged`)) {
    throw new Error(`sync did not apply ${drifted} changes: ${run.stdout.slice(-500)}`);
  }
  // The same requests with nothing around them: what the emulator and the HTTP stack cost.
  const floorBefore = await emulator.stats();
  const floorRun = await measure(
    [
      ...baselineCommand('apply-floor.ts', w.trees.get(ORGS) as string, emulator.url),
      '--every',
      '10',
    ],
    { env: childEnv },
  );
  const floorRequests = statsDelta(floorBefore, await emulator.stats()).total;
  await emulator.setLatency(0);
  expectOk('bench/apply-floor.ts', floorRun);
  const floorRequestMs = (JSON.parse(floorRun.stdout) as { requestMs: number }).requestMs;
  const boundMs = (requests.total * APPLY_LATENCY_MS) / CONCURRENCY;
  return {
    drifted,
    latencyMs: APPLY_LATENCY_MS,
    concurrency: CONCURRENCY,
    requests: requests.total,
    gets: requests.get,
    puts: requests.put,
    wallMs: run.wallMs,
    boundMs,
    vsBound: run.wallMs / boundMs,
    peakRssMb: mb(run.peakRssBytes),
    requestFloor: {
      what: 'bench/apply-floor.ts: the same GETs and PUTs in the same order, bare undici, no logic',
      requests: floorRequests,
      requestMs: floorRequestMs,
      wallMs: floorRun.wallMs,
      requestMsVsBound: floorRequestMs / ((floorRequests * APPLY_LATENCY_MS) / CONCURRENCY),
    },
    state,
  };
}

interface PassLine {
  applied: number;
  durationMs: number;
}

async function watch(w: Workload, emulator: BenchEmulator, state: string) {
  const root = w.trees.get(ORGS) as string;
  const [program, ...args] = envsyncAgainst('run', root, emulator.url, state, [
    '--interval',
    '0',
    '--debounce',
    `${DEBOUNCE_MS}ms`,
    '--listen',
    '127.0.0.1:0',
  ]);
  const child = spawn(program as string, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: childEnv,
    cwd: w.work,
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => resolve(code)),
  );
  const passes: PassLine[] = [];
  let tail = '';
  let buffer = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-4000);
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (typeof entry['msg'] === 'string' && entry['msg'].startsWith('pass ')) {
        passes.push({ applied: Number(entry['applied']), durationMs: Number(entry['durationMs']) });
      }
    }
  });
  const waitFor = async (what: string, done: () => boolean, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (child.exitCode !== null)
        throw new Error(`envsync run exited while waiting for ${what}:\n${tail}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${tail}`);
      await sleep(10);
    }
  };
  try {
    const startedAt = Date.now();
    await waitFor('the first pass', () => passes.length >= 1, 300_000);
    const firstPass = { ...(passes[0] as PassLine), readyAfterMs: Date.now() - startedAt };
    await sleep(500);

    // Edits: one org in the middle of the tree, one environment's description each time.
    const orgIndex = Math.floor(ORGS / 2);
    const org = (w.orgs.get(ORGS) as string[])[orgIndex] as string;
    const file = manifestFile(root, orgIndex, MAX_ORGS);
    const latencies: number[] = [];
    const passMs: number[] = [];
    for (let k = 1; k <= EDITS; k++) {
      const envs = environmentsOf(org, ENVS).map((env, i) =>
        i === 0 ? { ...env, description: `Edited by the benchmark, edit ${k}` } : env,
      );
      const count = passes.length;
      const writtenAt = Date.now();
      await writeFile(file, manifestText(org, envs));
      await waitFor(
        `the pass after edit ${k}`,
        () => passes.slice(count).some((p) => p.applied >= 1),
        120_000,
      );
      const pass = passes.slice(count).find((p) => p.applied >= 1) as PassLine;
      passMs.push(pass.durationMs);
      const put = (await emulator.requests(1000)).find(
        (r) =>
          r.method === 'PUT' && r.path.endsWith(`/${org}`) && Date.parse(r.time) >= writtenAt - 1,
      );
      if (put === undefined) throw new Error(`edit ${k}: no PUT for ${org} in the request log`);
      latencies.push(Date.parse(put.time) - writtenAt);
      // Quiet for longer than the debounce, so the next edit is its own pass.
      await sleep(DEBOUNCE_MS + 300);
    }

    // Idle: no trigger, no interval; what does the daemon cost while it waits?
    await sleep(1000);
    const statsBefore = await emulator.stats();
    const passesBefore = passes.length;
    const cpuBefore = cpuSeconds(child.pid as number);
    const idleStarted = performance.now();
    await sleep(IDLE_SECONDS * 1000);
    const cpuAfter = cpuSeconds(child.pid as number);
    const idleSeconds = (performance.now() - idleStarted) / 1000;
    const idleRequests = statsDelta(statsBefore, await emulator.stats()).total;
    const peakRssBytes = vmHwmBytes(child.pid as number);
    return {
      org,
      edits: EDITS,
      debounceMs: DEBOUNCE_MS,
      firstPass,
      latenciesMs: latencies,
      p50Ms: percentile(latencies, 50),
      p95Ms: percentile(latencies, 95),
      maxMs: Math.max(...latencies),
      passDurationMsMedian: median(passMs),
      idle: {
        seconds: idleSeconds,
        cpuSeconds: cpuAfter - cpuBefore,
        cpuPercentOfOneCore: ((cpuAfter - cpuBefore) / idleSeconds) * 100,
        requests: idleRequests,
        passes: passes.length - passesBefore,
      },
      peakRssMb: mb(peakRssBytes),
      rssMethod: 'VmHWM of /proc/<pid>/status, read before SIGTERM',
    };
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  if ((loadAtStart[0] ?? 0) > cpus().length / 2) {
    log(
      `warning: load average ${loadAtStart.join(' ')} on ${cpus().length} CPUs: other work will skew the timings`,
    );
  }
  const work = await mkdtemp(path.join(tmpdir(), 'envsync-bench-'));
  let emulator: BenchEmulator | undefined;
  try {
    log(
      `work dir ${work}; sizes ${SIZES.join(', ')} orgs x ${ENVS} envs; concurrency ${CONCURRENCY}`,
    );
    const w = await prepare(work);
    log('emulator: starting (separate process, spec profile)');
    emulator = await startBenchEmulator();

    log('1/6 validate');
    const validated = await validate(w);

    log('2/6 no-op plan and its floor');
    await emulator.putStore(storeDocument(w.orgs.get(MAX_ORGS) as string[], ENVS).document);
    // Let the emulator digest the big store, and warm the page cache: one plan not measured.
    await sleep(quick ? 100 : 2000);
    await plan(w, emulator, ORGS);
    const noopResult = await noop(w, emulator);

    log('5/6 the naive way');
    const naiveResult = await naive(w, emulator, noopResult.requests, noopResult.wallMs);

    log('6/6 scaling curve');
    const scale = await scaling(w, emulator, noopResult);

    log(`3/6 apply with 10% drift (latency ${APPLY_LATENCY_MS} ms, concurrency ${CONCURRENCY})`);
    const applied = await apply(w, emulator);

    log(`4/6 watch: ${EDITS} edits, then ${IDLE_SECONDS} s idle`);
    const watched = await watch(w, emulator, applied.state);

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
      check(
        'validate.time',
        'validate',
        `wall time, ${fmt(ORGS * ENVS)} envs`,
        validated.wallMs,
        'ms',
        '<=',
        TARGET.validateMs,
      ),
      check(
        'noop.requests',
        'no-op plan',
        'requests (one GET per org)',
        noopResult.requests,
        '',
        '==',
        ORGS,
        `${fmt(noopResult.requests)} (${fmt(noopResult.gets)} GET)`,
      ),
      check(
        'noop.vs-floor',
        'no-op plan',
        'wall time / floor',
        noopResult.vsFloor,
        'x',
        '<=',
        TARGET.noopVsFloor,
      ),
      check(
        'apply.vs-bound',
        'apply 10% drift',
        'wall time / bound',
        applied.vsBound,
        'x',
        '<=',
        TARGET.applyVsBound,
      ),
      check('watch.p95', 'watch', 'write -> PUT p95', watched.p95Ms, 'ms', '<=', TARGET.watchP95Ms),
      check(
        'watch.idle-cpu',
        'watch',
        `idle CPU over ${IDLE_SECONDS} s`,
        watched.idle.cpuPercentOfOneCore,
        '%',
        '<',
        TARGET.idleCpuPercent,
      ),
      check(
        'naive.request-ratio',
        'naive',
        'naive / envsync requests',
        naiveResult.requestRatio,
        'x',
        '>=',
        TARGET.naiveRequestRatio,
      ),
      ...rssRows.map(([id, name, value]) =>
        check(`rss.${id}`, 'peak RSS', name, value, 'MB', '<=', TARGET.rssMb),
      ),
    ];

    const figures: string[][] = [
      ['validate', 'wall time', `${fmt(validated.wallMs)} ms`],
      [
        'no-op plan',
        'requests',
        `${fmt(noopResult.requests)} (${fmt(noopResult.gets)} GET, ${fmt(noopResult.puts)} PUT)`,
      ],
      ['no-op plan', 'wall time', `${fmt(noopResult.wallMs)} ms`],
      ['no-op plan', 'floor wall time', `${fmt(noopResult.floor.wallMs)} ms`],
      [
        'apply 10% drift',
        'requests',
        `${fmt(applied.requests)} (${fmt(applied.gets)} GET, ${fmt(applied.puts)} PUT)`,
      ],
      [
        'apply 10% drift',
        'wall time / bound',
        `${fmt(applied.wallMs)} ms / ${fmt(applied.boundMs)} ms`,
      ],
      [
        'apply 10% drift',
        'request floor / bound',
        `${fmt(applied.requestFloor.requestMs)} ms (${fmt(applied.requestFloor.requestMsVsBound)} x)`,
      ],
      [
        'apply 10% drift',
        'bare script, parse + requests',
        `${fmt(applied.requestFloor.wallMs)} ms (envsync ${fmt(applied.wallMs / applied.requestFloor.wallMs)} x)`,
      ],
      ['watch', 'write -> PUT p50 / p95', `${fmt(watched.p50Ms)} / ${fmt(watched.p95Ms)} ms`],
      ['watch', 'pass duration (median)', `${fmt(watched.passDurationMsMedian)} ms`],
      ['watch', 'idle requests / passes', `${watched.idle.requests} / ${watched.idle.passes}`],
      ['naive', 'requests', fmt(naiveResult.requests)],
      ['naive', 'wall time', `${fmt(naiveResult.wallMs)} ms`],
      ['naive', 'envsync / naive requests', fmt(naiveResult.envsyncOverNaiveRequests, 3)],
      ['naive', 'envsync / naive time', fmt(naiveResult.envsyncOverNaiveTime, 3)],
      ...scale.points.map((p) => [
        'scaling',
        `${fmt(p.orgs)} orgs`,
        `${fmt(p.wallMs)} ms, ${fmt(p.peakRssMb)} MB, ${fmt(p.msPerOrg, 3)} ms/org`,
      ]),
      ...scale.marginal.map((m) => [
        'scaling',
        `marginal ${fmt(m.from)} -> ${fmt(m.to)}`,
        `${fmt(m.msPerOrg, 3)} ms/org, ${fmt(m.kbPerOrg, 1)} kB/org`,
      ]),
      ['scaling', 'growth', scale.linear ? 'roughly linear' : 'NOT linear'],
    ];

    const machine = {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadavg().map((n) => Math.round(n * 100) / 100),
    };
    const results = {
      version: 1,
      date: new Date().toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      machine,
      parameters: {
        orgs: ORGS,
        environmentsPerOrg: ENVS,
        environments: ORGS * ENVS,
        concurrency: CONCURRENCY,
        reps: REPS,
        quick,
        scalingSizes: SIZES,
        applyLatencyMs: APPLY_LATENCY_MS,
        debounceMs: DEBOUNCE_MS,
        edits: EDITS,
        idleSeconds: IDLE_SECONDS,
        emulator:
          'separate process, loopback, --profile spec (listing without include_scaling/policies)',
        statePresent: 'yes: the state file envsync would have written, so the no-op is a no-op',
        envsyncCli: path.relative(REPO, cliPath()),
        envsyncRevision: revision(),
        envsyncNodeFlags: cliNodeFlags(),
        yamlParserOfBaselines: 'js-yaml',
        rssMethod:
          RSS_METHOD === 'gnu-time'
            ? '/usr/bin/time -f %M (ru_maxrss) for one-shot processes; VmHWM for the daemon'
            : 'VmHWM polled from /proc/<pid>/status every 10 ms; VmHWM for the daemon',
        timing: `wall time of the whole process (start-up included), median of ${REPS} run(s)`,
      },
      targets: TARGET,
      scenarios: {
        validate: validated,
        noop: noopResult,
        apply: { ...applied, state: undefined },
        watch: watched,
        naive: naiveResult,
        scaling: scale,
      },
      checks,
      pass: checks.every((c) => c.pass),
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
      `\nenvsync benchmark: ${fmt(ORGS)} orgs x ${ENVS} environments, concurrency ${CONCURRENCY}, ` +
        `${machine.cpus} CPUs, Node ${machine.node}\n\n${table}\n\n${details}\n\n` +
        `${checks.filter((c) => !c.pass).length} miss(es) of ${checks.length} checks.\n`,
    );
    await mkdir(OUT, { recursive: true });
    await writeFile(path.join(OUT, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    await writeFile(
      path.join(OUT, 'chart.svg'),
      renderChart(
        checks,
        `envsync benchmark: ${fmt(ORGS * ENVS)} environments (${fmt(ORGS)} orgs x ${ENVS})`,
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

await main();
