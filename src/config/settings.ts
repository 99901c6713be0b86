import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ConfigFile } from './config-file.ts';
import { LOG_LEVELS, OUTPUT_FORMATS } from './formats.ts';
import { ConfigError } from '../errors.ts';
import { parseDuration } from './duration.ts';

/**
 * envsync's settings: one zod schema for the config file (config-file.ts, loaded only when there
 * is a config file to read), and one resolver with the precedence flags > environment > config
 * file > defaults (issue 3, Commands).
 */

export { LOG_LEVELS, OUTPUT_FORMATS };
export type { ConfigFile };

/** Resolved settings for validate / plan / sync. */
export interface Settings {
  readonly manifests: string;
  readonly apiUrl: string | undefined;
  readonly orgs: readonly string[] | undefined;
  readonly concurrency: number;
  readonly retries: number;
  readonly timeoutMs: number;
  readonly retryDelayMs: number;
  readonly state: string;
  readonly output: (typeof OUTPUT_FORMATS)[number];
  readonly detailedExitcode: boolean;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly tokenFile: string | undefined;
  readonly insecureHttp: boolean;
  readonly caFile: string | undefined;
  readonly maxFileBytes: number;
}

/** The flags that map onto settings, as util.parseArgs returns them. */
export interface SettingFlags {
  manifests?: string | undefined;
  'api-url'?: string | undefined;
  org?: string[] | undefined;
  concurrency?: string | undefined;
  retries?: string | undefined;
  timeout?: string | undefined;
  'retry-delay'?: string | undefined;
  state?: string | undefined;
  output?: string | undefined;
  'detailed-exitcode'?: boolean | undefined;
  'log-level'?: string | undefined;
  'token-file'?: string | undefined;
  'insecure-http'?: boolean | undefined;
  'ca-file'?: string | undefined;
  'max-file-bytes'?: string | undefined;
  config?: string | undefined;
}

/** util.parseArgs option definitions for the shared flags. */
export const SETTING_FLAG_OPTIONS = {
  manifests: { type: 'string' },
  'api-url': { type: 'string' },
  org: { type: 'string', multiple: true },
  concurrency: { type: 'string' },
  retries: { type: 'string' },
  timeout: { type: 'string' },
  'retry-delay': { type: 'string' },
  state: { type: 'string' },
  output: { type: 'string', short: 'o' },
  'detailed-exitcode': { type: 'boolean' },
  'log-level': { type: 'string' },
  'token-file': { type: 'string' },
  'insecure-http': { type: 'boolean' },
  'ca-file': { type: 'string' },
  'max-file-bytes': { type: 'string' },
  config: { type: 'string', short: 'c' },
} as const;

/** Reads and validates a config file; every problem names the file and the key. */
export async function readConfigFile(file: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(
      `config file ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  const { parse: parseYaml } = await import('yaml');
  let data: unknown;
  try {
    data = parseYaml(text, { maxAliasCount: 100 }) ?? {};
  } catch (error) {
    throw new ConfigError(
      `config file ${file} is not valid YAML: ${(error as Error).message.split('\n')[0]}`,
    );
  }
  if (data !== null && typeof data === 'object' && Object.hasOwn(data, 'token')) {
    throw new ConfigError(
      `config file ${file}: "token" is not read from a config file (it would end up in git); set ENVSYNC_TOKEN or tokenFile`,
    );
  }
  const { configFileSchema } = await import('./config-file.ts');
  const result = configFileSchema.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0];
    const key = issue?.path.join('.') || '(root)';
    throw new ConfigError(`config file ${file}: ${key}: ${issue?.message ?? 'invalid'}`);
  }
  return result.data;
}

function pick<T>(...values: (T | undefined)[]): T | undefined {
  return values.find((value) => value !== undefined);
}

function integer(name: string, raw: string | number, min: number, max: number): number {
  const value = typeof raw === 'number' ? raw : /^\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(
      `${name}: ${JSON.stringify(raw)} must be a whole number from ${min} to ${max}`,
    );
  }
  return value;
}

function durationMs(name: string, raw: string | number): number {
  const value = typeof raw === 'number' ? (raw === 0 ? 0 : undefined) : parseDuration(raw);
  if (value === undefined) {
    throw new ConfigError(
      `${name}: ${JSON.stringify(raw)} is not a duration (use e.g. 500ms, 30s, 5m)`,
    );
  }
  return value;
}

function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name}: ${JSON.stringify(raw)} is not one of ${allowed.join(', ')}`);
  }
  return raw as T;
}

