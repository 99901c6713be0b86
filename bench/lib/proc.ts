/**
 * Child processes measured from outside: wall time, peak RSS (GNU time's %M, i.e. the kernel's
 * ru_maxrss, or VmHWM polled from /proc when /usr/bin/time is missing) and CPU time from /proc.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
let cli = path.join(REPO, 'src', 'cli.ts');

/** The envsync entry the benchmark runs (`--cli`: another checkout, to compare a change). */
export function useCli(file: string): void {
  cli = path.resolve(file);
}

export function cliPath(): string {
  return cli;
}
const GNU_TIME = '/usr/bin/time';

/** How peak RSS is measured for one-shot processes. */
export const RSS_METHOD: 'gnu-time' | 'vmhwm-poll' = existsSync(GNU_TIME)
  ? 'gnu-time'
  : 'vmhwm-poll';

/**
 * The node flags of the CLI's shebang (`#!/usr/bin/env -S node --max-semi-space-size=16`), so the
 * benchmark runs envsync exactly as users' `envsync ...` does, with this Node.
 */
export function cliNodeFlags(): string[] {
  const first = readFileSync(cli, 'utf8').split('\n', 1)[0] ?? '';
  const match = /^#!\S*env\s+-S\s+node\s*(.*)$/.exec(first);
  return match?.[1] ? match[1].split(/\s+/).filter((f) => f !== '') : [];
}

/** The command line that runs the envsync CLI. */
export function envsyncCommand(args: readonly string[]): string[] {
  return [process.execPath, ...cliNodeFlags(), cli, ...args];
}

export interface Measured {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly wallMs: number;
  /** Peak resident set size in bytes; null when it could not be read. */
  readonly peakRssBytes: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  readonly timeoutMs?: number;
}

/** Reads a figure of a live process's /proc status in bytes: `VmHWM` (peak RSS) by default. */
export function vmHwmBytes(pid: number, field = 'VmHWM'): number | null {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return match?.[1] === undefined ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

/** VmRSS (resident now, not the peak) of a live process, in bytes. */
export async function vmRssBytes(pid: number): Promise<number | null> {
  return vmHwmBytes(pid, 'VmRSS');
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) a live process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat (utime, stime) are at 11 and 12 after the name and state.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Runs `command` to completion and measures it. */
export async function measure(
  command: readonly string[],
  options: RunOptions = {},
): Promise<Measured> {
  const [program, ...args] = command;
  if (program === undefined) throw new Error('measure: empty command');
  const scratch =
    RSS_METHOD === 'gnu-time' ? await mkdtemp(path.join(tmpdir(), 'bench-time-')) : undefined;
  const timeFile = scratch === undefined ? undefined : path.join(scratch, 'rss');
  const argv =
    timeFile === undefined
      ? { file: program, args }
      : { file: GNU_TIME, args: ['-f', '%M', '-o', timeFile, program, ...args] };
  const started = performance.now();
  const child = spawn(argv.file, argv.args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: options.env ?? process.env,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let polled: number | null = null;
  const poll =
    timeFile === undefined && child.pid !== undefined
      ? setInterval(() => {
          const now = vmHwmBytes(child.pid as number);
          if (now !== null) polled = Math.max(polled ?? 0, now);
        }, 10)
      : undefined;
  const timeout = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 600_000);
  const { code, signal } = await new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
  }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c, s) => resolve({ code: c, signal: s }));
  });
  const wallMs = performance.now() - started;
  clearTimeout(timeout);
  clearInterval(poll);
  let peakRssBytes: number | null = polled;
  if (timeFile !== undefined) {
    const text = await readFile(timeFile, 'utf8').catch(() => '');
    // GNU time prefixes "Command exited with non-zero status N" when the command fails.
    const last = text.trim().split('\n').at(-1) ?? '';
    peakRssBytes = /^\d+$/.test(last) ? Number(last) * 1024 : null;
    await rm(scratch as string, { recursive: true, force: true });
  }
  return { code, signal, wallMs, peakRssBytes, stdout, stderr };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The p-th percentile (0..100), nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}

/**
 * Calls `onEntry` with each line of `stream` that is a JSON object (envsync's log lines), in
 * order; other lines are skipped. The stream's other listeners (a tail, a file) still see it all.
 */
export function onJsonLines(
  stream: NodeJS.ReadableStream,
  onEntry: (entry: Record<string, unknown>) => void,
): void {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line: string) => {
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof entry === 'object' && entry !== null) onEntry(entry as Record<string, unknown>);
  });
}

/**
 * Stops a daemon the bench started: SIGTERM if it still runs, SIGKILL if it has not exited
 * within `killAfterMs`; resolves once `exited` does.
 */
export async function stopChild(
  child: ChildProcess,
  exited: Promise<unknown>,
  killAfterMs = 30_000,
): Promise<void> {
  if (child.exitCode === null) child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  try {
    await exited;
  } finally {
    clearTimeout(timer);
  }
}
