import { ConfigError } from '../runtime/errors.ts';
import { fsPromises } from '../runtime/builtins.ts';

/**
 * Reads a secret a flag names (`--webhook-secret-file`, `--notify-secret-file`), once at start:
 * the file's text, trimmed. An unreadable or empty file is a configuration error naming the flag
 * and the file; the secret itself is never part of a message.
 */
export async function readSecretFile(flag: string, file: string, what: string): Promise<string> {
  let text: string;
  try {
    text = await fsPromises().readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `${flag} ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}); pass a readable file or leave the flag out`,
    );
  }
  const secret = text.trim();
  if (secret === '') throw new ConfigError(`${flag} ${file} is empty; put the ${what} in it`);
  return secret;
}
