/** The state file could not be written: which file, the system's error, and what to do. */
export class StateWriteError extends Error {
  override name = 'StateWriteError';
  readonly file: string;
  /** The system's error code (EACCES, ENOSPC, ...), when there is one. */
  readonly code: string | undefined;
  constructor(file: string, message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.file = file;
    this.code = options.code;
  }
}

/** Another writer held the state file's lock for longer than --state-lock-timeout. */
export class StateLockTimeoutError extends StateWriteError {
  override name = 'StateLockTimeoutError';
}

/** What to do about a system error met writing the state file, by its code. */
function hintFor(code: string | undefined): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return 'make its directory writable by this user, or point --state (ENVSYNC_STATE) at a writable place';
    case 'ENOSPC':
    case 'EDQUOT':
      return 'free space on that disk (or raise the quota), or point --state (ENVSYNC_STATE) at another disk';
    case 'ENOTDIR':
    case 'EEXIST':
    case 'EISDIR':
      return 'a part of its path is not what it should be (a file where a directory belongs, or the reverse): fix the path given to --state (ENVSYNC_STATE)';
    default:
      return 'check that the path given to --state (ENVSYNC_STATE) can be written';
  }
}

/** Wraps whatever writing the state file threw into a StateWriteError that says what to do. */
export function stateWriteError(file: string, error: unknown): StateWriteError {
  if (error instanceof StateWriteError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const reason = error instanceof Error ? error.message : String(error);
  return new StateWriteError(
    file,
    `cannot write the state file ${file}: ${reason}; ${hintFor(code)}`,
    code === undefined ? { cause: error } : { code, cause: error },
  );
}

/** A duration as a person writes it: 500ms, 30s, 2.5s. */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${Number((ms / 1000).toFixed(3))}s`;
}
