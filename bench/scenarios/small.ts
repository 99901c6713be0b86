/**
 * A small repository, as most users have: the examples (3 orgs, 9 environments). Start-up is
 * most of what a run costs there, so every figure is a whole process beside a baseline measured
 * in the same round: `plan` beside the bare script (bench/small-floor.mjs: yaml and fetch),
 * warm (compile cache filled) and cold (Node's compile cache off); `validate` and `--help` beside
 * `node -e 0`; and the daemon's resident memory once it has settled on the examples, with its
 * metrics and status page served.
 */
import { spawn } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BenchConfig, childEnv, expectOk, mb, TARGET } from '../lib/context.ts';
import { startBenchEmulator } from '../lib/emulator.ts';
import { envsyncCommand, measure, type Measured, median, REPO, vmRssBytes } from '../lib/proc.ts';
import { check, type Check, fmt } from '../lib/report.ts';

const EXAMPLES = path.join(REPO, 'examples', 'manifests');

interface Pair {
  readonly subject: Measured[];
  readonly baseline: Measured[];
}

/** Runs `subject` and `baseline` back to back `reps` times, after one unmeasured run of each. */
async function sideBySide(
  reps: number,
  subject: () => Promise<Measured>,
  baseline: () => Promise<Measured>,
): Promise<Pair> {
  await subject();
  await baseline();
  const pair: Pair = { subject: [], baseline: [] };
  for (let i = 0; i < reps; i++) {
    pair.subject.push(await subject());
    pair.baseline.push(await baseline());
  }
  return pair;
}

const wall = (runs: readonly Measured[]) => median(runs.map((r) => r.wallMs));
const peak = (runs: readonly Measured[]) => Math.max(...runs.map((r) => mb(r.peakRssBytes)));

/** The daemon on the examples: VmRSS once settled, after /metrics and / were served. */
async function daemonRss(apiUrl: string, state: string, cwd: string) {
  const [program, ...args] = envsyncCommand([
    'run',
    '--manifests',
    EXAMPLES,
    '--api-url',
    apiUrl,
    '--state',
    state,
    '--listen',
    '127.0.0.1:0',
  ]);
  const child = spawn(program as string, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv,
    cwd,
  });
  let tail = '';
  const keep = (chunk: string) => (tail = (tail + chunk).slice(-4000));
  child.stderr.setEncoding('utf8').on('data', keep);
  child.stdout.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    const listen = await (async () => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const url = /"listen":"(http:\/\/[\d.:]+)"/.exec(tail)?.[1];
        if (url !== undefined) return url;
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`envsync run did not say where it listens:\n${tail}`);
        await sleep(20);
      }
    })();
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ready = await fetch(`${listen}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`envsync run never became ready:\n${tail}`);
      await sleep(50);
    }
    for (const endpoint of ['/metrics', '/', '/status', '/metrics', '/']) {
      const response = await fetch(`${listen}${endpoint}`);
      await response.arrayBuffer();
    }
    // Settled: let the collector and the allocator give back what start-up took.
    await sleep(3000);
    return mb(await vmRssBytes(child.pid as number));
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
}

/** The policies examples/manifests attach, by org, as policy documents of one version each. */
export const EXAMPLE_POLICY_DOCUMENTS = Object.fromEntries(
  Object.entries({
    acme: ['baseline', 'pci'],
    globex: ['soc2'],
    initech: ['baseline', 'sox'],
  }).map(([org, names]) => [
    org,
    names.map((name) => ({
      name,
      description: `${name} (bench)`,
      versions: [
        { version: 1, policy_yaml: `_schema: https://kosli.com/schemas/policy/environment/v1\n` },
      ],
    })),
  ]),
);

