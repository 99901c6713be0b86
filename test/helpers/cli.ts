import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { main } from '../../src/main.ts';
import { CLI } from './entry.ts';

export interface CliResult {
  readonly code: number | null;
  readonly signal?: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null };

/** `promise`, or what `late` returns (or throws) when it has not settled within `ms`. */
async function within<T, U>(promise: Promise<T>, ms: number, late: () => U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<U>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(late());
      } catch (error) {
        reject(error);
      }
    }, ms);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** Keeps what a child writes, and resolves on its exit (rejects if it cannot start). */
export function watchChild(child: ChildProcess) {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  return { stdout: () => stdout, stderr: () => stderr, exited };
}

/** Runs a command to completion, capturing its output; killed and rejected after `timeoutMs`. */
export async function runProcess(
  command: string,
  args: readonly string[],
  {
    env,
    cwd,
    timeoutMs = 60_000,
  }: { env: NodeJS.ProcessEnv; cwd?: string | undefined; timeoutMs?: number },
): Promise<CliResult> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = watchChild(child);
  const exit = await within(output.exited, timeoutMs, () => {
    child.kill('SIGKILL');
    throw new Error(
      `${command} ${args.join(' ')} did not exit within ${timeoutMs} ms\n${output.stderr()}`,
    );
  });
  return { ...exit, stdout: output.stdout(), stderr: output.stderr() };
}

/**
 * npm and an installed command as a user's shell runs them: this Node first on PATH, and none of
 * the variables `npm run` sets for its scripts (a prefix among them), which would steer a nested
 * npm.
 */
export const SHELL_ENV: Record<string, string> = Object.fromEntries(
  Object.entries({
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`,
  }).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined &&
      !/^npm_(config_|package_|lifecycle_|node_|execpath)/i.test(entry[0]),
  ),
);

/** The environment a CLI under test gets: PATH and HOME, plus the test's own variables. */
function cleanEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env };
}

/** Runs the real CLI in a child process: for what only a process shows (exit, stdio, signals). */
export function envsync(
  args: readonly string[],
  {
    env = {},
    cwd,
    timeoutMs = 60_000,
  }: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return runProcess(process.execPath, [CLI, ...args], { cwd, timeoutMs, env: cleanEnv(env) });
}

/** A stream that keeps what is written to it, as a pipe would (a terminal with `terminal`). */
function captured(terminal: boolean): {
  stream: Writable & { isTTY: boolean };
  text: () => string;
} {
  const decoder = new StringDecoder('utf8');
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += decoder.write(chunk);
      done();
    },
  });
  return { stream: Object.assign(stream, { isTTY: terminal }), text: () => text + decoder.end() };
}

/** Commands that wait for the process's signals once they start (src/commands/signals.ts). */
const SIGNALLED = new Set(['run', 'emulator']);
/** Read by Node itself from the process's environment, not by envsync from the context's. */
const PROCESS_VARIABLES = ['NODE_OPTIONS', 'NODE_TLS_REJECT_UNAUTHORIZED', 'NODE_EXTRA_CA_CERTS'];

/** What of the process a command could change by mistake; compared before and after a run. */
function processState(): string {
  return JSON.stringify({
    signals: ['SIGTERM', 'SIGINT', 'SIGHUP'].map((signal) => process.listenerCount(signal)),
    exitCode: process.exitCode,
    cwd: process.cwd(),
  });
}

/**
 * Runs the CLI's `main` in this process as `envsync` runs it in a child (same arguments, clean
 * environment, working directory, streams that are not terminals unless `terminal`), which saves
 * a process start. It refuses what only a process of its own shows (a command that waits for
 * signals, unless it `endsBeforeStart`; a variable Node reads), and fails a run that leaves the
 * process changed. `timeoutMs` cannot stop a run, only fail the test.
 */
export async function envsyncInProcess(
  args: readonly string[],
  {
    env = {},
    cwd = process.cwd(),
    timeoutMs = 60_000,
    endsBeforeStart = false,
    terminal = false,
    now,
  }: {
    env?: Record<string, string>;
    cwd?: string;
    timeoutMs?: number;
    endsBeforeStart?: boolean;
    /** Output streams that say they are terminals (`isTTY`); a real one is `inTerminal`'s. */
    terminal?: boolean;
    /** The time the command sees (sync windows), epoch ms; the real one when left out. */
    now?: () => number;
  } = {},
): Promise<CliResult> {
  const command = args[0] ?? '';
  const variable = PROCESS_VARIABLES.find((name) => name in env);
  const refused =
    SIGNALLED.has(command) && !endsBeforeStart
      ? `envsync ${command} waits for the process's signals`
      : variable === undefined
        ? undefined
        : `${variable} is read by Node from the process`;
  if (refused !== undefined)
    throw new Error(`envsyncInProcess: ${refused}; run it in a child process (envsync)`);
  const before = processState();
  const stdout = captured(terminal);
  const stderr = captured(terminal);
  const run = main({
    argv: args,
    env: cleanEnv(env),
    cwd,
    stdout: stdout.stream,
    stderr: stderr.stream,
    ...(now === undefined ? {} : { now }),
  });
  const code = await within(run, timeoutMs, () => {
    throw new Error(
      `envsync ${args.join(' ')} did not end within ${timeoutMs} ms\n${stderr.text()}`,
    );
  });
  const after = processState();
  if (after !== before)
    throw new Error(`envsync ${args.join(' ')} changed the process: ${before} -> ${after}`);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** A CLI child process still running: its output so far, its logs, and its end. */
export interface LiveCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** stderr's JSON log lines, parsed (other lines are skipped). */
  logs(): Record<string, unknown>[];
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  /** The exit, or 'still running' if it has not come within `ms` (a guard, not a timing). */
  exitedWithin(ms: number): Promise<Exit | 'still running'>;
  /** The address `envsync run` logged for its endpoints. */
  listenUrl(timeoutMs?: number): Promise<string>;
  /** SIGKILLs it if it is still running, and waits for it to be gone. */
  kill(): Promise<void>;
}

/** Starts the real CLI in a child process and returns at once: for `run`, or what a test signals. */
export function startEnvsync(
  args: readonly string[],
  { env = {}, cwd }: { env?: Record<string, string>; cwd?: string } = {},
): LiveCli {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { stdout, stderr, exited } = watchChild(child);
  const running = () => child.exitCode === null && child.signalCode === null;
  const logs = () =>
    stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    child,
    stdout,
    stderr,
    logs,
    exited,
    exitedWithin: (ms) => within(exited, ms, () => 'still running' as const),
    async listenUrl(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const url = logs().find((line) => typeof line['listen'] === 'string')?.['listen'];
        if (typeof url === 'string') return url;
        if (!running() || Date.now() > deadline)
          throw new Error(`envsync ${args[0] ?? ''} logged no endpoints address\n${stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async kill() {
      if (running()) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** Runs the CLI in a pseudo-terminal (`script`), as a person's shell would; returns the screen. */
export async function inTerminal(
  args: string[],
  env: Record<string, string> = {},
): Promise<string> {
  const command = [process.execPath, CLI, ...args].map((part) => `'${part}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { PATH: process.env['PATH'] ?? '', TERM: 'xterm', ...env },
  });
  const { stdout, exited } = watchChild(child);
  await exited;
  return stdout();
}
