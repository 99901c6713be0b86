import * as fsPromises from 'node:fs/promises';
import path from 'node:path';
import { writeFileSynced } from '../runtime/write-file.ts';

/**
 * Writes a file whole or not at all: a new temp file beside it, flushed, renamed over it. Its name
 * carries the writer's pid, so that the next run can tell a killed writer's (removeStaleTempFiles).
 */
export async function writeFileAtomic(file: string, content: string): Promise<void> {
  await fsPromises.mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await writeFileSynced(temp, content, { exclusive: true, mode: 0o666 });
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
  for (const name of await fsPromises.readdir(dir).catch(() => [] as string[])) {
    const pid = name.startsWith(prefix)
      ? /^(\d+)\.[a-z0-9]+\.tmp$/.exec(name.slice(prefix.length))
      : null;
    if (pid !== null && !isAlive(Number(pid[1])))
      await fsPromises.unlink(path.join(dir, name)).catch(() => undefined);
  }
}
