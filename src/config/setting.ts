/**
 * What a setting is, for the settings table (settings-table.ts, emulator-settings.ts), and the
 * generic helpers over a table: which commands accept a setting, picking some settings, and the
 * types of parsed flags, resolved values and config file contents.
 */
import type { CommandName } from './commands.ts';
import type { Raw } from './parsers.ts';

export type { Raw };

/** How the config file holds a setting (the zod schema in config-file.ts is built from it). */
export type FileType =
  | { readonly kind: 'string' }
  | { readonly kind: 'strings' }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'duration' }
  | { readonly kind: 'integer'; readonly min: number; readonly max?: number }
  | { readonly kind: 'enum'; readonly values: readonly [string, ...string[]] };

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

export type Group = keyof typeof GROUPS;

/** One setting. */
export interface Setting {
  /** The long flag, without its dashes. */
  readonly flag: string;
  readonly short?: string;
  /** A flag with a value, or a switch. */
  readonly type: 'string' | 'boolean';
  /** Whether the flag may be given several times (the values are collected). */
  readonly repeatable?: boolean;
  /** The value's name in help: DIR, N, DURATION. */
  readonly value?: string;
  readonly env?: {
    readonly name: string;
    /** How the variable's text becomes a raw value; undefined: as if it were not set. */
    readonly read?: (text: string) => Raw | undefined;
    /** How the docs describe the variable's form, e.g. "comma-separated". */
    readonly note?: string;
  };
  readonly file?: {
    readonly key: string;
    readonly type: FileType;
    /** A path, relative to the config file when it comes from there. */
    readonly relative?: boolean;
  };
  /** The commands that use it. */
  readonly commands: readonly CommandName[];
  /** Commands that accept the flag without using it, so one command line serves several. */
  readonly tolerated?: readonly CommandName[];
  readonly group: Group;
  readonly help: string;
  /** Turns a raw value into the setting's value; throws an error naming the flag (`name`). */
  readonly parse: (raw: Raw, name: string) => unknown;
  /** The default, written as a user would (parsed like any other value); none: undefined. */
  readonly default?: Raw;
  /** How help and docs show the default when `default` does not say it well. */
  readonly defaultText?: string;
}

export type SettingsTable = Readonly<Record<string, Setting>>;

/** A setting's resolved value: what its parser returns, or undefined without a default. */
export type Value<S extends Setting> =
  | ReturnType<S['parse']>
  | (S extends { readonly default: Raw } ? never : undefined);

/** The resolved values of a table. */
export type ValuesOf<T extends SettingsTable> = { -readonly [K in keyof T]: Value<T[K]> };

type Accepting<S extends Setting> =
  | S['commands'][number]
  | (S extends { readonly tolerated: readonly (infer C)[] } ? C : never);

/** The ids of the settings whose flag `command` accepts. */
export type IdsFor<T extends SettingsTable, C extends CommandName> = {
  [K in keyof T]: C extends Accepting<T[K]> ? K : never;
}[keyof T];

type FlagValue<S extends Setting> = S['type'] extends 'boolean'
  ? boolean
  : S extends { readonly repeatable: true }
    ? string[]
    : string;

/** The flags of a table as util.parseArgs returns them, by flag name. */
export type FlagsOfTable<T extends SettingsTable> = {
  -readonly [K in keyof T as T[K]['flag']]?: FlagValue<T[K]> | undefined;
};

/** The flags `command` accepts, as util.parseArgs returns them. */
export type FlagsOf<T extends SettingsTable, C extends CommandName> = FlagsOfTable<
  Pick<T, IdsFor<T, C>>
>;

type FileValue<F extends FileType> = F extends { kind: 'string' }
  ? string
  : F extends { kind: 'strings' }
    ? string[]
    : F extends { kind: 'boolean' }
      ? boolean
      : F extends { kind: 'duration' }
        ? string | 0
        : F extends { kind: 'integer' }
          ? number
          : F extends { kind: 'enum'; values: readonly (infer V)[] }
            ? V
            : never;

/** A config file's contents, as the schema generated from a table accepts them. */
export type ConfigFileOf<T extends SettingsTable> = {
  readonly [
    K in keyof T as T[K] extends { readonly file: { readonly key: infer Key extends string } }
      ? Key
      : never
  ]?: T[K] extends { readonly file: { readonly type: infer F extends FileType } }
    ? FileValue<F>
    : never;
};

/** Whether `command` accepts the setting's flag. */
export function accepts(setting: Setting, command: CommandName): boolean {
  return setting.commands.includes(command) || (setting.tolerated ?? []).includes(command);
}

/** The settings whose flag `command` accepts, in table order. */
export function settingsFor<T extends SettingsTable, C extends CommandName>(
  table: T,
  command: C,
): Pick<T, IdsFor<T, C>> {
  return Object.fromEntries(
    Object.entries(table).filter(([, setting]) => accepts(setting, command)),
  ) as Pick<T, IdsFor<T, C>>;
}

/** Some settings of a table, by id. */
export function pickSettings<T extends SettingsTable, const K extends keyof T & string>(
  table: T,
  ids: readonly K[],
): Pick<T, K> {
  return Object.fromEntries(ids.map((id) => [id, table[id]])) as Pick<T, K>;
}
