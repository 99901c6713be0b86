/**
 * Rate-limited: 1,000 changes (20 orgs x 50 environments, half created and half updated) against
 * a service that admits 50 requests per second and answers 429 with Retry-After beyond. The
 * service's limit is the floor: no client converges faster than the requests it needs (listings,
 * PUTs, verify listings: every request not answered 429) divided by the rate. Measured for a
 * one-shot `envsync sync`, and for the daemon (`envsync run`): its first pass makes the same
 * 1,000 changes, then a git-sync swap edits every description and its second pass, which starts
 * with the pace the first learned from Retry-After (one request gate for the daemon's life), is
 * measured against its own floor.
 *
 * The emulator is a process of its own with `--rate-limit`, so the limit touches no other
 * scenario. Its token bucket holds one second of requests; each measured part starts with it
 * full (a second of quiet first).
 */
import { spawn } from 'node:child_process';
import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BenchConfig, childEnv, envsyncAgainst, expectOk, TARGET } from '../lib/context.ts';
import { startBenchEmulator, type Stats, statsDelta } from '../lib/emulator.ts';
import { measure, onJsonLines, stopChild } from '../lib/proc.ts';
import { check, type Check, fmt } from '../lib/report.ts';
import { environmentsOf, manifestFile, manifestText, orgName } from '../lib/tree.ts';

/** The workload: full run, and the quick run of the system tests (a few seconds). */
const SIZE = {
  full: { orgs: 20, envs: 50, rate: 50 },
  quick: { orgs: 2, envs: 10, rate: 10 },
};

/** One measured part: what it sent, what the service refused, and its time over its floor. */
export interface RateLimitedRun {
  /** Wall time: the whole process for the one-shot, the pass's own duration for the daemon. */
  readonly wallMs: number;
  readonly requests: number;
  readonly throttled: number;
  /** Requests the sync needed: all but those answered 429. */
  readonly needed: number;
  /** PUTs sent, those answered 429 included. */
  readonly puts: number;
  /** needed / rate, in ms. */
  readonly floorMs: number;
  readonly vsFloor: number;
  /** Share of the requests answered 429. */
  readonly throttledShare: number;
}

function figures(wallMs: number, before: Stats, after: Stats, rate: number): RateLimitedRun {
  const counted = statsDelta(before, after);
  const throttled = (after.byStatus['429'] ?? 0) - (before.byStatus['429'] ?? 0);
  const needed = counted.total - throttled;
  const floorMs = (needed / rate) * 1000;
  return {
    wallMs,
    requests: counted.total,
    throttled,
    needed,
    puts: counted.put,
    floorMs,
    vsFloor: wallMs / floorMs,
    throttledShare: counted.total === 0 ? Number.NaN : throttled / counted.total,
  };
}

/**
 * The store the changes start from: every other environment exists, described otherwise (an
 * update), the rest do not (a create).
 */
function startingStore(orgs: readonly string[], envs: number): unknown {
  const out: Record<string, unknown[]> = {};
  for (const org of orgs) {
    out[org] = environmentsOf(org, envs)
      .filter((_, i) => i % 2 === 0)
      .map((env) => ({
        name: env.name,
        type: env.type,
        description: `${env.description} (before the sync)`,
        policies: [...env.policies],
      }));
  }
  return { version: 1, orgs: out };
}

/** Writes one revision of the tree: `edit` set, every description carries it. */
async function writeRevision(root: string, orgs: readonly string[], envs: number, edit?: string) {
  for (const [i, org] of orgs.entries()) {
    const file = manifestFile(root, i, orgs.length);
    await mkdir(path.dirname(file), { recursive: true });
    const declared = environmentsOf(org, envs).map((env) =>
      edit === undefined ? env : { ...env, description: `${env.description} (${edit})` },
    );
    await writeFile(file, manifestText(org, declared));
  }
}

/** A new link renamed over `current`, atomic as git-sync's swap. */
async function publish(dir: string, revision: string): Promise<void> {
  const next = path.join(dir, `.current-${revision}`);
  await symlink(revision, next);
  await rename(next, path.join(dir, 'current'));
}

interface PassLine {
  readonly applied: number;
  readonly durationMs: number;
  readonly result: string;
  /** When the line arrived (performance.now()). */
  readonly at: number;
}

export async function rateLimited(c: BenchConfig, work: string) {
  const size = c.quick ? SIZE.quick : SIZE.full;
  const changes = size.orgs * size.envs;
  const orgs = Array.from({ length: size.orgs }, (_, i) => orgName(i, size.orgs));
  const dir = path.join(work, 'ratelimit');
  await writeRevision(path.join(dir, 'rev-1'), orgs, size.envs);
  await writeRevision(path.join(dir, 'rev-2'), orgs, size.envs, 'edited');
  await publish(dir, 'rev-1');
  const manifests = path.join(dir, 'current');
  const store = startingStore(orgs, size.envs);

  const emulator = await startBenchEmulator(['--rate-limit', String(size.rate)]);
  try {
    // One-shot: `envsync sync` from an empty state file.
    await emulator.putStore(store);
    await sleep(1100);
    const before = await emulator.stats();
    const run = await measure(
      envsyncAgainst(c, 'sync', manifests, emulator.url, path.join(dir, 'sync-state.json')),
      { env: childEnv, cwd: work },
    );
    expectOk('envsync sync (rate-limited)', run);
    const summary = new RegExp(`Sync: ${changes} applied, 0 failed, 0 not converged`);
    if (!summary.test(run.stdout)) {
      throw new Error(`sync did not apply ${changes} changes: ${run.stdout.slice(-500)}`);
    }
    const sync = figures(run.wallMs, before, await emulator.stats(), size.rate);

    // The daemon: the same 1,000 changes in its first pass, then every description edited.
    await emulator.putStore(store);
    await sleep(1100);
    const daemon = await daemonPasses(c, {
      manifests,
      dir,
      apiUrl: emulator.url,
      state: path.join(dir, 'daemon-state.json'),
      changes,
      stats: () => emulator.stats(),
      rate: size.rate,
      cwd: work,
    });
    return {
      orgs: size.orgs,
      environmentsPerOrg: size.envs,
      changes,
      rateLimit: size.rate,
      concurrency: c.concurrency,
      floor: 'requests the sync needed (all but the 429s) / the rate limit',
      sync: {
        what: 'envsync sync, the whole process; half the environments created, half updated',
        ...sync,
      },
      daemonFirstPass: {
        what: 'envsync run, first pass: the same changes, the pace not learned yet',
        ...daemon.first,
      },
      daemonSecondPass: {
        what: 'envsync run, second pass after a git-sync swap editing every description; the pass duration its log line gives',
        ...daemon.second,
        swapToPassEndMs: daemon.swapToPassEndMs,
      },
    };
  } finally {
    await emulator.stop();
  }
}

