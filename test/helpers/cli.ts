import { spawn, type ChildProcess } from 'node:child_process';
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

/** Runs the real CLI in a child process with a clean environment plus `env`. */
export function envsync(
  args: readonly string[],
  {
    env = {},
    cwd,
    timeoutMs = 60_000,
  }: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return runProcess(process.execPath, [CLI, ...args], {
    cwd,
    timeoutMs,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
  });
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
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
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
