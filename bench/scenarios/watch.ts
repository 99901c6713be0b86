/**
 * Watch: the daemon (`envsync run`, file events only) over the tree. After its first pass, one
 * org's file is edited again and again, each edit its own pass: latency is the emulator's arrival
 * time of the PUT minus the time of the write. Then an idle window: what the daemon costs while
 * it waits (CPU, requests, passes).
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  childEnv,
  DEBOUNCE_MS,
  SETTLE_MS,
  envsyncAgainst,
  mb,
  TARGET,
  type BenchConfig,
  type Workload,
} from '../lib/context.ts';
import { statsDelta, type BenchEmulator } from '../lib/emulator.ts';
import { cpuSeconds, median, percentile, vmHwmBytes } from '../lib/proc.ts';
import { check, fmt, type Check } from '../lib/report.ts';
import { environmentsOf, manifestFile, manifestText } from '../lib/tree.ts';

interface PassLine {
  applied: number;
  durationMs: number;
}

/** Runs the daemon on `state`: the apply scenario's, which the service matches after its sync. */
export async function watch(c: BenchConfig, w: Workload, emulator: BenchEmulator, state: string) {
  const root = w.trees.get(c.orgs) as string;
  const [program, ...args] = envsyncAgainst(c, 'run', root, emulator.url, state, [
    '--interval',
    '0',
    '--debounce',
    `${DEBOUNCE_MS}ms`,
    '--settle',
    `${SETTLE_MS}ms`,
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
  // The daemon's JSON log on stderr says when each pass ended and what it applied.
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
    const orgIndex = Math.floor(c.orgs / 2);
    const org = (w.orgs.get(c.orgs) as string[])[orgIndex] as string;
    const file = manifestFile(root, orgIndex, c.maxOrgs);
    const latencies: number[] = [];
    const passMs: number[] = [];
    for (let k = 1; k <= c.edits; k++) {
      const envs = environmentsOf(org, c.envs).map((env, i) =>
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
    await sleep(c.idleSeconds * 1000);
    const cpuAfter = cpuSeconds(child.pid as number);
    const idleSeconds = (performance.now() - idleStarted) / 1000;
    const idleRequests = statsDelta(statsBefore, await emulator.stats()).total;
    const peakRssBytes = vmHwmBytes(child.pid as number);
    return {
      org,
      edits: c.edits,
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

export type WatchResult = Awaited<ReturnType<typeof watch>>;

/** The watch scenario's checks: write -> PUT latency, and CPU while idle. */
export function watchChecks(c: BenchConfig, r: WatchResult): Check[] {
  return [
    check('watch.p95', 'watch', 'write -> PUT p95', r.p95Ms, 'ms', '<=', TARGET.watchP95Ms),
    check(
      'watch.idle-cpu',
      'watch',
      `idle CPU over ${c.idleSeconds} s`,
      r.idle.cpuPercentOfOneCore,
      '%',
      '<',
      TARGET.idleCpuPercent,
    ),
  ];
}

/** The watch scenario's rows of the figures table. */
export function watchFigures(r: WatchResult): string[][] {
  return [
    ['watch', 'write -> PUT p50 / p95', `${fmt(r.p50Ms)} / ${fmt(r.p95Ms)} ms`],
    ['watch', 'pass duration (median)', `${fmt(r.passDurationMsMedian)} ms`],
    ['watch', 'idle requests / passes', `${r.idle.requests} / ${r.idle.passes}`],
  ];
}
