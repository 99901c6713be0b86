import path from 'node:path';
import { isBearerToken } from '../core/redact.ts';
import { ConfigError } from '../runtime/errors.ts';
import { READ_LIMITS, readRegularText } from '../runtime/read-file.ts';

/**
 * Reads the API token: `--token-file` / ENVSYNC_TOKEN_FILE (read at each call, so a rotated
 * Secret is picked up), else ENVSYNC_TOKEN. A relative token file is found from `cwd`, the
 * command's working directory; messages name it as it was given. Errors never include the token.
 * The file is read as src/runtime/read-file.ts reads: a regular file only, at most 64 KiB, within
 * `timeoutMs` (the command's --deadline).
 */
export async function readToken(
  tokenFile: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
  { timeoutMs }: { readonly timeoutMs?: number | undefined } = {},
): Promise<string> {
  let token: string | undefined;
  let source: string;
  if (tokenFile !== undefined) {
    source = `token file ${tokenFile}`;
    token = await readRegularText(path.resolve(cwd, tokenFile), {
      subject: source,
      fix: 'point --token-file at a file',
      maxBytes: READ_LIMITS.token,
      limit: 'for a token file',
      timeoutMs,
    });
  } else {
    source = 'ENVSYNC_TOKEN';
    token = env['ENVSYNC_TOKEN'];
  }
  token = token?.trim();
  if (token === undefined || token === '') {
    throw new ConfigError(
      tokenFile === undefined
        ? 'no API token: set ENVSYNC_TOKEN, or --token-file PATH (env ENVSYNC_TOKEN_FILE)'
        : `${source} is empty`,
    );
  }
  return checkToken(token, source);
}

/**
 * The checks every token passes, whatever its source (named in the messages, which never show
 * the token): `token` is trimmed and not empty.
 */
export function checkToken(token: string, source: string): string {
  // A value copied from an Authorization header: envsync writes the scheme itself.
  if (/^bearer\s/i.test(token)) {
    throw new ConfigError(
      `${source}: the token starts with "Bearer ": drop the Bearer prefix, envsync adds it (the token is not shown)`,
    );
  }
  // oxlint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(token)) {
    throw new ConfigError(`${source}: the token contains whitespace or control characters`);
  }
  // Checked at every read, so a rotated token that is malformed is refused before any request.
  if (!isBearerToken(token)) {
    throw new ConfigError(
      `${source}: the token has characters a Bearer token cannot hold (RFC 6750 allows letters, digits and - . _ ~ + /, then = padding); check the secret (its value is not shown)`,
    );
  }
  return token;
}