export async function small(c: BenchConfig) {
  const work = await mkdtemp(path.join(tmpdir(), 'envsync-bench-small-'));
  const emulator = await startBenchEmulator(['--profile', 'kosli']);
  try {
    // The service already holds the policy documents the examples attach, as production would:
    // the kosli dialect holds an org that attaches a policy nobody has.
    await emulator.putStore({ version: 1, orgs: {}, policies: EXAMPLE_POLICY_DOCUMENTS });
    const manifests = path.join(work, 'manifests');
    await cp(EXAMPLES, manifests, { recursive: true });
    const state = path.join(work, 'state.json');
    const reps = Math.max(c.reps, c.quick ? 1 : 7);
    const cold = { ...childEnv, NODE_DISABLE_COMPILE_CACHE: '1' };
    const warm = { ...childEnv, NODE_COMPILE_CACHE: path.join(work, 'compile-cache') };
    const args = ['--manifests', manifests, '--api-url', emulator.url, '--state', state];
    // One sync first: the service then matches the examples and the plans below are no-ops.
    expectOk('envsync sync', await measure(envsyncCommand(['sync', ...args]), { env: warm }));
    const run = async (command: readonly string[], env: NodeJS.ProcessEnv, what: string) => {
      const measured = await measure(command, { env, cwd: work });
      expectOk(what, measured);
      return measured;
    };
    const plan = (env: NodeJS.ProcessEnv) => () =>
      run(envsyncCommand(['plan', ...args]), env, 'envsync plan').then((m) => {
        if (!m.stdout.includes('Plan: 0 to create, 0 to update, 0 unverified'))
          throw new Error(`the small plan is not a no-op: ${m.stdout.slice(-400)}`);
        return m;
      });
    const bare = (env: NodeJS.ProcessEnv) => () =>
      run(
        [
          process.execPath,
          path.join(REPO, 'bench', 'small-floor.mjs'),
          '--manifests',
          manifests,
          '--api-url',
          emulator.url,
        ],
        env,
        'bench/small-floor.mjs',
      );
    const node = () => run([process.execPath, '-e', '0'], warm, 'node -e 0');
    const planWarm = await sideBySide(reps, plan(warm), bare(warm));
    const planCold = await sideBySide(reps, plan(cold), bare(cold));
    const validate = await sideBySide(
      reps,
      () => run(envsyncCommand(['validate', '--manifests', manifests]), warm, 'envsync validate'),
      node,
    );
    const help = await sideBySide(
      reps,
      () => run(envsyncCommand(['--help']), warm, 'envsync --help'),
      node,
    );
    const daemonRssMb = await daemonRss(emulator.url, path.join(work, 'daemon-state.json'), work);
    return {
      repository: 'examples/manifests (3 orgs, 9 environments)',
      reps,
      planWarmMs: wall(planWarm.subject),
      bareWarmMs: wall(planWarm.baseline),
      planWarmVsBare: wall(planWarm.subject) / wall(planWarm.baseline),
      planColdMs: wall(planCold.subject),
      bareColdMs: wall(planCold.baseline),
      planColdVsBare: wall(planCold.subject) / wall(planCold.baseline),
      planPeakRssMb: peak([...planWarm.subject, ...planCold.subject]),
      barePeakRssMb: peak(planWarm.baseline),
      validateMs: wall(validate.subject),
      helpMs: wall(help.subject),
      nodeMs: wall([...validate.baseline, ...help.baseline]),
      validateVsNode: wall(validate.subject) / wall(validate.baseline),
      helpVsNode: wall(help.subject) / wall(help.baseline),
      validatePeakRssMb: peak(validate.subject),
      nodePeakRssMb: peak(validate.baseline),
      daemonSettledRssMb: daemonRssMb,
    };
  } finally {
    await emulator.stop();
    await rm(work, { recursive: true, force: true });
  }
}

export type SmallResult = Awaited<ReturnType<typeof small>>;

export function smallChecks(r: SmallResult): Check[] {
  const x = (v: number) => `${fmt(v)} x`;
  return [
    check(
      'small.plan',
      'small repo',
      'plan, warm / bare script',
      r.planWarmVsBare,
      'x',
      '<=',
      TARGET.smallPlanVsBare,
      x(r.planWarmVsBare),
    ),
    check(
      'small.planCold',
      'small repo',
      'plan, cold / bare script',
      r.planColdVsBare,
      'x',
      '<=',
      TARGET.smallPlanColdVsBare,
      x(r.planColdVsBare),
    ),
    check(
      'small.planRss',
      'small repo',
      'plan peak RSS',
      r.planPeakRssMb,
      'MB',
      '<=',
      TARGET.smallPlanRssMb,
    ),
    check(
      'small.validate',
      'small repo',
      'validate / node -e 0',
      r.validateVsNode,
      'x',
      '<=',
      TARGET.smallStartupVsNode,
      x(r.validateVsNode),
    ),
    check(
      'small.help',
      'small repo',
      '--help / node -e 0',
      r.helpVsNode,
      'x',
      '<=',
      TARGET.smallStartupVsNode,
      x(r.helpVsNode),
    ),
    check(
      'small.daemonRss',
      'small repo',
      'daemon VmRSS, settled',
      r.daemonSettledRssMb,
      'MB',
      '<=',
      TARGET.smallDaemonRssMb,
    ),
  ];
}

export function smallFigures(r: SmallResult): string[][] {
  return [
    ['small repo', 'plan warm / bare script', `${fmt(r.planWarmMs)} / ${fmt(r.bareWarmMs)} ms`],
    ['small repo', 'plan cold / bare script', `${fmt(r.planColdMs)} / ${fmt(r.bareColdMs)} ms`],
    [
      'small repo',
      'peak RSS plan / bare script',
      `${fmt(r.planPeakRssMb)} / ${fmt(r.barePeakRssMb)} MB`,
    ],
    [
      'small repo',
      'validate / --help / node -e 0',
      `${fmt(r.validateMs)} / ${fmt(r.helpMs)} / ${fmt(r.nodeMs)} ms`,
    ],
    [
      'small repo',
      'peak RSS validate / node -e 0',
      `${fmt(r.validatePeakRssMb)} / ${fmt(r.nodePeakRssMb)} MB`,
    ],
    ['small repo', 'daemon VmRSS, settled', `${fmt(r.daemonSettledRssMb)} MB`],
  ];
}
