import type { Logger } from 'pino';
import type { Masker } from '../core/mask.ts';
import { chooseLogFormat, chooseLogLevel, type LogFormatSetting } from '../runtime/log-line.ts';
import { createLogger, type LogOutput } from '../runtime/log.ts';
import type { CommandContext } from './context.ts';

/** A command's output streams and logger, each masking every secret the command learns. */
export interface CommandIo {
  readonly stdout: CommandContext['stdout'];
  readonly stderr: CommandContext['stderr'];
  readonly logger: Logger;
  /** The secrets: a sink that does not write through the streams (a file) masks them itself. */
  readonly secrets: Masker;
}

/** Colour for a terminal, unless NO_COLOR says otherwise (never into a pipe or a file). */
export function wantsColor(ctx: CommandContext): boolean {
  return Boolean(ctx.stdout.isTTY) && !('NO_COLOR' in ctx.env);
}

/** What decides how a command logs: the settings as given (a level only when one was given). */
export interface LogSettings {
  readonly logLevel: string | undefined;
  readonly logFormat: LogFormatSetting;
}

/** How `ctx`'s logs look and at which level (see runtime/log-line.ts for the rules). */
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

/**
 * The streams and logger of `command`. A one-shot command (every one but `run`) prints its
 * report on stdout, so its JSON logs default to warn.
 */
export function commandIo(ctx: CommandContext, settings: LogSettings, command: string): CommandIo {
  const { level, output } = logOutput(ctx, settings, { oneShot: command !== 'run' });
  return {
    stdout: ctx.stdout,
    stderr: ctx.stderr,
    logger: createLogger(level, ctx.stderr, { command }, output),
    secrets: ctx.secrets,
  };
}
