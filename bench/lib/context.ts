/**
 * What every scenario shares: the run's parameters and targets, the synthetic workload on disk,
 * the environment of the processes it starts, and the command lines of envsync and the baselines.
 */
import path from 'node:path';
import { cliNodeFlags, envsyncCommand, REPO, type Measured } from './proc.ts';
import { writeStateFile, writeTree } from './tree.ts';

/** The parameters of one run, from the flags. */
export interface BenchConfig {
  readonly orgs: number;
  readonly envs: number;
  readonly concurrency: number;
  readonly reps: number;
  readonly edits: number;
  readonly idleSeconds: number;
  readonly quick: boolean;
}

/** Latency the emulator adds to every request in the apply scenario. */
export const APPLY_LATENCY_MS = 20;
/** The daemon's debounce in the watch scenario. */
export const DEBOUNCE_MS = 200;
/** The daemon's settle time in the watch scenario (its default): an edit is read after it. */
export const SETTLE_MS = 1500;
const TOKEN = 'bench-token-0123456789';
const MB = 1_000_000;

/** The targets each figure is checked against. */
export const TARGET = {
  /** validate of the whole tree (30,000 environments in a full run). */
  validateMs: 3000,
  /** Peak RSS of a one-shot command over the whole tree. */
  rssMb: 250,
  /** The no-op plan beside the floor: the same one GET per org, read and parsed, nothing else. */
  noopVsFloor: 1.3,
  /** Apply beside the bare script that reads, parses and sends the same requests. */
  applyVsBare: 1.1,
  /** Apply beside request time alone (requests x latency / concurrency). */
  applyVsBound: 1.2,
  /** A git-sync swap to its PUT: the debounce plus 100 ms for the pass. */
  watchP95Ms: DEBOUNCE_MS + 100,
  /** An in-place edit to its PUT: read once quiet for the settle time, then the pass. */
  watchInPlaceP95Ms: SETTLE_MS + 150,
  idleCpuPercent: 1,
  /** The daemon over the whole tree, settled after its passes. */
  daemonSettledRssMb: 100,
  /** The small repository (the examples): whole processes beside their baselines. */
  smallPlanVsBare: 1.3,
  smallPlanColdVsBare: 1.8,
  smallPlanRssMb: 75,
  smallStartupVsNode: 2,
  smallDaemonRssMb: 100,
  /** Against a rate limit: converged within this much of requests needed / rate. */
  rateLimitedVsFloor: 1.1,
  /** Against a rate limit: at most this share of the requests answered 429, in %. */
  rateLimited429Percent: 5,
  /** What a token directory of 1,000 keys adds to a command's start-up, and to the daemon's. */
  tokenDirAddedMs: 1000,
};

/** Progress on stderr, so stdout holds only the tables. */
export const log = (message: string): void => {
  process.stderr.write(`[bench] ${message}\n`);
};

/** The environment every envsync process gets: no ENVSYNC_* from the caller's shell. */
export const childEnv: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !key.startsWith('ENVSYNC_')),
);
childEnv['ENVSYNC_TOKEN'] = TOKEN;
childEnv['PATH'] = `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`;
delete childEnv['NODE_OPTIONS'];
delete childEnv['NODE_COMPILE_CACHE'];

/** Bytes in MB (10^6); NaN when the figure could not be read. */
export function mb(bytes: number | null): number {
  return bytes === null ? Number.NaN : bytes / MB;
}

/** Throws with the process's output when it did not exit with 0. */
export function expectOk(what: string, run: Measured): void {
  if (run.code !== 0) {
    throw new Error(
      `${what} exited with ${run.code ?? run.signal}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}`,
    );
  }
}

/** The command line of a baseline script in bench/, with envsync's node flags and concurrency. */
export function baselineCommand(
  c: BenchConfig,
  script: string,
  manifests: string,
  apiUrl: string,
): string[] {
  return [
    process.execPath,
    ...cliNodeFlags(),
    path.join(REPO, 'bench', script),
    '--manifests',
    manifests,
    '--api-url',
    apiUrl,
    '--concurrency',
    String(c.concurrency),
  ];
}

/** `envsync COMMAND` against the emulator, over one tree and one state file, at the concurrency. */
export function envsyncAgainst(
  c: BenchConfig,
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
    String(c.concurrency),
    ...extra,
  ]);
}

export interface Workload {
  readonly work: string;
  /** The manifest root. */
  readonly tree: string;
  /** The org names, in order. */
  readonly orgs: string[];
  /** The state file, as `envsync sync` would have left it. */
  readonly state: string;
}

/** Writes the manifest tree and its state file under `work`. */
export async function prepare(c: BenchConfig, work: string): Promise<Workload> {
  const tree = path.join(work, 'manifests');
  const orgs = await writeTree(tree, c.orgs, c.envs);
  const state = path.join(work, 'state.json');
  await writeStateFile(state, orgs, c.envs);
  return { work, tree, orgs, state };
}
