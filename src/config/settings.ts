import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '../errors.ts';
import { LOG_LEVELS, OUTPUT_FORMATS } from './formats.ts';
import { resolveValues } from './resolve.ts';
import { SETTINGS, type ConfigFile } from './settings-table.ts';
import { pickSettings, type FlagsOfTable, type ValuesOf } from './setting.ts';

/**
 * The settings of validate, plan, sync, run and export, resolved from the settings table with
 * the precedence flags > environment > config file > defaults. The config file's schema
 * (config-file.ts, zod) is loaded only when there is a config file to read.
 */

export { LOG_LEVELS, OUTPUT_FORMATS };
export type { ConfigFile };

const SETTINGS_IDS = [
  'manifests',
  'apiUrl',
  'orgs',
  'concurrency',
  'retries',
  'timeoutMs',
  'retryDelayMs',
  'deadlineMs',
  'maxRetryAfterMs',
  'maxResponseBytes',
  'state',
  'stateLockTimeoutMs',
  'output',
  'detailedExitcode',
  'logLevel',
  'tokenFile',
  'insecureHttp',
  'caFile',
  'maxFileBytes',
] as const;

const SETTINGS_TABLE = pickSettings(SETTINGS, SETTINGS_IDS);

/** Resolved settings for validate / plan / sync / run / export, as the table types them. */
export type Settings = Readonly<ValuesOf<typeof SETTINGS_TABLE>>;
const CONFIG_TABLE = pickSettings(SETTINGS, ['config']);

/** The flags that map onto settings (and --config), as util.parseArgs returns them. */
export type SettingFlags = FlagsOfTable<typeof SETTINGS_TABLE & typeof CONFIG_TABLE>;

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
    data =
      parseYaml(text, {
        maxAliasCount: 100,
        // Switches are true or false only, as in manifests: `True` is the string "True" (an error).
        schema: 'core',
        customTags: (tags) =>
          tags.map((tag) =>
            typeof tag === 'object' && tag.tag === 'tag:yaml.org,2002:bool'
              ? ({
                  ...tag,
                  test: /^(?:true|false)$/,
                  resolve: (v: string) => v === 'true',
                } as typeof tag)
              : tag,
          ),
      }) ?? {};
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

/** Resolves the settings: flags > environment > config file > defaults. */
export async function resolveSettings(
  flags: SettingFlags,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<Settings & { readonly file: ConfigFile; readonly fileDir: string }> {
  const { config } = resolveValues(CONFIG_TABLE, { flags, env });
  const configPath = config === undefined ? undefined : path.resolve(cwd, config);
  const file = configPath === undefined ? {} : await readConfigFile(configPath);
  // Paths in the config file are relative to the file; on the command line, to the working dir.
  const fileDir = configPath === undefined ? cwd : path.dirname(configPath);
  const settings: Settings = resolveValues(SETTINGS_TABLE, { flags, env, file, fileDir });
  return { ...settings, file, fileDir };
}
