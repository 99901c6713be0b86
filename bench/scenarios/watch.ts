/**
 * Watch: the daemon (`envsync run`, file events only) over the tree, as deployed: its manifests
 * path is a symlink that git-sync moves to a new revision's directory at each commit. After its
 * first pass, one org's file changes again and again, each change its own pass; latency is the
 * emulator's arrival time of the PUT minus the time of the change. Two kinds of change:
 *
 * - **git-sync swaps** (the target): each revision is a new directory (the other files hard
 *   links of the last revision's, the changed file written new), published by renaming a new
 *   symlink over the old one, as git-sync does. The change happens at the rename. A swapped
 *   revision is complete, so the daemon reads it at once.
 * - **in-place edits** (a figure of its own): the same file rewritten where it is, as an editor
 *   or a script would. The daemon reads such a file only once it has been quiet for `--settle`
 *   (a writer may pause between writes), so this latency is the settle time plus the pass.
 *
 * Then an idle window: what the daemon costs while it waits (CPU, requests, passes).
 */
import { spawn } from 'node:child_process';
import { link, mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type BenchConfig,
  childEnv,
  DEBOUNCE_MS,
  envsyncAgainst,
  mb,
  SETTLE_MS,
  TARGET,
  type Workload,
} from '../lib/context.ts';
import { type BenchEmulator, statsDelta } from '../lib/emulator.ts';
import {
  cpuSeconds,
  median,
  onJsonLines,
  percentile,
  stopChild,
  vmHwmBytes,
  vmRssBytes,
} from '../lib/proc.ts';
import { check, type Check, fmt } from '../lib/report.ts';
import { environmentsOf, manifestFile, manifestText } from '../lib/tree.ts';

