import * as FsPromises from 'node:fs/promises';
import { kindOf } from './read-failure.ts';

/**
 * Writing a new file whole, for the writers that need a handle of their own (to fsync it before
 * it takes its name).
 */
/**
 * Writes `text` to `file` and flushes it to the disk. `exclusive`: the file must not exist yet
 * (O_EXCL, so a link planted at its name fails the open instead of being written through);
 * otherwise an existing regular file is emptied first. A new file that cannot be written whole is
 * removed. Never waits for a FIFO's reader
 * (O_NONBLOCK), and refuses whatever is not a regular file.
 */
export async function writeFileSynced(
  file: string,
  text: string,
  { exclusive, mode }: { readonly exclusive: boolean; readonly mode: number },
): Promise<void> {
  const { O_WRONLY, O_CREAT, O_TRUNC, O_EXCL, O_NONBLOCK } = FsPromises.constants;
  const flags = O_WRONLY | O_CREAT | O_NONBLOCK | (exclusive ? O_EXCL : O_TRUNC);
  const handle = await FsPromises.open(file, flags, mode);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new Error(`${file} is ${kindOf(info)}, not a regular file`);
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } catch (error) {
    // A new file that could not be written whole is not left behind.
    if (exclusive) await FsPromises.unlink(file).catch(() => undefined);
    throw error;
  } finally {
    await handle.close();
  }
}
