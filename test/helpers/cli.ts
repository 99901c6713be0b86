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

/** Runs a command to completion, capturing its output; killed and rejected after `timeoutMs`. */
export function runProcess(
  command: string,
  args: readonly string[],
  {
    env,
    cwd,
    timeoutMs = 60_000,
  }: { env: NodeJS.ProcessEnv; cwd?: string | undefined; timeoutMs?: number },
): Promise<CliResult> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`${command} ${args.join(' ')} did not exit within ${timeoutMs} ms\n${stderr}`),
      );
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
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

/**
 * Runs the real CLI in a child process with a clean environment plus `env`: for what only a
 * process shows (its exit code, its stdio, signals, Node's own reading of the environment).
 */
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

/** A stream that keeps what is written to it, as a pipe would (not a terminal). */
function captured(terminal = false): { stream: Writable & { isTTY: boolean }; text: () => string } {
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
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
/** Read by Node itself from the process's environment, not by envsync from the context's. */
const PROCESS_VARIABLES = ['NODE_OPTIONS', 'NODE_TLS_REJECT_UNAUTHORIZED', 'NODE_EXTRA_CA_CERTS'];

/**
 * What a run of these arguments would do in a process of its own that a run inside this one
 * cannot show; undefined when the in-process run is faithful.
 */
function notInProcess(
  args: readonly string[],
  env: Record<string, string>,
  endsBeforeStart: boolean,
): string | undefined {
  const command = args[0] ?? '';
  if (SIGNALLED.has(command) && !endsBeforeStart)
    return `envsync ${command} waits for the process's signals`;
  const variable = PROCESS_VARIABLES.find((name) => name in env);
  if (variable !== undefined) return `${variable} is read by Node from the process`;
  return undefined;
}

/** What of the process a command could change by mistake; compared before and after a run. */
function processState(): string {
  return JSON.stringify({
    signals: SIGNALS.map((signal) => process.listenerCount(signal)),
    exitCode: process.exitCode,
    cwd: process.cwd(),
  });
}

/**
 * Runs the CLI's `main` in this process, as `envsync` runs it in a child: the same arguments, a
 * clean environment plus `env`, the working directory, and output streams that are not
 * terminals (unless `terminal`); the same result (without `signal`). It saves a process start
 * (about a third of a second of CPU) for tests of what a command decides, prints and writes. Only for paths that
 * touch nothing process-wide: it refuses the others (see notInProcess), which stay with
 * `envsync`, and fails a run that leaves the process changed (signal handlers, exit code,
 * working directory). `run` and `emulator` install signal handlers once they start: they come
 * here only with `endsBeforeStart`, for a run that ends before that (a bad flag, `--help`).
 * `timeoutMs` cannot stop a run, only fail the test.
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
    /**
     * Output streams that say they are terminals (`isTTY`), all a command reads of a terminal:
     * for what it does on one with other settings. That a real terminal is seen as one is
     * shown by `inTerminal`.
     */
    terminal?: boolean;
    /** The time the command sees (sync windows), epoch ms; the real one when left out. */
    now?: () => number;
  } = {},
): Promise<CliResult> {
  const refused = notInProcess(args, env, endsBeforeStart);
  if (refused !== undefined)
    throw new Error(`envsyncInProcess: ${refused}; run it in a child process (envsync)`);
  const before = processState();
  const stdout = captured(terminal);
  const stderr = captured(terminal);
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `envsync ${args.join(' ')} did not end within ${timeoutMs} ms\n${stderr.text()}`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    const code = await Promise.race([
      main({
        argv: args,
        env: cleanEnv(env),
        cwd,
        stdout: stdout.stream,
        stderr: stderr.stream,
        ...(now === undefined ? {} : { now }),
      }),
      guard,
    ]);
    const after = processState();
    if (after !== before)
      throw new Error(`envsync ${args.join(' ')} changed the process: ${before} -> ${after}`);
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  } finally {
    clearTimeout(timer);
  }
}

/** A CLI child process still running: its output so far, its logs, and its end. */
export interface LiveCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** stderr's JSON log lines, parsed (other lines are skipped). */
  logs(): Record<string, unknown>[];
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The exit, or 'still running' if it has not come within `ms` (a guard, not a timing). */
  exitedWithin(
    ms: number,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'still running'>;
  /** The address `envsync run` logged for its endpoints. */
  listenUrl(timeoutMs?: number): Promise<string>;
  /** SIGKILLs it if it is still running, and waits for it to be gone. */
  kill(): Promise<void>;
}

/**
 * Starts the real CLI in a child process with a clean environment plus `env`, and returns at
 * once: for commands that run until stopped (`run`) or that a test signals.
 */
export function startEnvsync(
  args: readonly string[],
  { env = {}, cwd }: { env?: Record<string, string>; cwd?: string } = {},
): LiveCli {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const logs = () =>
    stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    logs,
    exited,
    async exitedWithin(ms) {
      let timer: NodeJS.Timeout | undefined;
      const guard = new Promise<'still running'>((resolve) => {
        timer = setTimeout(() => resolve('still running'), ms);
      });
      try {
        return await Promise.race([exited, guard]);
      } finally {
        clearTimeout(timer);
      }
    },
    async listenUrl(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const url = logs().find((line) => typeof line['listen'] === 'string')?.['listen'];
        if (typeof url === 'string') return url;
        if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline)
          throw new Error(`envsync ${args[0] ?? ''} logged no endpoints address\n${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** Runs the CLI in a pseudo-terminal (`script`), as a person's shell would; returns the screen. */
export function inTerminal(args: string[], env: Record<string, string> = {}): Promise<string> {
  const command = [process.execPath, CLI, ...args].map((part) => `'${part}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    env: { PATH: process.env['PATH'] ?? '', TERM: 'xterm', ...env },
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve) => child.once('close', () => resolve(output)));
}
