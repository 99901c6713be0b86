import * as Fs from 'node:fs';
import * as FsPromises from 'node:fs/promises';
import {
  DEFAULT_READ_TIMEOUT_MS,
  FileReadError,
  formatMs,
  kindOf,
  type ReadFailure,
  type ReadWords,
} from './read-failure.ts';

export {
  DEFAULT_READ_TIMEOUT_MS,
  failureMessage,
  FileReadError,
  formatBytes,
  kindOf,
  READ_LIMITS,
  type ReadFailure,
  type ReadWords,
} from './read-failure.ts';

/**
 * The one way envsync opens a file to read it, whatever the file: a token, a config file, a CA
 * bundle, a manifest, the state file and its lock, a saved plan, a secret. `.oxlintrc.json`
 * refuses `readFile`, `readFileSync`, `createReadStream`, `openSync` and `readSync` anywhere else
 * in src/.
 *
 * - Only a regular file (or a symbolic link to one) is read. The file is opened with O_NONBLOCK,
 *   so that opening a FIFO nobody writes to returns at once instead of waiting for a writer, and
 *   the open handle is asked what it is (fstat): a FIFO, a socket, a device or a directory is
 *   refused by name. Asking the handle, not the path, leaves no time for a swap in between.
 * - At most `maxBytes + 1` bytes are read, whatever size the file claims: a larger file is
 *   refused, naming the limit.
 * - An asynchronous read takes at most `timeoutMs` (the command's --deadline) and ends at once
 *   when `signal` aborts: it is then abandoned with an error, and its handle is closed whenever
 *   the file system answers.
 */

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
}

/**
 * Why an open failed. A socket cannot be opened at all (ENXIO): what is at the path is then asked
 * only to say what it is, in the message; nothing is read from it.
 */
function openFailure(error: unknown, statOf: () => Fs.Stats | undefined): ReadFailure {
  const code = codeOf(error);
  if (code !== 'ENOENT') {
    let info: Fs.Stats | undefined;
    try {
      info = statOf();
    } catch {
      info = undefined;
    }
    if (info !== undefined && !info.isFile()) return { kind: 'not-regular', what: kindOf(info) };
  }
  return { kind: 'error', code };
}

/** The flags of every open: read only, and never wait for a FIFO's writer. */
function readFlags(): number {
  const { O_RDONLY, O_NONBLOCK } = Fs.constants;
  return O_RDONLY | O_NONBLOCK;
}

/**
 * One read buffer per thread, used by file after file (the manifests, read one after another):
 * a new buffer per file is memory outside the JavaScript heap that is freed only when the
 * collector gets round to it, and a thousand of them grow the process (docs/performance.md,
 * "History"). A buffer larger than SPARE_BYTES, for an unusually large file, is not kept.
 */
const SPARE_BYTES = 256 * 1024;
let spare: Buffer | undefined;

/** A buffer of at least `bytes` bytes, the spare one when it is large enough. */
function readBuffer(bytes: number): Buffer {
  if (spare !== undefined && spare.length >= bytes) return spare;
  return Buffer.allocUnsafeSlow(Math.max(bytes, bytes <= SPARE_BYTES ? 64 * 1024 : 0));
}

/**
 * Reads a regular file of at most `maxBytes` bytes, synchronously: for the manifests, small local
 * files read by the thousand, where promise-based reads cost 60–200 ms of the main thread against
 * 15 ms (`npm run bench`). A FIFO, a device or a directory is refused before any read, so this
 * cannot block on one; it has no time bound, though, for a file system that stops answering.
 * `use` gets the bytes, which are valid only until it returns (the buffer is used again).
 */
