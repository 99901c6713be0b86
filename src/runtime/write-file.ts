import * as FsPromises from 'node:fs/promises';
import { kindOf } from './read-file.ts';

/**
 * Writes `text` to a regular file whole and flushes it. `exclusive`: the file must not exist yet
 * (a link planted at its name fails the open), and one not written whole is removed.
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
    if (exclusive) await FsPromises.unlink(file).catch(() => undefined);
    throw error;
  } finally {
    await handle.close();
  }
}
