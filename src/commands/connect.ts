import path from 'node:path';
import type { Logger } from 'pino';
import { clientFromSettings, type EnvironmentsClient } from '../api/client.ts';
import { parseApiUrl } from '../config/api-url.ts';
import type { Settings } from '../config/settings.ts';
import { readTokens, tokenGetter, tokensOf } from '../config/tokens.ts';
import { ConfigError } from '../runtime/errors.ts';
import { READ_LIMITS, readRegularText } from '../runtime/read-file.ts';
import { tuneV8ForWork } from '../runtime/v8-flags.ts';
import type { CommandContext } from './context.ts';

/** Reads the PEM file of `--ca-file`, if one is given (a relative one from `cwd`). */
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

export type Connection = { readonly apiUrl: URL; readonly client: EnvironmentsClient };

/** The client, once the address, the tokens (masked from then on) and the CA file are read. */
export async function connect(
  settings: Settings,
  { env, cwd, secrets }: Pick<CommandContext, 'env' | 'cwd' | 'secrets'>,
  logger: Logger,
): Promise<Connection> {
  if (settings.apiUrl === undefined)
    throw new ConfigError('no API address: pass --api-url URL or set ENVSYNC_API_URL');
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
