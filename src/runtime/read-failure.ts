import type { Stats } from 'node:fs';
import { ConfigError } from './errors.ts';

/**
 * Why a file was not read, and how the message says it (read-file.ts reads), and the limits of
 * each kind of file envsync reads.
 */

const KiB = 1024;
const MiB = 1024 * KiB;

/** The most bytes read of each kind of file (manifests: --max-file-bytes, 1 MiB by default). */
export const READ_LIMITS = {
  /** A token is a line of a few dozen to a few thousand characters (a JWT). */
  token: 64 * KiB,
  /** The webhook's and the notifications' secrets. */
  secret: 64 * KiB,
  /** The config file: a few dozen settings. */
  config: 1 * MiB,
  /** --ca-file: a whole system bundle is about 200 KiB. */
  caFile: 4 * MiB,
  /** A state file's lock holds one line: a pid, a host name and a time. */
  stateLock: 64 * KiB,
  /** The state file, a saved plan, the emulator's --data file: large at 100,000s of environments. */
  state: 256 * MiB,
  savedPlan: 256 * MiB,
  emulatorData: 256 * MiB,
} as const;

/** How long a read may take when the command says nothing else: --deadline's default. */
export const DEFAULT_READ_TIMEOUT_MS = 5 * 60_000;

/** What a path that is not a regular file is, as messages say it. */
export function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isDirectory()) return 'a directory';
  return 'a special file';
}

/** Why a file was not read. */
export type ReadFailure =
  /** `code`: the system's (ENOENT, EACCES, ...). */
  | { readonly kind: 'error'; readonly code: string }
  | { readonly kind: 'not-regular'; readonly what: string }
  | { readonly kind: 'too-large'; readonly maxBytes: number }
  | { readonly kind: 'abandoned'; readonly why: string };

/** A size as people write it: 64 KiB, 256 MiB, 1000 bytes. */
export function formatBytes(bytes: number): string {
  if (bytes >= MiB && bytes % MiB === 0) return `${bytes / MiB} MiB`;
  if (bytes >= KiB && bytes % KiB === 0) return `${bytes / KiB} KiB`;
  return `${bytes} bytes`;
}

/** A duration as the flags take it: 5m, 30s, 200ms. */
export function formatMs(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1000 && ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** How to name a file and what to do about it, in the messages of a read that failed. */
export interface ReadWords {
  /** What the file is and its path, as the message starts: `token file secrets/t`. */
  readonly subject: string;
  /** What to do when it is not a regular file: `point --token-file at a file`. */
  readonly fix: string;
  /** The kind of file the limit is for: `for a token file`; or the flag that sets it. */
  readonly limit: string;
}

/** The message of a failed read: `token file t is a FIFO (named pipe), not a regular file: ...`. */
export function failureMessage(failure: ReadFailure, words: ReadWords): string {
  const { subject, fix, limit } = words;
  switch (failure.kind) {
    case 'error':
      return `${subject} cannot be read (${failure.code})`;
    case 'not-regular':
      return `${subject} is ${failure.what}, not a regular file: ${fix}`;
    case 'too-large':
      return `${subject} is larger than the limit of ${formatBytes(failure.maxBytes)} ${limit}`;
    case 'abandoned':
      break;
  }
  return `${subject} could not be read: ${failure.why}`;
}

/** A read that failed: a configuration error (exit 1), with why, for callers that tell apart. */
export class FileReadError extends ConfigError {
  override name = 'FileReadError';
  readonly failure: ReadFailure;
  /** The system's code when there is one (ENOENT, ...). */
  readonly code: string | undefined;
  constructor(failure: ReadFailure, words: ReadWords) {
    super(failureMessage(failure, words));
    this.failure = failure;
    this.code = failure.kind === 'error' ? failure.code : undefined;
  }
}
