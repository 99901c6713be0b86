/** `--data FILE`: the store loaded at start and written back whole, a burst of changes at once. */
import * as fsPromises from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { FileReadError, READ_LIMITS, readRegularText } from '../runtime/read-file.ts';
import { writeFileSynced } from '../runtime/write-file.ts';
import { parseStoreDocument, type StoreDocument } from './store-document.ts';

/** Reads the data file: undefined when missing or empty; a ConfigError when unusable. */
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

/** Writes the store shortly after a burst of changes and on `flush`; a failed write is retried. */
export function storeWriter(file: string, snapshot: () => StoreDocument, logger: Logger) {
  let dirty = false;
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;
  let failure: unknown;
  let temps = 0;
  /** FILE is always the old or the new store whole: a temp file beside it, fsynced, renamed. */
  const replace = async (text: string): Promise<void> => {
    temps += 1;
    const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${temps}.tmp`);
    try {
      await writeFileSynced(temp, text, { exclusive: false, mode: 0o644 });
      await fsPromises.rename(temp, file);
    } catch (error) {
      await fsPromises.unlink(temp).catch(() => undefined);
      throw error;
    }
  };
  const write = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    writing ??= (async () => {
      while (dirty) {
        dirty = false;
        try {
          await replace(`${JSON.stringify(snapshot(), null, 2)}\n`);
          failure = undefined;
          logger.debug({ file }, 'store written');
        } catch (error) {
          failure = error;
          dirty = true;
          logger.error({ file, err: error }, 'could not write the data file');
          break;
        }
      }
    })().finally(() => {
      writing = undefined;
    });
    return writing;
  };
  return {
    schedule(): void {
      dirty = true;
      if (timer === undefined && writing === undefined)
        timer = setTimeout(() => void write(), 20).unref();
    },
    /** Writes any pending change now and waits for it; rejects when the last write failed. */
    async flush(): Promise<void> {
      await write();
      if (failure !== undefined)
        throw new Error(`could not write ${file}: ${errorMessage(failure)}`, { cause: failure });
    },
  };
}
