/**
 * Apply with 10% drift: `envsync sync` against a slow service (a fixed latency per request),
 * measured against two bounds: request time alone (requests x latency / concurrency), and
 * bench/apply-floor.ts, a bare script that reads the tree and replays the same requests.
 */
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import { type BenchEmulator, statsDelta } from '../lib/emulator.ts';
import {
  APPLY_LATENCY_MS,
  baselineCommand,
  type BenchConfig,
  childEnv,
  envsyncAgainst,
  expectOk,
  mb,
  TARGET,
  type Workload,
} from '../lib/context.ts';
import { measure } from '../lib/proc.ts';
import { check, type Check, fmt } from '../lib/report.ts';
import { storeDocument } from '../lib/tree.ts';

/**
 * Drifts the store, runs `envsync sync` once and then the bare script; leaves the emulator with
 * no latency and returns, besides the figures, the state file the sync wrote.
 */
export async function apply(c: BenchConfig, w: Workload, emulator: BenchEmulator) {
  const orgs = w.orgs;
  // 10% of the environments (every tenth) had their description changed by hand in the service.
  const { document, drifted } = storeDocument(orgs, c.envs, (k) => k % 10 === 0);
  await emulator.putStore(document);
  // A copy: the sync rewrites its state, and the prepared one must stay the no-op's.
  const state = path.join(w.work, 'state-apply.json');
  await copyFile(w.state, state);
  await emulator.setLatency(APPLY_LATENCY_MS);
  const before = await emulator.stats();
  const run = await measure(envsyncAgainst(c, 'sync', w.tree, emulator.url, state), {
    env: childEnv,
    cwd: w.work,
  });
  const requests = statsDelta(before, await emulator.stats());
  expectOk('envsync sync', run);
  // The changes are drift (the state file knows what was applied), so the line says so.
  const summary = new RegExp(
    `Sync: ${drifted} applied( \\(${drifted} drift healed\\))?, 0 failed, 0 not converged`,
  );
  if (!summary.test(run.stdout)) {
    throw new Error(`sync did not apply ${drifted} changes: ${run.stdout.slice(-500)}`);
  }
  // The same requests with nothing around them: what the emulator and the HTTP stack cost.
  const floorBefore = await emulator.stats();
  const floorRun = await measure(
    [...baselineCommand(c, 'apply-floor.ts', w.tree, emulator.url), '--every', '10'],
    { env: childEnv },
  );
  const floorRequests = statsDelta(floorBefore, await emulator.stats()).total;
  await emulator.setLatency(0);
  expectOk('bench/apply-floor.ts', floorRun);
  const floorRequestMs = (JSON.parse(floorRun.stdout) as { requestMs: number }).requestMs;
  const boundMs = (requests.total * APPLY_LATENCY_MS) / c.concurrency;
  return {
    drifted,
    latencyMs: APPLY_LATENCY_MS,
    concurrency: c.concurrency,
    requests: requests.total,
    gets: requests.get,
    puts: requests.put,
    wallMs: run.wallMs,
    boundMs,
    vsBound: run.wallMs / boundMs,
    /** Beside the bare script that reads, parses and replays the same requests. */
    vsBare: run.wallMs / floorRun.wallMs,
    peakRssMb: mb(run.peakRssBytes),
    requestFloor: {
      what: 'bench/apply-floor.ts: the same GETs and PUTs in the same order, bare undici, no logic',
      requests: floorRequests,
      requestMs: floorRequestMs,
      wallMs: floorRun.wallMs,
      requestMsVsBound: floorRequestMs / ((floorRequests * APPLY_LATENCY_MS) / c.concurrency),
    },
    state,
  };
}

export type ApplyResult = Awaited<ReturnType<typeof apply>>;

/**
 * The apply scenario's checks: its wall time beside the bare script that does the same reads and
 * requests, and beside request time alone (which no program that must first read the tree meets).
 */
export function applyChecks(r: ApplyResult): Check[] {
  return [
    check(
      'apply.vs-bare',
      'apply 10% drift',
      'wall time / bare script',
      r.vsBare,
      'x',
      '<=',
      TARGET.applyVsBare,
    ),
    check(
      'apply.vs-bound',
      'apply 10% drift',
      'wall time / bound',
      r.vsBound,
      'x',
      '<=',
      TARGET.applyVsBound,
    ),
  ];
}

/** The apply scenario's rows of the figures table. */
export function applyFigures(r: ApplyResult): string[][] {
  return [
    ['apply 10% drift', 'requests', `${fmt(r.requests)} (${fmt(r.gets)} GET, ${fmt(r.puts)} PUT)`],
    ['apply 10% drift', 'wall time / bound', `${fmt(r.wallMs)} ms / ${fmt(r.boundMs)} ms`],
    [
      'apply 10% drift',
      'request floor / bound',
      `${fmt(r.requestFloor.requestMs)} ms (${fmt(r.requestFloor.requestMsVsBound)} x)`,
    ],
    [
      'apply 10% drift',
      'bare script, parse + requests',
      `${fmt(r.requestFloor.wallMs)} ms (envsync ${fmt(r.vsBare)} x)`,
    ],
  ];
}
