/** What validate, plan and sync report to CI: GitHub annotations and the step summary. */
import * as fsPromises from 'node:fs/promises';
import path from 'node:path';
import { oneOf, text } from '../config/parsers.ts';
import { ONE_SHOT, type SettingsTable, type ValuesOf } from '../config/setting.ts';
import { escapeCommandData as data, escapeCommandProperty as property } from '../core/escape.ts';
import { saidOnce, type ProblemReport, type RunReport } from '../core/report.ts';
import { ConfigError } from '../runtime/errors.ts';
import type { CommandContext } from './context.ts';

export const CI_SETTINGS = {
  annotations: {
    flag: '--annotations MODE',
    envRead: {
      read: (value: string) => (value === 'true' ? 'github' : undefined),
      note: 'true gives github',
    },
    env: 'GITHUB_ACTIONS',
    commands: ONE_SHOT,
    group: 'output',
    help: 'github: also print each problem and failure as a GitHub workflow command; none: do not',
    parse: oneOf(['github', 'none']),
    default: 'none',
  },
  summaryFile: {
    flag: '--summary-file PATH',
    env: 'GITHUB_STEP_SUMMARY',
    commands: ONE_SHOT,
    group: 'output',
    help: 'append the markdown report to PATH (a GitHub step summary)',
    parse: text,
  },
} as const satisfies SettingsTable;

export type CiOptions = ValuesOf<typeof CI_SETTINGS>;

/** One `::error file=...` per manifest problem, its file relative to the repository root. */
export function problemAnnotations(
  problems: readonly ProblemReport[],
  toRepoPath: (file: string) => string,
): string[] {
  return problems.map((problem) => {
    const message = problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`;
    return `::error file=${property(toRepoPath(problem.file))},line=${problem.line},col=${problem.column},title=${property('envsync: invalid manifest')}::${data(message)}`;
  });
}

/** Annotations for a whole run: manifest problems, then failed orgs and changes. */
export function runAnnotations(report: RunReport, toRepoPath: (file: string) => string): string[] {
  const problems = [...report.errors, ...report.orgs.flatMap((org) => org.errors)];
  const lines = problemAnnotations(problems, toRepoPath);
  const { failure } = report;
  if (failure !== undefined) {
    lines.push(
      `::error title=${property('envsync: every org failed')}::${data(`${failure.message}. ${failure.hint}`)}`,
    );
  }
  for (const org of report.orgs) {
    if (org.error !== undefined && !saidOnce(failure, org))
      lines.push(`::error title=${property(`envsync: org ${org.org} failed`)}::${data(org.error)}`);
    for (const change of org.changes) {
      if (change.result === 'failed' || change.result === 'not-converged') {
        const kind = change.result === 'failed' ? 'error' : 'warning';
        lines.push(
          `::${kind} title=${property(`envsync: ${org.org}/${change.name} ${change.result}`)}::${data(change.error ?? change.result)}`,
        );
      }
    }
  }
  return lines;
}

/** The repository root GitHub resolves annotation paths against. */
async function repositoryRoot(cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (env['GITHUB_WORKSPACE']) return path.resolve(env['GITHUB_WORKSPACE']);
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (await fsPromises.stat(path.join(dir, '.git')).catch(() => undefined)) return dir;
    if (path.dirname(dir) === dir) return path.resolve(cwd);
  }
}

/**
 * Prints the annotations (on stderr under --output json, so that stdout stays JSON) and appends
 * the markdown to the step summary file, as the flags ask; `report` makes each only if wanted.
 */
export async function emitCiOutputs(
  ctx: CommandContext,
  { annotations, summaryFile }: CiOptions,
  output: string,
  report: { annotations(toRepoPath: (file: string) => string): string[]; markdown(): string },
): Promise<void> {
  if (annotations === 'github') {
    const root = await repositoryRoot(ctx.cwd, ctx.env);
    const toRepoPath = (file: string) =>
      path.relative(root, path.resolve(ctx.cwd, file)).split(path.sep).join('/');
    const lines = report.annotations(toRepoPath);
    if (lines.length > 0)
      (output === 'json' ? ctx.stderr : ctx.stdout).write(`${lines.join('\n')}\n`);
  }
  if (summaryFile !== undefined) {
    const markdown = ctx.secrets.mask(report.markdown());
    // A blank line after it, as $GITHUB_STEP_SUMMARY expects of each step's part.
    const part = markdown.endsWith('\n') ? `${markdown}\n` : `${markdown}\n\n`;
    const file = path.resolve(ctx.cwd, summaryFile);
    await fsPromises.appendFile(file, part).catch((error: unknown) => {
      throw new ConfigError(
        `--summary-file ${summaryFile}: cannot be written (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      );
    });
  }
}
