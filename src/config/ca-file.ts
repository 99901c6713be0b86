import path from 'node:path';
import { READ_LIMITS, readRegularText } from '../runtime/read-file.ts';

/**
 * Reads the PEM file of `--ca-file`, if one is given. A relative one is found from `cwd`, the
 * command's working directory; messages name it as it was given. A regular file only, at most
 * 4 MiB, read within `timeoutMs` (the command's --deadline).
 */
export async function readCaFile(
  file: string | undefined,
  cwd: string,
  timeoutMs?: number,
): Promise<string | undefined> {
  if (file === undefined) return undefined;
  return readRegularText(path.resolve(cwd, file), {
    subject: `--ca-file ${file}:`,
    fix: 'point --ca-file at a PEM file',
    maxBytes: READ_LIMITS.caFile,
    limit: 'for a CA file',
    timeoutMs,
  });
}
