import type { Logger } from 'pino';
import { Redactor, type Scrub } from '../core/redact.ts';
import { chooseLogFormat, chooseLogLevel, type LogFormatSetting } from '../core/log-line.ts';
import { createLogger, redactingStream, type LogOutput } from '../runtime/log.ts';
import type { CommandContext } from './context.ts';
import type * as Help from './help.ts';

/** A command's output streams and logger, scrubbing every secret it learns from all three. */
export interface CommandIo {
  readonly stdout: CommandContext['stdout'];
  readonly stderr: CommandContext['stderr'];
  readonly logger: Logger;
  /** From now on, `secret` never reaches the output. */
  readonly addSecret: (secret: string) => void;
  /**
   * Scrubs every secret learnt so far: the redaction point for every sink that does not write
   * through `stdout`/`stderr` (files, HTTP answers).
   */
  readonly scrub: Scrub;
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

/** How `ctx`'s logs look and at which level (see core/log-line.ts for the rules). */
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
  const redactor = new Redactor();
  const stdout = redactingStream(ctx.stdout, redactor.scrub);
  const stderr = redactingStream(ctx.stderr, redactor.scrub);
  const { level, output } = logOutput(ctx, settings, { oneShot: command !== 'run' });
  return {
    stdout,
    stderr,
    logger: createLogger(level, stderr, { command }, output),
    addSecret: (secret) => redactor.add(secret),
    scrub: redactor.scrub,
  };
}

/** The help module, loaded only when help is asked for (start-up matters to a CI step). */
export function help(): Promise<typeof Help> {
  return import('./help.ts');
}
