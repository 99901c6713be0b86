import path from 'node:path';
import type { Logger } from 'pino';
import { clientFromSettings, type EnvironmentsClient } from '../api/client.ts';
import { parseApiUrl } from '../config/api-url.ts';
import type { Settings } from '../config/settings.ts';
import { readTokens, tokenGetter, tokensOf } from '../config/tokens.ts';
import type { Masker } from '../core/mask.ts';
import { ConfigError } from '../runtime/errors.ts';
import { READ_LIMITS, readRegularText } from '../runtime/read-file.ts';
import { tuneV8ForWork } from '../runtime/v8-flags.ts';

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

/** A client for the API, and the address it talks to. */
export interface Connection {
  readonly apiUrl: URL;
  readonly client: EnvironmentsClient;
}

/**
 * Checks the API address, reads the tokens (each added to `secrets` at once, so that every sink
 * masks it; with `--token-dir`, each org's requests carry its own) and the CA file, relative
 * files from the command's `cwd`, and makes the client. Close the client when done.
 */
export async function connect(
  settings: Settings,
  { env, cwd }: { readonly env: NodeJS.ProcessEnv; readonly cwd: string },
  logger: Logger,
  secrets: Masker,
): Promise<Connection> {
  if (settings.apiUrl === undefined) {
    throw new ConfigError('no API address: pass --api-url URL or set ENVSYNC_API_URL');
  }
  const apiUrl = parseApiUrl(settings.apiUrl, { insecureHttp: settings.insecureHttp });
  const set = await readTokens(settings, env, cwd, { timeoutMs: settings.deadlineMs });
  for (const token of tokensOf(set)) secrets.add(token);
  const ca = await readCaFile(settings.caFile, cwd, settings.deadlineMs);
  tuneV8ForWork();
  const client = clientFromSettings(settings, {
    apiUrl,
    getToken: tokenGetter(set),
    mask: secrets.mask,
    logger,
    ca,
  });
  return { apiUrl, client };
}