/** Runs the daemon through its two passes; returns both passes' figures. */
async function daemonPasses(
  c: BenchConfig,
  o: {
    manifests: string;
    dir: string;
    apiUrl: string;
    state: string;
    changes: number;
    stats: () => Promise<Stats>;
    rate: number;
    cwd: string;
  },
) {
  const [program, ...args] = envsyncAgainst(c, 'run', o.manifests, o.apiUrl, o.state, [
    '--interval',
    '0',
    '--listen',
    '127.0.0.1:0',
  ]);
  const child = spawn(program as string, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: childEnv,
    cwd: o.cwd,
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const passes: PassLine[] = [];
  let tail = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-4000);
  });
  onJsonLines(child.stderr, (entry) => {
    if (typeof entry['msg'] === 'string' && entry['msg'].startsWith('pass ')) {
      passes.push({
        applied: Number(entry['applied']),
        durationMs: Number(entry['durationMs']),
        result: String(entry['result']),
        at: performance.now(),
      });
    }
  });
  const pass = async (n: number) => {
    const deadline = Date.now() + 300_000;
    while (passes.length < n) {
      if (child.exitCode !== null) throw new Error(`envsync run exited:\n${tail}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for pass ${n}:\n${tail}`);
      await sleep(10);
    }
    const line = passes[n - 1] as PassLine;
    if (line.applied !== o.changes || line.result !== 'success') {
      throw new Error(
        `pass ${n} applied ${line.applied} of ${o.changes} (${line.result}):\n${tail}`,
      );
    }
    return line;
  };
  try {
    const before = await o.stats();
    const first = await pass(1);
    const between = await o.stats();
    // A second of quiet: the bucket is full again, as it was for the one-shot and the first pass.
    await sleep(1100);
    const swapStats = await o.stats();
    const swappedAt = performance.now();
    await publish(o.dir, 'rev-2');
    const second = await pass(2);
    const after = await o.stats();
    return {
      first: figures(first.durationMs, before, between, o.rate),
      second: figures(second.durationMs, swapStats, after, o.rate),
      swapToPassEndMs: second.at - swappedAt,
    };
  } finally {
    await stopChild(child, exited);
  }
}

export type RateLimitedResult = Awaited<ReturnType<typeof rateLimited>>;

/** Time over the floor, and the share of 429s, for the one-shot and the daemon's second pass. */
export function rateLimitedChecks(r: RateLimitedResult): Check[] {
  const scenario = `${fmt(r.rateLimit)} req/s limit`;
  const share = (run: RateLimitedRun) => `${fmt(run.throttledShare * 100)} %`;
  return [
    check(
      'ratelimit.sync-vs-floor',
      scenario,
      `sync of ${fmt(r.changes)}: time / floor`,
      r.sync.vsFloor,
      'x',
      '<=',
      TARGET.rateLimitedVsFloor,
    ),
    check(
      'ratelimit.sync-429',
      scenario,
      `sync of ${fmt(r.changes)}: 429 share`,
      r.sync.throttledShare * 100,
      '%',
      '<',
      TARGET.rateLimited429Percent,
      share(r.sync),
    ),
    check(
      'ratelimit.daemon-vs-floor',
      scenario,
      'daemon 2nd pass: time / floor',
      r.daemonSecondPass.vsFloor,
      'x',
      '<=',
      TARGET.rateLimitedVsFloor,
    ),
    check(
      'ratelimit.daemon-429',
      scenario,
      'daemon 2nd pass: 429 share',
      r.daemonSecondPass.throttledShare * 100,
      '%',
      '<',
      TARGET.rateLimited429Percent,
      share(r.daemonSecondPass),
    ),
  ];
}

/** The rate-limited scenario's rows of the figures table. */
export function rateLimitedFigures(r: RateLimitedResult): string[][] {
  const scenario = `${fmt(r.rateLimit)} req/s limit`;
  const row = (name: string, run: RateLimitedRun) => [
    scenario,
    `${name}: time / floor, 429s`,
    `${fmt(run.wallMs)} / ${fmt(run.floorMs)} ms (${fmt(run.vsFloor)} x), ` +
      `${fmt(run.throttled)} of ${fmt(run.requests)} (${fmt(run.throttledShare * 100)} %)`,
  ];
  return [
    row('sync', r.sync),
    row('daemon 1st pass', r.daemonFirstPass),
    row('daemon 2nd pass', r.daemonSecondPass),
  ];
}
