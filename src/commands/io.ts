import type { Logger } from 'pino';
import { Redactor, type Scrub } from '../core/redact.ts';
import { createLogger, redactingStream } from '../log.ts';
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

/** The streams and logger of `command`, at `level`; pretty logs only when asked (a terminal). */
export function commandIo(
  ctx: CommandContext,
  level: string,
  command: string,
  { pretty = false }: { pretty?: boolean } = {},
): CommandIo {
  const redactor = new Redactor();
  const stdout = redactingStream(ctx.stdout, redactor.scrub);
  const stderr = redactingStream(ctx.stderr, redactor.scrub);
  return {
    stdout,
    stderr,
    logger: createLogger(level, stderr, { command }, { pretty }),
    addSecret: (secret) => redactor.add(secret),
    scrub: redactor.scrub,
  };
}

/** The help module, loaded only when help is asked for (start-up matters to a CI step). */
export function help(): Promise<typeof Help> {
  return import('./help.ts');
}