/** A git-sync checkout of `base`: revision directories and the `current` link to one of them. */
async function gitSyncCheckout(base: string, dir: string) {
  const files = (await readdir(base, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(base, path.join(entry.parentPath, entry.name)));
  const current = path.join(dir, 'current');
  let revision = 0;
  /** The oldest revision directory not removed yet. */
  let pruned = 1;
  const revisionDir = (n: number) => path.join(dir, `rev-${n}`);
  /** A new revision: every file linked from the last one, `changed` (relative) written new. */
  const prepare = async (changed?: { file: string; text: string }) => {
    const from = revision === 0 ? base : revisionDir(revision);
    const to = revisionDir(revision + 1);
    await Promise.all(
      [...new Set(files.map((f) => path.dirname(f)))].map((d) =>
        mkdir(path.join(to, d), { recursive: true }),
      ),
    );
    for (const file of files) {
      if (file === changed?.file) await writeFile(path.join(to, file), changed.text);
      else await link(path.join(from, file), path.join(to, file));
    }
    revision += 1;
    return revision;
  };
  /** Publishes revision `n`: a new link renamed over `current`, atomic as git-sync's. */
  const publish = async (n: number) => {
    const next = path.join(dir, `.current-${n}`);
    await symlink(`rev-${n}`, next);
    await rename(next, current);
  };
  await mkdir(dir, { recursive: true });
  await publish(await prepare());
  return {
    current,
    prepare,
    publish,
    /** The real directory of the published revision. */
    realDir: () => revisionDir(revision),
    /** Removes revisions older than the published one, as git-sync does. */
    prune: async () => {
      for (; pruned < revision; pruned++) {
        await rm(revisionDir(pruned), { recursive: true, force: true });
      }
    },
  };
}

interface PassLine {
  applied: number;
  durationMs: number;
}

/** Runs the daemon on `state`: the apply scenario's, which the service matches after its sync. */
export async function watch(c: BenchConfig, w: Workload, emulator: BenchEmulator, state: string) {
  const checkout = await gitSyncCheckout(w.tree, path.join(w.work, 'watch-checkout'));
  const [program, ...args] = envsyncAgainst(c, 'run', checkout.current, emulator.url, state, [
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
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-4000);
  });
  onJsonLines(child.stderr, (entry) => {
    if (typeof entry['msg'] === 'string' && entry['msg'].startsWith('pass ')) {
      passes.push({ applied: Number(entry['applied']), durationMs: Number(entry['durationMs']) });
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

    // Changes: one org in the middle of the tree, one environment's description each time.
    const orgIndex = Math.floor(c.orgs / 2);
    const org = w.orgs[orgIndex] as string;
    const relative = path.relative(
      checkout.realDir(),
      manifestFile(checkout.realDir(), orgIndex, c.orgs),
    );
    let edits = 0;
    const nextText = () => {
      edits += 1;
      const envs = environmentsOf(org, c.envs).map((env, i) =>
        i === 0 ? { ...env, description: `Edited by the benchmark, edit ${edits}` } : env,
      );
      return manifestText(org, envs);
    };
    /** Makes one change, waits for its pass; returns the change -> PUT latency and the pass. */
    const timed = async (k: number, change: () => Promise<void>) => {
      const count = passes.length;
      const changedAt = Date.now();
      await change();
      await waitFor(
        `the pass after change ${k}`,
        () => passes.slice(count).some((p) => p.applied >= 1),
        120_000,
      );
      const pass = passes.slice(count).find((p) => p.applied >= 1) as PassLine;
      const put = (await emulator.requests(1000)).find(
        (r) =>
          r.method === 'PUT' && r.path.endsWith(`/${org}`) && Date.parse(r.time) >= changedAt - 1,
      );
      if (put === undefined) throw new Error(`change ${k}: no PUT for ${org} in the request log`);
      // Quiet for longer than the debounce, so the next change is its own pass.
      await sleep(DEBOUNCE_MS + 300);
      return { latencyMs: Date.parse(put.time) - changedAt, passMs: pass.durationMs };
    };
    const series = (runs: { latencyMs: number; passMs: number }[]) => {
      const latencies = runs.map((r) => r.latencyMs);
      return {
        latenciesMs: latencies,
        p50Ms: percentile(latencies, 50),
        p95Ms: percentile(latencies, 95),
        maxMs: Math.max(...latencies),
        passDurationMsMedian: median(runs.map((r) => r.passMs)),
      };
    };

    // git-sync swaps: the revision is prepared first; the change is the rename of the link.
    const swaps = [];
    for (let k = 1; k <= c.edits; k++) {
      const revision = await checkout.prepare({ file: relative, text: nextText() });
      swaps.push(await timed(k, () => checkout.publish(revision)));
      await checkout.prune();
    }
    // In-place edits of the same file, in the published revision (its own file, not a link).
    const inPlaceFile = path.join(checkout.realDir(), relative);
    const inPlace = [];
    for (let k = 1; k <= c.edits; k++) {
      const text = nextText();
      inPlace.push(await timed(k, () => writeFile(inPlaceFile, text)));
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
    const settledRssBytes = await vmRssBytes(child.pid as number);
    return {
      org,
      edits: c.edits,
      debounceMs: DEBOUNCE_MS,
      firstPass,
      trigger: 'git-sync swap: a new revision directory, then a new symlink renamed over the old',
      ...series(swaps),
      inPlace: {
        trigger: 'the file rewritten where it is (read once quiet for --settle)',
        settleMs: SETTLE_MS,
        ...series(inPlace),
      },
      idle: {
        seconds: idleSeconds,
        cpuSeconds: cpuAfter - cpuBefore,
        cpuPercentOfOneCore: ((cpuAfter - cpuBefore) / idleSeconds) * 100,
        requests: idleRequests,
        passes: passes.length - passesBefore,
      },
      peakRssMb: mb(peakRssBytes),
      settledRssMb: mb(settledRssBytes),
      rssMethod:
        'VmHWM and VmRSS of /proc/<pid>/status, read after the idle window, before SIGTERM',
    };
  } finally {
    await stopChild(child, exited);
  }
}

export type WatchResult = Awaited<ReturnType<typeof watch>>;

/** The watch scenario's checks: write -> PUT latency, and CPU while idle. */
export function watchChecks(c: BenchConfig, r: WatchResult): Check[] {
  return [
    check('watch.p95', 'watch', 'git-sync swap -> PUT p95', r.p95Ms, 'ms', '<=', TARGET.watchP95Ms),
    check(
      'watch.inPlaceP95',
      'watch',
      'in-place edit -> PUT p95',
      r.inPlace.p95Ms,
      'ms',
      '<=',
      TARGET.watchInPlaceP95Ms,
    ),
    check(
      'watch.idle-cpu',
      'watch',
      `idle CPU over ${c.idleSeconds} s`,
      r.idle.cpuPercentOfOneCore,
      '%',
      '<',
      TARGET.idleCpuPercent,
    ),
    check(
      'watch.settled-rss',
      'watch',
      'daemon VmRSS, settled',
      r.settledRssMb,
      'MB',
      '<=',
      TARGET.daemonSettledRssMb,
    ),
  ];
}

/** The watch scenario's rows of the figures table. */
export function watchFigures(r: WatchResult): string[][] {
  return [
    ['watch', 'git-sync swap -> PUT p50 / p95', `${fmt(r.p50Ms)} / ${fmt(r.p95Ms)} ms`],
    [
      'watch',
      'in-place edit -> PUT p50 / p95',
      `${fmt(r.inPlace.p50Ms)} / ${fmt(r.inPlace.p95Ms)} ms`,
    ],
    [
      'watch',
      'pass duration (median), swap / in place',
      `${fmt(r.passDurationMsMedian)} / ${fmt(r.inPlace.passDurationMsMedian)} ms`,
    ],
    ['watch', 'idle requests / passes', `${r.idle.requests} / ${r.idle.passes}`],
  ];
}
