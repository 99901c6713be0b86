/**
 * One life of the soak's daemon: `envsync run` as a child process, its output kept whole in
 * files (to be searched for the token at the end), its pass lines parsed, its resident memory and
 * open descriptors sampled from /proc, its endpoints read.
 */
import { onJsonLines } from './proc.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** One sample of the process: age, resident memory, and its descriptors by kind. */
export interface Sample {
  /** Ms since the life began. */
  readonly ageMs: number;
  readonly rssKb: number;
  readonly fds: { readonly total: number; readonly sockets: number; readonly other: number };
}

/**
 * One pass's verdict line. Its `failed`, `invalid` and `pending` are the daemon's whole memory at
 * the pass's end (every org it has seen, looked at in this pass or not): what `/status` shows
 * between passes.
 */
export interface PassLine {
  readonly result: string;
  readonly applied: number;
  readonly driftHealed: number;
  readonly durationMs: number;
  /** Orgs failed, orgs invalid, and changes pending, over every org, at the pass's end. */
  readonly failed: number;
  readonly invalid: number;
  readonly pending: number;
  /** When the line arrived (epoch ms). */
  readonly at: number;
  /** When the pass started, by the daemon's clock (epoch ms; NaN when the line does not say). */
  readonly startedAt: number;
}

/** One change the daemon logged as applied: the log line after its requests went through. */
export interface AppliedLine {
  readonly org: string;
  readonly env: string;
  readonly action: string;
  readonly cause: string;
  /** When the line arrived (epoch ms). */
  readonly at: number;
}

export interface DaemonLife {
  readonly index: number;
  readonly pid: number;
  readonly startedAt: number;
  /** The endpoints' base URL, from the start-up log line. */
  readonly url: string;
  readonly passes: PassLine[];
  readonly applied: AppliedLine[];
  readonly samples: Sample[];
  /** Whether the process is still running. */
  alive(): boolean;
  /** Takes one sample now (nothing once the process is gone). */
  sample(): Sample | undefined;
  /** GET one endpoint (`/status`, `/metrics`); the text as it came. */
  get(path: string): Promise<string>;
  signal(name: NodeJS.Signals): void;
  /** Resolves once the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** VmRSS of `pid` in kB; undefined once it is gone. */
function rssKb(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] === undefined ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}

/** The open descriptors of `pid`, sockets apart from the rest (files, pipes, inotify, epoll). */
function descriptors(pid: number): Sample['fds'] | undefined {
  let names: string[];
  try {
    names = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  let sockets = 0;
  for (const name of names) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${name}`).startsWith('socket:')) sockets++;
    } catch {
      // closed between the listing and the read
    }
  }
  return { total: names.length, sockets, other: names.length - sockets };
}

/**
 * Starts `command` (the daemon) and waits for its endpoints' URL in its log. stdout and stderr go
 * whole to `<logBase>.stdout` and `<logBase>.stderr`.
 */
export async function startDaemonLife(
  index: number,
  command: readonly string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; logBase: string },
): Promise<DaemonLife> {
  const [program, ...args] = command;
  const child: ChildProcess = spawn(program as string, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: options.env,
    cwd: options.cwd,
  });
  const startedAt = Date.now();
  const stdoutFile = createWriteStream(`${options.logBase}.stdout`);
  const stderrFile = createWriteStream(`${options.logBase}.stderr`);
  child.stdout?.pipe(stdoutFile);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => {
      // Both files complete before anyone reads them.
      let open = 2;
      const done = () => {
        if (--open === 0) resolve({ code, signal });
      };
      stdoutFile.end(done);
      stderrFile.end(done);
    }),
  );
  const passes: PassLine[] = [];
  const applied: AppliedLine[] = [];
  let url: string | undefined;
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderrFile.write(chunk));
  if (child.stderr)
    onJsonLines(child.stderr, (entry) => {
      if (typeof entry['listen'] === 'string') url = entry['listen'];
      // The verdict line of each pass (a pass that fails also logs "pass failed: ...", without
      // a result, before its verdict).
      if (
        typeof entry['msg'] === 'string' &&
        entry['msg'].startsWith('pass ') &&
        typeof entry['result'] === 'string'
      ) {
        passes.push({
          result: entry['result'],
          applied: Number(entry['applied'] ?? 0),
          driftHealed: Number(entry['driftHealed'] ?? 0),
          durationMs: Number(entry['durationMs'] ?? 0),
          // Unknown (a line without them) reads as not synced.
          failed: Number(entry['failed'] ?? Number.NaN),
          invalid: Number(entry['invalid'] ?? Number.NaN),
          pending: Number(entry['pending'] ?? Number.NaN),
          at: Date.now(),
          // The line's time is the pass's end; its duration leaves the settle wait out.
          startedAt:
            Date.parse(String(entry['time'])) -
            Number(entry['durationMs'] ?? Number.NaN) -
            Number(entry['settleWaitMs'] ?? 0),
        });
      } else if (
        typeof entry['cause'] === 'string' &&
        typeof entry['env'] === 'string' &&
        typeof entry['msg'] === 'string' &&
        !entry['msg'].includes(' failed: ')
      ) {
        applied.push({
          org: String(entry['org']),
          env: entry['env'],
          action: String(entry['action']),
          cause: entry['cause'],
          at: Date.now(),
        });
      }
    });
  const pid = child.pid as number;
  const deadline = Date.now() + 60_000;
  // Set by the stderr handler above, which the loop below waits on.
  const listening = () => url;
  while (listening() === undefined) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await exited;
      throw new Error(
        `the daemon (life ${index}) exited before listening; see ${options.logBase}.stderr`,
      );
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the daemon (life ${index}) did not listen within 60 s`);
    }
    await sleep(50);
  }
  const base = listening() as string;
  const samples: Sample[] = [];
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    index,
    pid,
    startedAt,
    url: base,
    passes,
    applied,
    samples,
    alive,
    sample: () => {
      if (!alive()) return undefined;
      const rss = rssKb(pid);
      const fds = descriptors(pid);
      if (rss === undefined || fds === undefined) return undefined;
      const sample = { ageMs: Date.now() - startedAt, rssKb: rss, fds };
      samples.push(sample);
      return sample;
    },
    get: async (path) => {
      const response = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(10_000) });
      return response.text();
    },
    signal: (name) => {
      if (alive()) child.kill(name);
    },
    exited,
  };
}

/** The sum of a counter's series in a Prometheus text exposition (0 when it has none). */
export function counterSum(metrics: string, name: string): number {
  let sum = 0;
  for (const line of metrics.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) {
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (Number.isFinite(value)) sum += value;
    }
  }
  return sum;
}
