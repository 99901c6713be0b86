/**
 * A token directory of 1,000 keys (`--token-dir`: a Kubernetes Secret with a key per org, mounted
 * whole): what it adds to start-up. On the examples (3 orgs, each with its key, beside 997 keys
 * of other orgs; random 32-byte keys in base64url, as services issue them) against the emulator
 * (which takes any well-formed token), each figure beside the same run with one token
 * (ENVSYNC_TOKEN), in the same round: the whole `plan` process, and `envsync run` from its start
 * to its first answer of /healthz and to ready (/readyz).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BenchConfig, childEnv, expectOk, mb, TARGET } from '../lib/context.ts';
import { startBenchEmulator } from '../lib/emulator.ts';
import { envsyncCommand, measure, type Measured, median, REPO, stopChild } from '../lib/proc.ts';
import { check, type Check, fmt } from '../lib/report.ts';
import { EXAMPLE_POLICY_DOCUMENTS } from './small.ts';

/** Keys in the token directory. */
const KEYS = 1000;
const EXAMPLE_ORGS = ['acme', 'globex', 'initech'];

/** How long `envsync run` takes from its start to each endpoint's first 200, in ms. */
async function daemonStart(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ healthzMs: number; readyzMs: number }> {
  const started = performance.now();
  const [program, ...rest] = envsyncCommand(['run', ...args, '--listen', '127.0.0.1:0']);
  const child = spawn(program as string, rest, { stdio: ['ignore', 'pipe', 'pipe'], env, cwd });
  let tail = '';
  const keep = (chunk: string) => (tail = (tail + chunk).slice(-4000));
  child.stderr.setEncoding('utf8').on('data', keep);
  child.stdout.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  /** Polls until `ok` holds; the time since the start, in ms (a bound, not a target). */
  const until = async (what: string, ok: () => Promise<boolean> | boolean) => {
    for (;;) {
      if (await ok()) return performance.now() - started;
      if (child.exitCode !== null || performance.now() - started > 600_000)
        throw new Error(`envsync run: no ${what}:\n${tail}`);
      await sleep(5);
    }
  };
  const answers = (url: () => string | undefined) => async () => {
    const at = url();
    if (at === undefined) return false;
    return fetch(at).then(
      async (r) => (await r.arrayBuffer(), r.status === 200),
      () => false,
    );
  };
  const listen = () => /"listen":"(http:\/\/[\d.:]+)"/.exec(tail)?.[1];
  try {
    const healthzMs = await until(
      '/healthz',
      answers(() => listen() && `${listen()}/healthz`),
    );
    const readyzMs = await until(
      '/readyz',
      answers(() => listen() && `${listen()}/readyz`),
    );
    return { healthzMs, readyzMs };
  } finally {
    await stopChild(child, exited);
  }
}

