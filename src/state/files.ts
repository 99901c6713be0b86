import path from 'node:path';
import * as fsPromises from 'node:fs/promises';

/** Files envsync writes: whole or not at all, and without leaving temp files behind. */

/** Writes a file so that readers see the old or the new content, never a part (temp + rename). */
export async function writeFileAtomic(file: string, content: string): Promise<void> {
  await fsPromises.mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await fsPromises.writeFile(temp, content, { flush: true });
    await fsPromises.rename(temp, file);
  } catch (error) {
    await fsPromises.unlink(temp).catch(() => undefined);
    throw error;
  }
}

/** Whether a process of this host with `pid` is running (one we may not signal counts). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes temp files that a killed writer left beside `file` (`file.<pid>.<random>.tmp`). */
export async function removeStaleTempFiles(file: string): Promise<void> {
  const dir = path.dirname(file);
  const prefix = `${path.basename(file)}.`;
  const names = await fsPromises.readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const match = /^(\d+)\.[a-z0-9]+\.tmp$/.exec(
      name.startsWith(prefix) ? name.slice(prefix.length) : '',
    );
    if (match !== null && !isAlive(Number(match[1])))
      await fsPromises.unlink(path.join(dir, name)).catch(() => undefined);
  }
}