export function readRegularFileSync<T>(
  file: string,
  maxBytes: number,
  use: (bytes: Buffer) => T,
): { ok: true; value: T } | { ok: false; failure: ReadFailure } {
  let fd: number;
  try {
    fd = Fs.openSync(file, readFlags());
  } catch (error) {
    return { ok: false, failure: openFailure(error, () => Fs.statSync(file)) };
  }
  try {
    const info = Fs.fstatSync(fd);
    if (!info.isFile()) return { ok: false, failure: { kind: 'not-regular', what: kindOf(info) } };
    // The buffer is sized from the file's size plus one byte, so the usual file takes one read
    // and one empty read into that spare byte (end of file), with no copy; one that grows
    // meanwhile takes more, up to the limit and one byte past it.
    let buffer = readBuffer(Math.min(info.size + 1, maxBytes + 1));
    let length = 0;
    while (length <= maxBytes) {
      if (length === buffer.length) {
        const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(bigger, 0, 0, length);
        buffer = bigger;
      }
      const bytesRead = Fs.readSync(fd, buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) return { ok: false, failure: { kind: 'too-large', maxBytes } };
    try {
      return { ok: true, value: use(buffer.subarray(0, length)) };
    } finally {
      if (buffer.length > SPARE_BYTES) spare = undefined;
      else if (buffer !== spare) spare = buffer;
    }
  } catch (error) {
    return { ok: false, failure: { kind: 'error', code: codeOf(error) } };
  } finally {
    Fs.closeSync(fd);
  }
}

/** The identity of the file a read read: which file it was, and as of when. */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

/** What an asynchronous read gives: the bytes, and the identity of the file they came from. */
export interface FileRead {
  readonly bytes: Buffer;
  readonly identity: FileIdentity;
}

export interface ReadOptions extends ReadWords {
  readonly maxBytes: number;
  /** The most time the read may take (the command's --deadline); 5 minutes by default. */
  readonly timeoutMs?: number | undefined;
  /** The flag that sets `timeoutMs`, for the message: --deadline by default. */
  readonly timeoutFlag?: string | undefined;
  /** Ends the read at once (a daemon stopping). */
  readonly signal?: AbortSignal | undefined;
}

/** Opens a file for reading: tests replace it with one whose reads never answer. */
export type OpenForRead = (file: string, flags: number) => Promise<FsPromises.FileHandle>;

const openForRead: OpenForRead = (file, flags) => FsPromises.open(file, flags);

/** Reads abandoned whose file system has not answered yet: each holds the process open. */
let abandonedInFlight = 0;

/** How many abandoned reads are still waiting for their file system (src/cli.ts ends them). */
export function abandonedReads(): number {
  return abandonedInFlight;
}

/** The read itself: open, check, read up to the limit, close. `stop` ends it between calls. */
async function attempt(
  file: string,
  maxBytes: number,
  stop: AbortSignal,
  open: OpenForRead,
): Promise<FileRead | ReadFailure> {
  let handle: FsPromises.FileHandle;
  try {
    handle = await open(file, readFlags());
  } catch (error) {
    const info =
      codeOf(error) === 'ENOENT' ? undefined : await FsPromises.stat(file).catch(() => undefined);
    return openFailure(error, () => info);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { kind: 'not-regular', what: kindOf(info) };
    const { dev, ino, size, mtimeMs } = info;
    let buffer = Buffer.allocUnsafe(Math.min(size + 1, maxBytes + 1));
    let length = 0;
    while (length <= maxBytes && !stop.aborted) {
      if (length === buffer.length) {
        const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(bigger, 0, 0, length);
        buffer = bigger;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) return { kind: 'too-large', maxBytes };
    return { bytes: buffer.subarray(0, length), identity: { dev, ino, size, mtimeMs } };
  } catch (error) {
    return { kind: 'error', code: codeOf(error) };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Reads a regular file of at most `maxBytes` bytes, within `timeoutMs`; throws a FileReadError
 * (a ConfigError) naming the file, what it is and what to do. See the top of this module.
 */
export async function readRegularFile(
  file: string,
  options: ReadOptions,
  open: OpenForRead = openForRead,
): Promise<FileRead> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_READ_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const stop = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  let abandon: (why: string) => void = () => undefined;
  const abandoned = new Promise<ReadFailure>((resolve) => {
    abandon = (why) => resolve({ kind: 'abandoned', why });
  });
  const onStop = () =>
    abandon(
      timeout.aborted
        ? `it took longer than ${formatMs(timeoutMs)} (${options.timeoutFlag ?? '--deadline'}), and the read was abandoned; check the file system it is on`
        : `the read was abandoned: ${reasonText(options.signal?.reason)}`,
    );
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  const reading = attempt(file, options.maxBytes, stop, open);
  const outcome = await Promise.race([reading, abandoned]);
  stop.removeEventListener('abort', onStop);
  if ('bytes' in outcome) return outcome;
  if (outcome.kind === 'abandoned') {
    abandonedInFlight += 1;
    void reading.finally(() => (abandonedInFlight -= 1));
  }
  throw new FileReadError(outcome, options);
}

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}

/** readRegularFile's bytes as UTF-8 text (as `readFile(file, 'utf8')` decodes them). */
export async function readRegularText(file: string, options: ReadOptions): Promise<string> {
  return (await readRegularFile(file, options)).bytes.toString('utf8');
}
