/**
 * The one way envsync reads a file: a regular one only, opened with O_NONBLOCK (a FIFO nobody
 * writes to returns at once) and asked what it is by its handle, at most `maxBytes + 1` bytes.
 */
import * as Fs from 'node:fs';
import * as FsPromises from 'node:fs/promises';
import { ConfigError } from './errors.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

/** The most bytes read of each kind of file (manifests: --max-file-bytes). */
export const READ_LIMITS = {
  token: 64 * KiB,
  secret: 64 * KiB,
  config: MiB,
  caFile: 4 * MiB,
  stateLock: 64 * KiB,
  state: 256 * MiB,
  savedPlan: 256 * MiB,
  emulatorData: 256 * MiB,
} as const;

/** Why a file was not read (`code`: the system's, ENOENT, EACCES, ...). */
export type ReadFailure =
  | { readonly kind: 'error'; readonly code: string }
  | { readonly kind: 'not-regular'; readonly what: string }
  | { readonly kind: 'too-large'; readonly maxBytes: number }
  | { readonly kind: 'abandoned'; readonly why: string };

/** What a path that is not a regular file is, as messages say it. */
export function kindOf(stats: Fs.Stats): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return stats.isDirectory() ? 'a directory' : 'a special file';
}

/** A failed read's words: `token file t`, `point --token-file at a file`, `for a token file`. */
export type ReadWords = { readonly subject: string; readonly fix: string; readonly limit: string };

function inUnits(bytes: number): string {
  if (bytes % MiB === 0) return `${bytes / MiB} MiB`;
  return bytes % KiB === 0 ? `${bytes / KiB} KiB` : `${bytes} bytes`;
}

/** A read that failed: a configuration error (exit 1) that names the file and what to do. */
export class FileReadError extends ConfigError {
  override name = 'FileReadError';
  readonly failure: ReadFailure;
  /** The system's code when there is one (ENOENT, ...). */
  readonly code: string | undefined;
  constructor(failure: ReadFailure, { subject, fix, limit }: ReadWords) {
    super(
      failure.kind === 'error'
        ? `${subject} cannot be read (${failure.code})`
        : failure.kind === 'not-regular'
          ? `${subject} is ${failure.what}, not a regular file: ${fix}`
          : failure.kind === 'too-large'
            ? `${subject} is larger than the limit of ${inUnits(failure.maxBytes)} ${limit}`
            : `${subject} could not be read: ${failure.why}`,
    );
    this.failure = failure;
    this.code = failure.kind === 'error' ? failure.code : undefined;
  }
}

/** The system's code of a failed call (ENOENT, EACCES, ...), or what was thrown. */
export const codeOf = (error: unknown) =>
  (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);

/** Why an open failed: a socket cannot be opened at all (ENXIO), so what is there is asked. */
const openFailure = (error: unknown, stats: Fs.Stats | undefined): ReadFailure =>
  stats !== undefined && !stats.isFile()
    ? { kind: 'not-regular', what: kindOf(stats) }
    : { kind: 'error', code: codeOf(error) };

/** Read only, and never wait for a FIFO's writer. */
const FLAGS = Fs.constants.O_RDONLY | Fs.constants.O_NONBLOCK;

/** `buffer`, or a larger one when `length` fills it, from `size` + 1 up to the limit + 1. */
function room(buffer: Buffer | undefined, length: number, maxBytes: number, size = 0): Buffer {
  if (buffer !== undefined && length < buffer.length) return buffer;
  const wanted = Math.max(size + 1, 2 * (buffer?.length ?? 0));
  const bigger = Buffer.allocUnsafe(Math.min(wanted, maxBytes + 1));
  buffer?.copy(bigger, 0, 0, length);
  return bigger;
}

