/** Errors with context. Only `main` (src/main.ts) turns them into exit codes; nothing exits the process. */

/** Bad command line: unknown command or flag, a value that does not parse. Exit code 1. */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly usage: string | undefined;
  constructor(message: string, usage?: string) {
    super(message);
    this.usage = usage;
  }
}

/** A configuration problem (flags, env, config file) that stops the command before it starts. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Returns the message of anything thrown, without a stack. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * An org with no token to send its requests with (`--token-dir`, and no default token): that org
 * fails, before any request of its is sent, and the others go on.
 */
export class NoTokenError extends ConfigError {
  override name = 'NoTokenError';
}
