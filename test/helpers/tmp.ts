import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A real temporary directory with a helper to write files into it; removed by `cleanup`. */
export async function tempDir(prefix = 'envsync-') {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  return {
    dir,
    path: (...parts: string[]) => path.join(dir, ...parts),
    async write(relative: string, content: string | Buffer) {
      const file = path.join(dir, relative);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, content);
      return file;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
