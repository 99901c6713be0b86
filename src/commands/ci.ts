import path from 'node:path';
import type { Writable } from 'node:stream';
import type { Masker } from '../core/mask.ts';
import { ConfigError } from '../runtime/errors.ts';
import { SETTINGS } from '../config/settings-table.ts';
import { pickSettings, type ValuesOf } from '../config/setting.ts';
import * as fsPromises from 'node:fs/promises';

/** The CI outputs' settings: `--annotations` and `--summary-file`. */
export const CI_SETTINGS = pickSettings(SETTINGS, ['annotations', 'summaryFile']);
export type CiOptions = ValuesOf<typeof CI_SETTINGS>;

/** The repository root GitHub resolves annotation paths against. */
export async function repositoryRoot(cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (env['GITHUB_WORKSPACE']) return path.resolve(env['GITHUB_WORKSPACE']);
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (await fsPromises.stat(path.join(dir, '.git')).catch(() => undefined)) return dir;
    if (path.dirname(dir) === dir) return path.resolve(cwd);
  }
}

/** Maps a problem's file (relative to cwd, or absolute) to a path relative to the repo root. */
export function repoPathMapper(cwd: string, root: string): (file: string) => string {
  return (file) => path.relative(root, path.resolve(cwd, file)).split(path.sep).join('/');
}

/** Appends markdown to the step summary file (as `$GITHUB_STEP_SUMMARY` expects). */
export async function appendSummary(file: string, markdown: string): Promise<void> {
  await fsPromises.appendFile(file, markdown.endsWith('\n') ? `${markdown}\n` : `${markdown}\n\n`);
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

/** What a command reports to CI: its annotations and its markdown, each made only if wanted. */
export interface CiReport {
  annotations(toRepoPath: (file: string) => string): string[];
  markdown(): string;
}

/** Prints the annotations and appends the step summary, as the settings ask. */
export async function emitCiOutputs(
  where: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
  out: { readonly stdout: Writable; readonly stderr: Writable; readonly secrets: Masker },
  ci: CiOptions,
  output: string,
  report: CiReport,
): Promise<void> {
  if (ci.annotations === 'github') {
    const root = await repositoryRoot(where.cwd, where.env);
    writeAnnotations(
      report.annotations(repoPathMapper(where.cwd, root)),
      output,
      out.stdout,
      out.stderr,
    );
  }
  if (ci.summaryFile !== undefined) {
    const file = ci.summaryFile;
    const markdown = out.secrets.mask(report.markdown());
    await appendSummary(path.resolve(where.cwd, file), markdown).catch((error: unknown) => {
      throw new ConfigError(
        `--summary-file ${file}: cannot be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      );
    });
  }
}
