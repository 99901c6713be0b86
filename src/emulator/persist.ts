/**
 * `--data FILE`: load the store at start, write it back atomically (temp file in the same
 * directory, fsync, rename) with bursts of changes coalesced into one write.
 */
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import type { StoreDocument } from './store.ts';
import { validateStoreDocument } from './validate-store-document.ts';
import * as fsPromises from 'node:fs/promises';
import { FileReadError, READ_LIMITS, readRegularText } from '../runtime/read-file.ts';
import { writeFileSynced } from '../runtime/write-file.ts';

/** Reads the data file: undefined when it is missing or empty; a ConfigError when it is unusable. */
export async function loadStoreFile(
  file: string,
  nowSeconds: number,
): Promise<StoreDocument | undefined> {
  let text: string;
  try {
    text = await readRegularText(file, {
      subject: `--data ${file}:`,
      fix: 'point --data at a file, or at a path where the emulator may create one',
      maxBytes: READ_LIMITS.emulatorData,
      limit: "for the emulator's data file",
    });
  } catch (error) {
    if (error instanceof FileReadError && error.code === 'ENOENT') return undefined;
    throw error;
  }
  // An empty file (say, made by `touch`) is an empty store.
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `--data ${file}: not valid JSON (${errorMessage(error)}); fix or remove the file`,
      { cause: error },
    );
  }
  const result = validateStoreDocument(parsed, nowSeconds);
  if (!result.ok) {
    const problems = Object.entries(result.errors)
      .slice(0, 5)
      .map(([field, reason]) => `${field}: ${reason}`)
      .join('; ');
    throw new ConfigError(`--data ${file}: not an emulator store: ${problems}`);
  }
  return result.value;
}

let tempCounter = 0;

/** Writes `text` to `file` atomically: a temp file beside it, fsync, then rename over it. */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  tempCounter += 1;
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${tempCounter}.tmp`);
  try {
    await writeFileSynced(temp, text, { exclusive: false, mode: 0o644 });
    await fsPromises.rename(temp, file);
  } catch (error) {
    await fsPromises.unlink(temp).catch(() => undefined);
    throw error;
  }
}

/** Persists snapshots of the store; `schedule` after each change, `flush` before exit. */
export class StoreWriter {
  readonly #file: string;
  readonly #snapshot: () => StoreDocument;
  readonly #logger: Logger;
  readonly #delayMs: number;
  #dirty = false;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #lastError: unknown;

  constructor(file: string, snapshot: () => StoreDocument, logger: Logger, delayMs = 20) {
    this.#file = file;
    this.#snapshot = snapshot;
    this.#logger = logger;
    this.#delayMs = delayMs;
  }

  /** Notes a change; a write follows shortly, merged with any other change until then. */
  schedule(): void {
    this.#dirty = true;
    if (this.#timer === undefined && this.#running === undefined) this.#arm();
  }

  /** Writes any pending change now and waits for it; rejects when the last write failed. */
  async flush(): Promise<void> {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#running !== undefined) await this.#running;
    if (this.#dirty) await this.#write();
    if (this.#dirty && this.#lastError !== undefined) {
      throw new Error(`could not write ${this.#file}: ${errorMessage(this.#lastError)}`, {
        cause: this.#lastError,
      });
    }
  }

  #arm(): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#write();
    }, this.#delayMs);
    this.#timer.unref();
  }

  #write(): Promise<void> {
    this.#dirty = false;
    const text = `${JSON.stringify(this.#snapshot(), null, 2)}\n`;
    const running = writeFileAtomic(this.#file, text).then(
      () => {
        this.#lastError = undefined;
        this.#logger.debug({ file: this.#file }, 'store written');
      },
      (error: unknown) => {
        // Keep it dirty: the next change or the final flush tries again.
        this.#dirty = true;
        this.#lastError = error;
        this.#logger.error({ file: this.#file, err: error }, 'could not write the data file');
      },
    );
    this.#running = running.finally(() => {
      this.#running = undefined;
      if (this.#dirty && this.#lastError === undefined && this.#timer === undefined) this.#arm();
    });
    return this.#running;
  }
}
