import type { Logger } from 'pino';
import type * as FromSettings from '../api/from-settings.ts';
import type { EnvironmentsClient } from '../api/client.ts';
import { parseApiUrl } from '../config/api-url.ts';
import { readCaFile } from '../config/ca-file.ts';
import type { Settings } from '../config/settings.ts';
import { readToken } from '../config/token.ts';
import { ConfigError } from '../runtime/errors.ts';

/** Loaded on demand, not at the top: validate never talks to the API and need not load undici. */
let clientModulePromise: Promise<typeof FromSettings> | undefined;
function clientModule(): Promise<typeof FromSettings> {
  clientModulePromise ??= import('../api/from-settings.ts');
  return clientModulePromise;
}

/**
 * Loads the HTTP client's modules now. A pass does it before it reads the manifests: loading them
 * sets V8's flags for the work that follows (src/v8-flags.ts), which must be in place before a
 * large tree fills the heap, and after Node's own modules that the client needs are loaded.
 */
export async function loadClient(): Promise<void> {
  await clientModule();
}

/** A client for the API, and the address it talks to. */
export interface Connection {
  readonly apiUrl: URL;
  readonly client: EnvironmentsClient;
}

/**
 * Checks the API address, reads the token (handed to `onToken` at once, so that it is scrubbed
 * from every output) and the CA file, and makes the client. Close the client when done.
 */
export async function connect(
  settings: Settings,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  onToken: (token: string) => void,
): Promise<Connection> {
  if (settings.apiUrl === undefined) {
    throw new ConfigError('no API address: pass --api-url URL or set ENVSYNC_API_URL');
  }
  const apiUrl = parseApiUrl(settings.apiUrl, { insecureHttp: settings.insecureHttp });
  const token = await readToken(settings.tokenFile, env);
  onToken(token);
  const ca = await readCaFile(settings.caFile);
  const { clientFromSettings } = await clientModule();
  const client = clientFromSettings(settings, { apiUrl, getToken: () => token, logger, ca });
  return { apiUrl, client };
}
