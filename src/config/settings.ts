import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { configFileSchema } from './config-file.ts';
import path from 'node:path';
import { suggest } from '../core/suggest.ts';
import { ConfigError, UsageError } from '../runtime/errors.ts';
import { LOG_LEVELS, OUTPUT_FORMATS } from './formats.ts';
import { resolveValues } from './resolve.ts';
import { SETTINGS, SHARED_SETTINGS, type ConfigFile } from './settings-table.ts';
import {
  pickSettings,
  type FlagsOfTable,
  type Raw,
  type Setting,
  type ValuesOf,
} from './setting.ts';
import { READ_LIMITS, readRegularText } from '../runtime/read-file.ts';

/**
 * The settings of validate, plan, sync, run and export, resolved from the settings table with
 * the precedence flags > environment > config file > defaults. The config file's schema
 * (config-file.ts, zod) is loaded only when there is a config file to read.
 */

export { LOG_LEVELS, OUTPUT_FORMATS };
export type { ConfigFile };

/** Resolved settings for validate / plan / sync / run / export, as the table types them. */
export type Settings = Readonly<ValuesOf<typeof SHARED_SETTINGS>>;
const CONFIG_TABLE = pickSettings(SETTINGS, ['config']);
const DEADLINE_TABLE = pickSettings(SETTINGS, ['deadlineMs']);

/** The flags that map onto settings (and --config), as util.parseArgs returns them. */
export type SettingFlags = FlagsOfTable<typeof SHARED_SETTINGS & typeof CONFIG_TABLE>;

/** The config file's keys, for did-you-mean. */
function configKeys(): string[] {
  return Object.values(SETTINGS).flatMap((setting: Setting) =>
    setting.file === undefined ? [] : [setting.file.key],
  );
}

/**
 * Reads and validates a config file. Every problem is located: `FILE:LINE:COL KEY: what is wrong`,
 * with a did-you-mean for an unknown key; all of them are reported at once. A value is also run
 * through its setting's parser here, so a bad one is reported where it is written, not under its
 * flag's name. A regular file only, at most 1 MiB, read within `timeoutMs` (--deadline).
 */
export async function readConfigFile(file: string, timeoutMs?: number): Promise<ConfigFile> {
  const text = await readRegularText(file, {
    subject: `config file ${file}`,
    fix: 'point --config at a file',
    maxBytes: READ_LIMITS.config,
    limit: 'for a config file',
    timeoutMs,
  });
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
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
  });
  const where = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return `${file}:${line}:${col}`;
  };
  const syntax = doc.errors[0];
  if (syntax !== undefined) {
    const what = syntax.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '');
    throw new ConfigError(`config file ${where(syntax.pos[0])}: not valid YAML: ${what}`);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (error) {
    throw new ConfigError(`config file ${file} cannot be read: ${(error as Error).message}`);
  }
  /** Where the value of `key` (or the key itself) is written; the document's start otherwise. */
  const offsetOf = (key: string | undefined, ofKey = false): number => {
    const root = doc.contents;
    if (key !== undefined && isMap(root)) {
      const pair = root.items.find((item) => isScalar(item.key) && item.key.value === key);
      const node = (ofKey ? pair?.key : (pair?.value ?? pair?.key)) as
        | { range?: [number, number, number] }
        | null
        | undefined;
      if (node?.range !== undefined) return node.range[0];
    }
    return (root as { range?: [number, number, number] } | null)?.range?.[0] ?? 0;
  };
  if (data !== null && typeof data === 'object' && Object.hasOwn(data, 'token')) {
    throw new ConfigError(
      `config file ${where(offsetOf('token', true))} token: is not read from a config file (it would end up in git); set ENVSYNC_TOKEN or tokenFile`,
    );
  }
  const result = configFileSchema.safeParse(data);
  const problems: { offset: number; text: string }[] = [];
  // The schema's word on each key, and the unknown keys with a did-you-mean.
  const schemaSays = new Map<string, string>();
  const known = configKeys();
  for (const issue of result.error?.issues ?? []) {
    const key = issue.path[0] === undefined ? undefined : String(issue.path[0]);
    if (issue.code === 'unrecognized_keys') {
      for (const unknown of issue.keys) {
        const near = suggest(unknown, known);
        problems.push({
          offset: offsetOf(unknown, true),
          text: `${unknown}: unknown key${near === undefined ? '' : ` (did you mean "${near}"?)`}; the keys are listed in config/envsync.example.yaml`,
        });
      }
    } else if (key === undefined) {
      problems.push({ offset: offsetOf(undefined), text: `${issue.message} (a mapping of keys)` });
    } else if (!schemaSays.has(key)) {
      schemaSays.set(key, `${issue.path.join('.')}: ${issue.message}`);
    }
  }
  // Each value as its setting reads it (a duration, a format, ...): its parser's words are the
  // clearest, the schema's (a type) are the fallback.
  const values = (data !== null && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  for (const setting of Object.values(SETTINGS) as Setting[]) {
    const key = setting.file?.key;
    if (key === undefined || values[key] === undefined || values[key] === null) {
      if (key !== undefined && schemaSays.has(key)) {
        problems.push({ offset: offsetOf(key), text: schemaSays.get(key) ?? '' });
      }
      continue;
    }
    let said = schemaSays.get(key);
    try {
      setting.parse(values[key] as Raw, key);
    } catch (error) {
      if (!(error instanceof ConfigError || error instanceof UsageError)) throw error;
      said = error.message;
    }
    if (said !== undefined) problems.push({ offset: offsetOf(key), text: said });
  }
  if (problems.length > 0) {
    problems.sort((a, b) => a.offset - b.offset);
    throw new ConfigError(
      problems.map((problem) => `config file ${where(problem.offset)} ${problem.text}`).join('\n'),
    );
  }
  return result.data as ConfigFile;
}

/** Resolves the settings: flags > environment > config file > defaults. */
export async function resolveSettings(
  flags: SettingFlags,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<Settings & { readonly file: ConfigFile; readonly fileDir: string }> {
  const { config } = resolveValues(CONFIG_TABLE, { flags, env });
  const configPath = config === undefined ? undefined : path.resolve(cwd, config);
  // Read within the --deadline of the flags or the environment (the file's own comes too late).
  const { deadlineMs } = resolveValues(DEADLINE_TABLE, { flags, env });
  const file = configPath === undefined ? {} : await readConfigFile(configPath, deadlineMs);
  // Paths in the config file are relative to the file; on the command line, to the working dir.
  const fileDir = configPath === undefined ? cwd : path.dirname(configPath);
  const settings: Settings = resolveValues(SHARED_SETTINGS, { flags, env, file, fileDir });
  return { ...settings, file, fileDir };
}