function bool(name: string, raw: string | boolean): boolean {
  if (typeof raw === 'boolean') return raw;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  if (/^(0|false|no|)$/i.test(raw)) return false;
  throw new ConfigError(`${name}: ${JSON.stringify(raw)} must be true or false`);
}

/** Resolves the settings: flags > environment > config file > defaults. */
export async function resolveSettings(
  flags: SettingFlags,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<Settings & { readonly file: ConfigFile }> {
  const configPath = pick(flags.config, env['ENVSYNC_CONFIG'] || undefined);
  const file: ConfigFile =
    configPath === undefined ? {} : await readConfigFile(path.resolve(cwd, configPath));
  // Paths in the config file are relative to the file; on the command line, to the working dir.
  const fileDir = configPath === undefined ? cwd : path.dirname(path.resolve(cwd, configPath));
  const fromFile = (value: string | undefined) =>
    value === undefined ? undefined : path.resolve(fileDir, value);
  const e = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);

  const orgsEnv = e('ENVSYNC_ORGS')
    ?.split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  const concurrency = pick<string | number>(
    flags.concurrency,
    e('ENVSYNC_CONCURRENCY'),
    file.concurrency,
  );
  const retries = pick<string | number>(flags.retries, e('ENVSYNC_RETRIES'), file.retries);
  const timeout = pick<string | number>(flags.timeout, e('ENVSYNC_TIMEOUT'), file.timeout);
  const retryDelay = pick<string | number>(
    flags['retry-delay'],
    e('ENVSYNC_RETRY_DELAY'),
    file.retryDelay,
  );
  const output = pick(flags.output, e('ENVSYNC_OUTPUT'), file.output);
  const logLevel = pick(flags['log-level'], e('ENVSYNC_LOG_LEVEL'), file.logLevel);
  const detailed = pick<string | boolean>(
    flags['detailed-exitcode'],
    e('ENVSYNC_DETAILED_EXITCODE'),
    file.detailedExitcode,
  );
  const insecure = pick<string | boolean>(
    flags['insecure-http'],
    e('ENVSYNC_INSECURE_HTTP'),
    file.insecureHttp,
  );
  const maxFileBytes = pick<string | number>(
    flags['max-file-bytes'],
    e('ENVSYNC_MAX_FILE_BYTES'),
    file.maxFileBytes,
  );

  return {
    file,
    manifests:
      pick(flags.manifests, e('ENVSYNC_MANIFESTS'), fromFile(file.manifests)) ?? 'manifests',
    apiUrl: pick(flags['api-url'], e('ENVSYNC_API_URL'), file.apiUrl),
    orgs: pick<readonly string[]>(flags.org, orgsEnv, file.orgs),
    concurrency: concurrency === undefined ? 8 : integer('--concurrency', concurrency, 1, 256),
    retries: retries === undefined ? 4 : integer('--retries', retries, 0, 20),
    timeoutMs: timeout === undefined ? 30_000 : durationMs('--timeout', timeout),
    retryDelayMs: retryDelay === undefined ? 1_000 : durationMs('--retry-delay', retryDelay),
    state:
      pick(flags.state, e('ENVSYNC_STATE'), fromFile(file.state)) ??
      path.join('.envsync', 'state.json'),
    output: output === undefined ? 'text' : oneOf('--output', output, OUTPUT_FORMATS),
    detailedExitcode: detailed === undefined ? false : bool('--detailed-exitcode', detailed),
    logLevel: logLevel === undefined ? 'info' : oneOf('--log-level', logLevel, LOG_LEVELS),
    tokenFile: pick(flags['token-file'], e('ENVSYNC_TOKEN_FILE'), fromFile(file.tokenFile)),
    insecureHttp: insecure === undefined ? false : bool('--insecure-http', insecure),
    caFile: pick(flags['ca-file'], e('ENVSYNC_CA_FILE'), fromFile(file.caFile)),
    maxFileBytes:
      maxFileBytes === undefined
        ? 1024 * 1024
        : integer('--max-file-bytes', maxFileBytes, 1, 1024 ** 3),
  };
}
