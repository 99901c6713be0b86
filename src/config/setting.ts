/**
 * What a setting is, and how one is resolved: flags > environment > config file > defaults. The
 * flag parsers, the config file schema, each --help and docs/flags.md derive from the rows.
 */
import path from 'node:path';
import type * as z from 'zod';

export const COMMAND_NAMES = [
  'validate',
  'plan',
  'sync',
  'run',
  'status',
  'export',
  'migrate',
  'schema',
  'emulator',
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

/** The commands a setting names often. */
export const ONE_SHOT = ['validate', 'plan', 'sync'] as const;
export const RECONCILING = ['plan', 'sync', 'run'] as const;
export const API = ['plan', 'sync', 'run', 'export'] as const;
export const SETTING_COMMANDS = ['validate', 'plan', 'sync', 'run', 'export'] as const;

/** A setting's raw value: a flag's text, switch or repeated texts, or a config file value. */
export type Raw = string | number | boolean | readonly string[];

/**
 * Turns a raw value from any source into a setting's value, or throws a ConfigError naming the flag
 * (`name`). It says what the config file may hold (`schema`, `words`), how a variable separates a
 * list (its flag is then repeatable), and whether it is a path (relative to the config file).
 */
export interface Parser<T = unknown> {
  (raw: Raw, name: string): T;
  readonly schema?: z.ZodType;
  readonly words?: string;
  readonly separator?: ',' | ';';
  readonly path?: boolean;
}

/** The groups of the help and the docs, in the order they are shown. */
export const GROUPS = {
  plan: 'Saved plans',
  export: 'Export',
  daemon: 'Daemon',
  server: 'Server',
  access: 'Organizations and tokens',
  faults: 'Fault injection',
  manifests: 'Manifests and state',
  api: 'API',
  output: 'Output',
  general: 'General',
} as const;

export interface Setting {
  /** The flag as help shows it: `-o, --output FORMAT`; one without a value is a switch. */
  readonly flag: string;
  readonly env?: string;
  /** Another tool's variable: how its text becomes a raw value (undefined: unset), in words. */
  readonly envRead?: { readonly read: (text: string) => Raw | undefined; readonly note: string };
  readonly file?: string;
  readonly commands: readonly CommandName[];
  /** Commands that accept the flag without using it, so one command line serves several. */
  readonly tolerated?: readonly CommandName[];
  readonly group: keyof typeof GROUPS;
  readonly help: string;
  readonly parse: Parser;
  /** The default, written as a user would (parsed like any other value). */
  readonly default?: Raw;
  /** How help and docs show the default when `default` does not say it well. */
  readonly defaultText?: string;
}

export type SettingsTable = Readonly<Record<string, Setting>>;

/**
 * A setting's flag and config file key, its variable (ENVSYNC_ and the key in capitals), and the
 * rest of its `row` (its commands and group).
 */
export function named<const F extends string, const R extends object = object>(
  flag: F,
  file: string,
  row = {} as R,
) {
  return { flag, file, env: `ENVSYNC_${file.replace(/[A-Z]/g, '_$&').toUpperCase()}`, ...row };
}

/** The resolved values of a table: what each parser returns, or undefined without a default. */
export type ValuesOf<T extends SettingsTable> = {
  -readonly [K in keyof T]:
    | ReturnType<T[K]['parse']>
    | (T[K] extends { readonly default: Raw } ? never : undefined);
};

/** A setting's long flag (`output`), its short one (`o`) and whether it takes a value. */
export function flagOf(setting: Setting): { long: string; short?: string; valued: boolean } {
  const [, short, long = '', value] = /^(?:-(\w), )?--([\w-]+)( .+)?$/.exec(setting.flag) ?? [];
  return { long, ...(short === undefined ? {} : { short }), valued: value !== undefined };
}

/** The flags as util.parseArgs gives them, by long flag. */
export type Flags = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

type LongFlag<F> = F extends `${string}--${infer L} ${string}`
  ? L
  : F extends `${string}--${infer L}`
    ? L
    : never;

/** The flags of a table, as util.parseArgs gives them: a list's repeated, a switch's a boolean. */
export type FlagsOf<T extends SettingsTable> = {
  readonly [K in keyof T as LongFlag<T[K]['flag']>]?: T[K]['flag'] extends `${string} ${string}`
    ? ReturnType<T[K]['parse']> extends readonly unknown[]
      ? string[]
      : string
    : boolean;
};

/** The config file's values, by key, as its schema accepted them. */
export type ConfigFile = Readonly<Record<string, unknown>>;

export function accepts(setting: Setting, command: CommandName): boolean {
  return setting.commands.includes(command) || (setting.tolerated ?? []).includes(command);
}

/** Where settings come from, highest first; the config file's paths start at `fileDir`. */
export interface Sources {
  readonly flags: Flags;
  readonly env: NodeJS.ProcessEnv;
  readonly file?: ConfigFile;
  readonly fileDir?: string | undefined;
}

/** The raw value with the highest precedence, or undefined when no source sets it. */
function rawValue(setting: Setting, { flags, env, file, fileDir }: Sources): Raw | undefined {
  const flag = flags[flagOf(setting).long];
  if (flag !== undefined) return flag as Raw;
  const variable = envValue(setting, setting.env === undefined ? undefined : env[setting.env]);
  if (variable !== undefined) return variable;
  const value = setting.file === undefined ? undefined : (file?.[setting.file] as Raw | undefined);
  if (setting.parse.path === true && typeof value === 'string' && fileDir !== undefined)
    return path.resolve(fileDir, value);
  return value;
}

/** A variable's text as a raw value; an empty one counts as unset, as `VAR= envsync` means. */
function envValue(setting: Setting, text: string | undefined): Raw | undefined {
  if (text === undefined || text === '') return undefined;
  if (setting.envRead !== undefined) return setting.envRead.read(text);
  const { separator } = setting.parse;
  if (separator === undefined) return text;
  return text
    .split(separator)
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export function resolveSetting(setting: Setting, sources: Sources): unknown {
  const raw = rawValue(setting, sources) ?? setting.default;
  return raw === undefined ? undefined : setting.parse(raw, `--${flagOf(setting).long}`);
}

/** Resolves every setting of `table`, in table order (so the first bad value is reported). */
export function resolveValues<T extends SettingsTable>(table: T, sources: Sources): ValuesOf<T> {
  return Object.fromEntries(
    Object.entries(table).map(([id, setting]) => [id, resolveSetting(setting, sources)]),
  ) as ValuesOf<T>;
}

/** Whether a flag, a variable or the config file sets the setting (its default is not asked). */
export function isGiven(setting: Setting, sources: Sources): boolean {
  return rawValue(setting, sources) !== undefined;
}
