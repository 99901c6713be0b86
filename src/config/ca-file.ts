import { ConfigError } from '../runtime/errors.ts';
import { fsPromises } from '../runtime/builtins.ts';

/** Reads the PEM file of `--ca-file`, if one is given. */
export async function readCaFile(file: string | undefined): Promise<string | undefined> {
  if (file === undefined) return undefined;
  try {
    return await fsPromises().readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ConfigError(`--ca-file ${file}: cannot be read (${code})`);
  }
}
