/**
 * The no-op plan: `envsync plan` against a service that already matches the tree, beside its
 * floor (bench/floor.ts: read, parse and one GET per org, nothing else). Each repetition runs the
 * two back to back, so drifts of the machine's load hit both alike.
 */
import { type BenchEmulator, statsDelta } from '../lib/emulator.ts';
import {
  baselineCommand,
  type BenchConfig,
  childEnv,
  envsyncAgainst,
  expectOk,
  mb,
  TARGET,
  type Workload,
} from '../lib/context.ts';
import { measure, type Measured, median } from '../lib/proc.ts';
import { check, type Check, fmt } from '../lib/report.ts';

/** One `envsync plan` on the tree; counts the requests it made. */
export async function plan(c: BenchConfig, w: Workload, emulator: BenchEmulator) {
  const before = await emulator.stats();
  const run = await measure(envsyncAgainst(c, 'plan', w.tree, emulator.url, w.state), {
    env: childEnv,
    cwd: w.work,
  });
  const requests = statsDelta(before, await emulator.stats());
  expectOk('envsync plan', run);
  const expected = `Plan: 0 to create, 0 to update, 0 unverified, ${c.orgs * c.envs} unchanged`;
  if (!run.stdout.includes(expected)) {
    throw new Error(`not a no-op: expected "${expected}", got ${run.stdout.slice(-500)}`);
  }
  return { run, requests };
}

/** The no-op plan and its floor, `reps` times each; medians, and the plan's time over the floor's. */
export async function noop(c: BenchConfig, w: Workload, emulator: BenchEmulator) {
  const plans: Awaited<ReturnType<typeof plan>>[] = [];
  const floors: Measured[] = [];
  let floorRequests = 0;
  for (let i = 0; i < c.reps; i++) {
    plans.push(await plan(c, w, emulator));
    const before = await emulator.stats();
    const floor = await measure(baselineCommand(c, 'floor.ts', w.tree, emulator.url), {
      env: childEnv,
    });
    floorRequests = statsDelta(before, await emulator.stats()).total;
    expectOk('bench/floor.ts', floor);
    floors.push(floor);
  }
  const first = plans[0]?.requests;
  const planMs = median(plans.map((p) => p.run.wallMs));
  const floorMs = median(floors.map((r) => r.wallMs));
  return {
    orgs: c.orgs,
    requests: first?.total ?? Number.NaN,
    gets: first?.get ?? Number.NaN,
    puts: first?.put ?? Number.NaN,
    requestsEveryRun: plans.map((p) => p.requests.total),
    wallMs: planMs,
    wallMsRuns: plans.map((p) => p.run.wallMs),
    peakRssMb: Math.max(...plans.map((p) => mb(p.run.peakRssBytes))),
    floor: {
      parser: 'yaml (parseAllDocuments)',
      client: 'undici Pool, same concurrency',
      requests: floorRequests,
      wallMs: floorMs,
      wallMsRuns: floors.map((r) => r.wallMs),
      peakRssMb: Math.max(...floors.map((r) => mb(r.peakRssBytes))),
    },
    vsFloor: planMs / floorMs,
  };
}

export type NoopResult = Awaited<ReturnType<typeof noop>>;

/** The no-op plan's checks: one GET per org, and its time within the floor's budget. */
export function noopChecks(c: BenchConfig, r: NoopResult): Check[] {
  return [
    check(
      'noop.requests',
      'no-op plan',
      'requests (one GET per org)',
      r.requests,
      '',
      '==',
      c.orgs,
      `${fmt(r.requests)} (${fmt(r.gets)} GET)`,
    ),
    check(
      'noop.vs-floor',
      'no-op plan',
      'wall time / floor',
      r.vsFloor,
      'x',
      '<=',
      TARGET.noopVsFloor,
    ),
  ];
}

/** The no-op plan's rows of the figures table. */
export function noopFigures(r: NoopResult): string[][] {
  return [
    ['no-op plan', 'requests', `${fmt(r.requests)} (${fmt(r.gets)} GET, ${fmt(r.puts)} PUT)`],
    ['no-op plan', 'wall time', `${fmt(r.wallMs)} ms`],
    ['no-op plan', 'floor wall time', `${fmt(r.floor.wallMs)} ms`],
  ];
}
