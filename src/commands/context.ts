import type { Writable } from 'node:stream';

/** What a command gets from the process: its arguments and the outside world, passed in. */
export interface CommandContext {
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  /** The time, epoch ms (sync windows); `Date.now` unless a test passes its own. */
  readonly now?: (() => number) | undefined;
}

/** A command returns its exit code; it never calls process.exit itself. */
export type Command = (ctx: CommandContext) => Promise<number>;
