import { ConfigError, errorMessage } from '../runtime/errors.ts';

/** The state file could not be written: which file, why, and what to do. */
export class StateWriteError extends Error {
  override name = 'StateWriteError';
  readonly file: string;
  constructor(file: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.file = file;
  }
}

/** Another writer held the state file's lock for longer than --state-lock-timeout. */
export class StateLockTimeoutError extends StateWriteError {
  override name = 'StateLockTimeoutError';
}

/** What to do about a system error met writing the state file, by its code. */
const HINTS: readonly (readonly [readonly string[], string])[] = [
  [
    ['EACCES', 'EPERM', 'EROFS'],
    'make its directory writable by this user, or point --state (ENVSYNC_STATE) at a writable place',
  ],
  [
    ['ENOSPC', 'EDQUOT'],
    'free space on that disk (or raise the quota), or point --state (ENVSYNC_STATE) at another disk',
  ],
  [
    ['ENOTDIR', 'EEXIST', 'EISDIR'],
    'a part of its path is not what it should be (a file where a directory belongs, or the reverse): fix the path given to --state (ENVSYNC_STATE)',
  ],
];

/** Wraps whatever writing the state file threw into a StateWriteError that says what to do. */
export function stateWriteError(file: string, error: unknown): StateWriteError {
  if (error instanceof StateWriteError) return error;
  // It says what to do itself (a file that is not one, or of an older version, met at a merge).
  if (error instanceof ConfigError)
    return new StateWriteError(file, error.message, { cause: error });
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  const hint =
    HINTS.find(([codes]) => codes.includes(code))?.[1] ??
    'check that the path given to --state (ENVSYNC_STATE) can be written';
  const message = `cannot write the state file ${file}: ${errorMessage(error)}; ${hint}`;
  return new StateWriteError(file, message, { cause: error });
}
