/**
 * The naive way (bench/naive.ts: PUT every environment of every file, as a CI loop does) on the
 * no-op case, beside envsync's no-op plan of the same tree.
 */
import { type BenchEmulator, statsDelta } from '../lib/emulator.ts';
import {
  baselineCommand,
  type BenchConfig,
  childEnv,
  expectOk,
  mb,
  TARGET,
  type Workload,
} from '../lib/context.ts';
import { measure } from '../lib/proc.ts';
import { check, type Check, fmt } from '../lib/report.ts';

/** One run of the naive loop; its requests and time against the no-op plan's. */
export async function naive(
  c: BenchConfig,
  w: Workload,
  emulator: BenchEmulator,
  envsyncRequests: number,
  envsyncMs: number,
) {
  const before = await emulator.stats();
  const run = await measure(
    baselineCommand(c, 'naive.ts', w.trees.get(c.orgs) as string, emulator.url),
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

export type NaiveResult = Awaited<ReturnType<typeof naive>>;

/** The naive scenario's check: how many times more requests it makes than envsync. */
export function naiveChecks(r: NaiveResult): Check[] {
  return [
    check(
      'naive.request-ratio',
      'naive',
      'naive / envsync requests',
      r.requestRatio,
      'x',
      '>=',
      TARGET.naiveRequestRatio,
    ),
  ];
}

/** The naive scenario's rows of the figures table. */
export function naiveFigures(r: NaiveResult): string[][] {
  return [
    ['naive', 'requests', fmt(r.requests)],
    ['naive', 'wall time', `${fmt(r.wallMs)} ms`],
    ['naive', 'envsync / naive requests', fmt(r.envsyncOverNaiveRequests, 3)],
    ['naive', 'envsync / naive time', fmt(r.envsyncOverNaiveTime, 3)],
  ];
}
