import path from 'node:path';
import { ConfigError } from '../runtime/errors.ts';
import { READ_LIMITS, readRegularText } from '../runtime/read-file.ts';

/** RFC 6750's b64token: the characters a Bearer token may be made of (section 2.1). */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

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
  if (tokenFile !== undefined) {
    return readTokenFile(path.resolve(cwd, tokenFile), `token file ${tokenFile}`, {
      fix: 'point --token-file at a file',
      timeoutMs,
    });
  }
  const token = env['ENVSYNC_TOKEN']?.trim();
  if (token === undefined || token === '') {
    throw new ConfigError(
      'no API token: set ENVSYNC_TOKEN, or --token-file PATH (env ENVSYNC_TOKEN_FILE)',
    );
  }
  return checkToken(token, 'ENVSYNC_TOKEN');
}

/**
 * A token file (`--token-file`, or one of `--token-dir`'s), read as src/runtime/read-file.ts
 * reads (a regular file, at most 64 KiB, within `timeoutMs`), trimmed and checked; `source`
 * names it in every message, `fix` says what to do when it is not a file.
 */
export async function readTokenFile(
  file: string,
  source: string,
  { fix, timeoutMs }: { readonly fix: string; readonly timeoutMs?: number | undefined },
): Promise<string> {
  const token = (
    await readRegularText(file, {
      subject: source,
      fix,
      maxBytes: READ_LIMITS.token,
      limit: 'for a token file',
      timeoutMs,
    })
  ).trim();
  if (token === '') throw new ConfigError(`${source} is empty`);
  return checkToken(token, source);
}

/**
 * The checks every token passes, whatever its source (named in the messages, which never show
 * the token): `token` is trimmed and not empty.
 */
function checkToken(token: string, source: string): string {
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
  if (!BEARER_TOKEN.test(token)) {
    throw new ConfigError(
      `${source}: the token has characters a Bearer token cannot hold (RFC 6750 allows letters, digits and - . _ ~ + /, then = padding); check the secret (its value is not shown)`,
    );
  }
  return token;
}