export async function tokens(c: BenchConfig) {
  const work = await mkdtemp(path.join(tmpdir(), 'envsync-bench-tokens-'));
  const emulator = await startBenchEmulator(['--profile', 'kosli']);
  try {
    const manifests = path.join(work, 'manifests');
    await cp(path.join(REPO, 'examples', 'manifests'), manifests, { recursive: true });
    await emulator.putStore({ version: 1, orgs: {}, policies: EXAMPLE_POLICY_DOCUMENTS });
    const dir = path.join(work, 'tokens');
    await mkdir(dir);
    const others = Array.from({ length: KEYS - EXAMPLE_ORGS.length }, (_, i) => `org-${i}`);
    for (const org of [...EXAMPLE_ORGS, ...others])
      await writeFile(path.join(dir, org), randomBytes(32).toString('base64url'));
    const oneToken = childEnv;
    const { ENVSYNC_TOKEN: _, ...noToken } = childEnv;
    const ways = [
      { name: 'one token', env: oneToken, args: [] as string[] },
      { name: 'token dir', env: noToken, args: ['--token-dir', dir] },
    ];
    const args = (way: (typeof ways)[number], state: string) => [
      '--manifests',
      manifests,
      '--api-url',
      emulator.url,
      '--state',
      path.join(work, state),
      ...way.args,
    ];
    // Each way syncs once: its plans below are then no-ops, as a CI job's usually are.
    for (const way of ways) {
      const synced = await measure(envsyncCommand(['sync', ...args(way, `${way.name}.json`)]), {
        env: way.env,
        cwd: work,
      });
      expectOk(`envsync sync (${way.name})`, synced);
    }
    const reps = Math.max(c.reps, c.quick ? 1 : 5);
    const plans: Record<string, Measured[]> = { 'one token': [], 'token dir': [] };
    const daemons: Record<string, { healthzMs: number; readyzMs: number }[]> = {
      'one token': [],
      'token dir': [],
    };
    for (let i = 0; i < reps; i++) {
      for (const way of ways) {
        const planned = await measure(envsyncCommand(['plan', ...args(way, `${way.name}.json`)]), {
          env: way.env,
          cwd: work,
        });
        expectOk(`envsync plan (${way.name})`, planned);
        plans[way.name]?.push(planned);
        daemons[way.name]?.push(
          await daemonStart(args(way, `${way.name}-daemon.json`), way.env, work),
        );
      }
    }
    const planMs = (name: string) => median((plans[name] ?? []).map((r) => r.wallMs));
    const planRssMb = (name: string) =>
      Math.max(...(plans[name] ?? []).map((r) => mb(r.peakRssBytes)));
    const daemonMs = (name: string, key: 'healthzMs' | 'readyzMs') =>
      median((daemons[name] ?? []).map((d) => d[key]));
    return {
      keys: KEYS,
      reps,
      planOneTokenMs: planMs('one token'),
      planTokenDirMs: planMs('token dir'),
      planAddedMs: planMs('token dir') - planMs('one token'),
      planOneTokenRssMb: planRssMb('one token'),
      planTokenDirRssMb: planRssMb('token dir'),
      healthzOneTokenMs: daemonMs('one token', 'healthzMs'),
      healthzTokenDirMs: daemonMs('token dir', 'healthzMs'),
      healthzAddedMs: daemonMs('token dir', 'healthzMs') - daemonMs('one token', 'healthzMs'),
      readyzOneTokenMs: daemonMs('one token', 'readyzMs'),
      readyzTokenDirMs: daemonMs('token dir', 'readyzMs'),
    };
  } finally {
    await emulator.stop();
    await rm(work, { recursive: true, force: true });
  }
}

export type TokensResult = Awaited<ReturnType<typeof tokens>>;

export function tokensChecks(r: TokensResult): Check[] {
  const label = `${fmt(r.keys)} keys`;
  return [
    check(
      'tokens.plan',
      'token dir',
      `plan: added by ${label}`,
      r.planAddedMs,
      'ms',
      '<',
      TARGET.tokenDirAddedMs,
    ),
    check(
      'tokens.healthz',
      'token dir',
      `run to /healthz: added by ${label}`,
      r.healthzAddedMs,
      'ms',
      '<',
      TARGET.tokenDirAddedMs,
    ),
  ];
}

export function tokensFigures(r: TokensResult): string[][] {
  return [
    [
      'token dir',
      `plan, one token / ${fmt(r.keys)} keys`,
      `${fmt(r.planOneTokenMs)} / ${fmt(r.planTokenDirMs)} ms`,
    ],
    [
      'token dir',
      `plan peak RSS, one token / ${fmt(r.keys)} keys`,
      `${fmt(r.planOneTokenRssMb)} / ${fmt(r.planTokenDirRssMb)} MB`,
    ],
    [
      'token dir',
      `run to /healthz, one token / ${fmt(r.keys)} keys`,
      `${fmt(r.healthzOneTokenMs)} / ${fmt(r.healthzTokenDirMs)} ms`,
    ],
    [
      'token dir',
      `run to /readyz, one token / ${fmt(r.keys)} keys`,
      `${fmt(r.readyzOneTokenMs)} / ${fmt(r.readyzTokenDirMs)} ms`,
    ],
  ];
}
