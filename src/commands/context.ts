/** What a command gets from the process (passed in), and the logger it makes of it. */
import type { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { Flags } from '../config/setting.ts';
import type { Masker } from '../core/mask.ts';
import type { Settings } from '../config/settings.ts';
import { chooseLogFormat, chooseLogLevel } from '../runtime/log-line.ts';
import { createLogger, type LogOutput } from '../runtime/log.ts';

export interface CommandContext {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** stdout and stderr mask `secrets` in everything written to them (main.ts makes them so). */
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  /** The secrets the command learns (its tokens, ...): every sink masks them (core/mask.ts). */
  readonly secrets: Masker;
  /** The time, epoch ms (sync windows); `Date.now` unless a test passes its own. */
  readonly now?: (() => number) | undefined;
}

/** A command: main.ts parses its flags; it returns its exit code and never exits the process. */
export type Command = (
  ctx: CommandContext,
  flags: Flags,
  operands: readonly string[],
) => Promise<number>;

/** Colour for a terminal, unless NO_COLOR says otherwise (never into a pipe or a file). */
export function wantsColor(ctx: CommandContext): boolean {
  return Boolean(ctx.stdout.isTTY) && !('NO_COLOR' in ctx.env);
}

/** What decides how a command logs: a level only when one was given. */
type LogSettings = Pick<Settings, 'logLevel' | 'logFormat'>;

/** How `ctx`'s logs look and at which level (runtime/log-line.ts has the rules). */
export function logOutput(
  ctx: Pick<CommandContext, 'stderr' | 'env'>,
  { logLevel, logFormat }: LogSettings,
  { oneShot }: { readonly oneShot: boolean },
): { readonly level: string; readonly output: LogOutput } {
  const terminal = Boolean(ctx.stderr.isTTY);
  const format = chooseLogFormat(logFormat, terminal);
  return {
    level: chooseLogLevel(logLevel, format, { oneShot }),
    output: { format, color: terminal && !('NO_COLOR' in ctx.env) },
  };
}

/** The logger of `command`; a one-shot command prints a report: its JSON logs default to warn. */
export function commandLogger(ctx: CommandContext, settings: LogSettings, command: string): Logger {
  const { level, output } = logOutput(ctx, settings, { oneShot: command !== 'run' });
  return createLogger(level, ctx.stderr, { command }, output);
}

/** Phase timings at debug level (docs/output.md); nothing is measured unless debug is on. */
export function phaseTimer(logger: Logger) {
  return (what: string, fields: () => Record<string, unknown> = () => ({})): void => {
    if (!logger.isLevelEnabled('debug')) return;
    const { user, system } = process.cpuUsage();
    logger.debug(
      {
        ...fields(),
        atMs: Math.round(performance.now()),
        cpuMs: Math.round((user + system) / 1000),
        rssMb: Math.round(process.memoryUsage.rss() / 1e6),
      },
      what,
    );
  };
}
