import { appendFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';

/** The repository root GitHub resolves annotation paths against. */
export async function repositoryRoot(cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (env['GITHUB_WORKSPACE']) return path.resolve(env['GITHUB_WORKSPACE']);
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (await stat(path.join(dir, '.git')).catch(() => undefined)) return dir;
    if (path.dirname(dir) === dir) return path.resolve(cwd);
  }
}

/** Maps a problem's file (relative to cwd, or absolute) to a path relative to the repo root. */
export function repoPathMapper(cwd: string, root: string): (file: string) => string {
  return (file) => path.relative(root, path.resolve(cwd, file)).split(path.sep).join('/');
}

/** Whether to print GitHub workflow commands: `--annotations`, else GITHUB_ACTIONS=true. */
export function annotationsWanted(flag: string | undefined, env: NodeJS.ProcessEnv): boolean {
  if (flag !== undefined) return flag === 'github';
  return env['GITHUB_ACTIONS'] === 'true';
}

/** Appends markdown to the step summary file (as `$GITHUB_STEP_SUMMARY` expects). */
export async function appendSummary(file: string, markdown: string): Promise<void> {
  await appendFile(file, markdown.endsWith('\n') ? `${markdown}\n` : `${markdown}\n\n`);
}

/** Writes annotation lines where GitHub reads them without spoiling machine-readable output. */
export function writeAnnotations(
  lines: readonly string[],
  output: string,
  stdout: Writable,
  stderr: Writable,
): void {
  if (lines.length === 0) return;
  (output === 'json' ? stderr : stdout).write(`${lines.join('\n')}\n`);
}