/** Reads a file synchronously, with no time bound: manifests, small and read by the thousand. */
export function readRegularFileSync(file: string, maxBytes: number): Buffer | ReadFailure {
  let fd: number;
  try {
    fd = Fs.openSync(file, FLAGS);
  } catch (error) {
    let stats: Fs.Stats | undefined;
    try {
      if (codeOf(error) !== 'ENOENT') stats = Fs.statSync(file);
    } catch {
      // nothing more is known of it
    }
    return openFailure(error, stats);
  }
  try {
    const info = Fs.fstatSync(fd);
    if (!info.isFile()) return openFailure(undefined, info);
    let buffer = room(undefined, 0, maxBytes, info.size);
    let length = 0;
    for (let got = -1; got !== 0 && length <= maxBytes; length += got) {
      buffer = room(buffer, length, maxBytes);
      got = Fs.readSync(fd, buffer, length, buffer.length - length, length);
    }
    return length > maxBytes ? { kind: 'too-large', maxBytes } : buffer.subarray(0, length);
  } catch (error) {
    return { kind: 'error', code: codeOf(error) };
  } finally {
    Fs.closeSync(fd);
  }
}

/** The file a read read, and as of when. */
export type FileIdentity = Pick<Fs.Stats, 'dev' | 'ino' | 'size' | 'mtimeMs'>;

/** `timeoutMs`: the most time the read may take (--deadline); 5 minutes by default. */
export type ReadOptions = ReadWords & {
  readonly maxBytes: number;
  readonly timeoutMs?: number | undefined;
};

/** Opens a file for reading: tests pass one whose reads never answer. */
export type OpenForRead = (file: string, flags: number) => Promise<FsPromises.FileHandle>;

/** Reads abandoned whose file system has not answered yet: each holds the process open. */
let abandonedInFlight = 0;

/** How many abandoned reads still wait for their file system (src/cli.ts ends them). */
export const abandonedReads = (): number => abandonedInFlight;

async function read(file: string, maxBytes: number, stop: AbortSignal, open: OpenForRead) {
  let handle: FsPromises.FileHandle;
  try {
    handle = await open(file, FLAGS);
  } catch (error) {
    const stats =
      codeOf(error) === 'ENOENT' ? undefined : await FsPromises.stat(file).catch(() => undefined);
    return openFailure(error, stats);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return openFailure(undefined, info);
    let buffer = room(undefined, 0, maxBytes, info.size);
    let length = 0;
    for (let got = -1; got !== 0 && length <= maxBytes && !stop.aborted; length += got) {
      buffer = room(buffer, length, maxBytes);
      ({ bytesRead: got } = await handle.read(buffer, length, buffer.length - length, length));
    }
    if (length > maxBytes) return { kind: 'too-large', maxBytes } as const;
    const { dev, ino, size, mtimeMs } = info;
    return { bytes: buffer.subarray(0, length), identity: { dev, ino, size, mtimeMs } };
  } catch (error) {
    return { kind: 'error', code: codeOf(error) } as const;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Reads a file within `timeoutMs`, else abandons it (its handle closed whenever the file system
 * answers): its bytes and which file they came from. Throws a FileReadError.
 */
export async function readRegularFile(
  file: string,
  options: ReadOptions,
  open: OpenForRead = (path, flags) => FsPromises.open(path, flags),
): Promise<{ readonly bytes: Buffer; readonly identity: FileIdentity }> {
  const ms = options.timeoutMs ?? 5 * 60_000;
  const timeout = AbortSignal.timeout(ms);
  // As the flags take a duration: 5m, 30s, 200ms.
  const took =
    ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
  const why = `it took longer than ${took} (--deadline), and the read was abandoned; check the file system it is on`;
  const abandoned = new Promise<ReadFailure>((resolve) =>
    timeout.addEventListener('abort', () => resolve({ kind: 'abandoned', why })),
  );
  const reading = read(file, options.maxBytes, timeout, open);
  const outcome = await Promise.race([reading, abandoned]);
  if ('bytes' in outcome) return outcome;
  if (outcome.kind === 'abandoned') {
    abandonedInFlight += 1;
    void reading.finally(() => (abandonedInFlight -= 1));
  }
  throw new FileReadError(outcome, options);
}

/** readRegularFile's bytes as UTF-8 text. */
export async function readRegularText(file: string, options: ReadOptions): Promise<string> {
  return (await readRegularFile(file, options)).bytes.toString('utf8');
}
