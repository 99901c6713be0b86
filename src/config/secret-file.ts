import { ConfigError } from '../runtime/errors.ts';
import { FileReadError, READ_LIMITS, readRegularText } from '../runtime/read-file.ts';

/**
 * Reads a secret a flag names (`--webhook-secret-file`, `--notify-secret-file`), once at start:
 * the file's text, trimmed. An unreadable or empty file is a configuration error naming the flag
 * and the file; the secret itself is never part of a message. A regular file only, at most 64 KiB,
 * read within `timeoutMs` (the command's --deadline).
 */
export async function readSecretFile(
  flag: string,
  file: string,
  what: string,
  timeoutMs?: number,
): Promise<string> {
  let text: string;
  try {
    text = await readRegularText(file, {
      subject: `${flag} ${file}`,
      fix: `point ${flag} at a file, or leave the flag out`,
      maxBytes: READ_LIMITS.secret,
      limit: 'for a secret file',
      timeoutMs,
    });
  } catch (error) {
    if (error instanceof FileReadError && error.failure.kind === 'error')
      throw new ConfigError(`${error.message}; pass a readable file or leave the flag out`);
    throw error;
  }
  const secret = text.trim();
  if (secret === '') throw new ConfigError(`${flag} ${file} is empty; put the ${what} in it`);
  return secret;
}
