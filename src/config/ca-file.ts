import path from 'node:path';
import { ConfigError } from '../runtime/errors.ts';
import { fsPromises } from '../runtime/builtins.ts';

/**
 * Reads the PEM file of `--ca-file`, if one is given. A relative one is found from `cwd`, the
 * command's working directory; messages name it as it was given.
 */
export async function readCaFile(
  file: string | undefined,
  cwd: string,
): Promise<string | undefined> {
  if (file === undefined) return undefined;
  try {
    return await fsPromises().readFile(path.resolve(cwd, file), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ConfigError(`--ca-file ${file}: cannot be read (${code})`);
  }
}
