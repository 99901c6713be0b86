import path from 'node:path';
import type { Raw, Setting, SettingsTable, ValuesOf } from './setting.ts';

/** Where settings come from, highest precedence first: flags, environment, config file. */
export interface Sources {
  /** The parsed flags, by flag name (util.parseArgs' values). */
  readonly flags: Readonly<Record<string, unknown>>;
  readonly env: NodeJS.ProcessEnv;
  /** The config file's values, by key (already checked against its schema). */
  readonly file?: Readonly<Record<string, unknown>>;
  /** The config file's folder: its relative paths start there. */
  readonly fileDir?: string;
}

/** The raw value with the highest precedence, or undefined when no source sets it. */
function rawValue(setting: Setting, { flags, env, file, fileDir }: Sources): Raw | undefined {
  const flag = flags[setting.flag];
  if (flag !== undefined) return flag as Raw;
  if (setting.env !== undefined) {
    const variable = env[setting.env.name];
    // An empty variable counts as unset, as a shell's `VAR= envsync ...` means.
    if (variable !== undefined && variable !== '') {
      const value = setting.env.read === undefined ? variable : setting.env.read(variable);
      if (value !== undefined) return value;
    }
  }
  if (setting.file !== undefined && file !== undefined) {
    const value = file[setting.file.key] as Raw | undefined;
    if (setting.file.relative === true && typeof value === 'string' && fileDir !== undefined) {
      return path.resolve(fileDir, value);
    }
    if (value !== undefined) return value;
  }
  return undefined;
}

/** Resolves one setting: flags > environment > config file > default. */
export function resolveSetting(setting: Setting, sources: Sources): unknown {
  const raw = rawValue(setting, sources) ?? setting.default;
  return raw === undefined ? undefined : setting.parse(raw, `--${setting.flag}`);
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
