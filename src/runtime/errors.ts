/** Errors with context. Only `main` (src/main.ts) turns them into exit codes. */

/** A bad command line: an unknown command or flag, a value that does not parse. Exit code 1. */
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

/** An org with no token (`--token-dir`, no default): it fails, the others go on. */
export class NoTokenError extends ConfigError {
  override name = 'NoTokenError';
}

/** The message of anything thrown, without a stack. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
