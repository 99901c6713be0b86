import type { Writable } from 'node:stream';
import type { Masker } from '../core/mask.ts';

/** What a command gets from the process: its arguments and the outside world, passed in. */
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

/** A command returns its exit code; it never calls process.exit itself. */
export type Command = (ctx: CommandContext) => Promise<number>;
