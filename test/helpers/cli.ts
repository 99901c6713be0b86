import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

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
