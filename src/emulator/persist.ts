/** `--data FILE`: the store loaded at start and written back whole, a burst of changes at once. */
import * as fsPromises from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { FileReadError, READ_LIMITS, readRegularText } from '../runtime/read-file.ts';
import { writeFileSynced } from '../runtime/write-file.ts';
import { parseStoreDocument, type StoreDocument } from './store-document.ts';

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
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const reason = `not valid JSON (${errorMessage(error)}); fix or remove the file`;
    throw new ConfigError(`--data ${file}: ${reason}`, { cause: error });
  }
  const result = parseStoreDocument(parsed, nowSeconds);
  if (result.ok) return result.value;
  const problems = Object.entries(result.errors)
    .slice(0, 5)
    .map(([field, reason]) => `${field}: ${reason}`);
  throw new ConfigError(`--data ${file}: not an emulator store: ${problems.join('; ')}`);
}

/**
 * Persists snapshots of the store: `schedule` after each change (one write follows shortly for a
 * burst), `flush` before exit. A failed write is tried again by the next one.
 */
export class StoreWriter {
  readonly #file: string;
  readonly #snapshot: () => StoreDocument;
  readonly #logger: Logger;
  #dirty = false;
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  #error: unknown;
  #temps = 0;

  constructor(file: string, snapshot: () => StoreDocument, logger: Logger) {
    this.#file = file;
    this.#snapshot = snapshot;
    this.#logger = logger;
  }

  schedule(): void {
    this.#dirty = true;
    if (this.#timer !== undefined || this.#writing !== undefined) return;
    this.#timer = setTimeout(() => void this.#write(), 20).unref();
  }

  /** Writes any pending change now and waits for it; rejects when the last write failed. */
  async flush(): Promise<void> {
    await this.#write();
    if (this.#error !== undefined) {
      const text = `could not write ${this.#file}: ${errorMessage(this.#error)}`;
      throw new Error(text, { cause: this.#error });
    }
  }

  #write(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#writing ??= (async () => {
      while (this.#dirty) {
        this.#dirty = false;
        try {
          await this.#replace(`${JSON.stringify(this.#snapshot(), null, 2)}\n`);
          this.#error = undefined;
          this.#logger.debug({ file: this.#file }, 'store written');
        } catch (error) {
          this.#error = error;
          this.#dirty = true;
          this.#logger.error({ file: this.#file, err: error }, 'could not write the data file');
          break;
        }
      }
    })().finally(() => {
      this.#writing = undefined;
    });
    return this.#writing;
  }

  /** FILE is always the old or the new store whole: a temp file beside it, fsynced, renamed. */
  async #replace(text: string): Promise<void> {
    this.#temps += 1;
    const name = `.${basename(this.#file)}.${process.pid}.${this.#temps}.tmp`;
    const temp = join(dirname(this.#file), name);
    try {
      await writeFileSynced(temp, text, { exclusive: false, mode: 0o644 });
      await fsPromises.rename(temp, this.#file);
    } catch (error) {
      await fsPromises.unlink(temp).catch(() => undefined);
      throw error;
    }
  }
}
