import type { ParseArgsOptionsConfig } from 'node:util';
import * as util from 'node:util';
import { suggest } from '../core/suggest.ts';
import { UsageError } from '../runtime/errors.ts';
import { COMMANDS, type CommandName } from './commands.ts';
import { SETTINGS } from './settings-table.ts';
import { EMULATOR_SETTINGS } from './emulator-settings.ts';
import { accepts, settingsFor, type FlagsOf, type Setting, type SettingsTable } from './setting.ts';

/** The whole settings table: every command's settings, the emulator's included. */
export async function allSettings(): Promise<SettingsTable> {
  return { ...SETTINGS, ...EMULATOR_SETTINGS };
}

/** util.parseArgs options for `command`: every flag of the table it accepts. */
export function flagOptions(table: SettingsTable, command: CommandName): ParseArgsOptionsConfig {
  return Object.fromEntries(
    Object.values(settingsFor(table, command)).map((setting: Setting) => [
      setting.flag,
      {
        type: setting.type,
        ...(setting.short === undefined ? {} : { short: setting.short }),
        ...(setting.repeatable === true ? { multiple: true } : {}),
      },
    ]),
  );
}

/** The line under a flag error: the usage, and where the flags are listed. */
export function shortUsage(command: CommandName): string {
  return `Usage: ${COMMANDS[command].synopsis} ("envsync ${command} --help" lists the flags)`;
}

/**
 * Parses `command`'s flags strictly. An unknown flag is a short usage error with a did-you-mean,
 * or with the commands that do take it.
 */
export async function parseCommandFlags<T extends SettingsTable, C extends CommandName>(
  table: T,
  command: C,
  argv: readonly string[],
): Promise<FlagsOf<T, C>> {
  return (await parseCommandArgs(table, command, argv, false)).flags;
}

/** As parseCommandFlags, for a command that also takes operands (`envsync validate [PATH...]`). */
export async function parseCommandArgs<T extends SettingsTable, C extends CommandName>(
  table: T,
  command: C,
  argv: readonly string[],
  allowPositionals = true,
): Promise<{ flags: FlagsOf<T, C>; positionals: string[] }> {
  const options = flagOptions(table, command);
  try {
    const { values, positionals } = util.parseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals,
    });
    return { flags: values as FlagsOf<T, C>, positionals };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const unknown =
      code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? firstUnknownFlag(argv, options) : undefined;
    const message =
      unknown === undefined
        ? ((error as Error).message.split('\n')[0] ?? 'invalid arguments')
        : unknownFlagMessage(unknown, command, { ...(await allSettings()), ...table });
    throw new UsageError(message, shortUsage(command));
  }
}

/** The first flag of `argv` that `options` does not know, as written (`--manifest`, `-x`). */
function firstUnknownFlag(
  argv: readonly string[],
  options: ParseArgsOptionsConfig,
): string | undefined {
  const { tokens } = util.parseArgs({ args: [...argv], options, strict: false, tokens: true });
  const token = tokens.find((t) => t.kind === 'option' && !Object.hasOwn(options, t.name));
  return token?.kind === 'option' ? token.rawName : undefined;
}

/** "envsync run", "envsync validate, plan and sync". */
function commandList(commands: readonly CommandName[]): string {
  const names = [...new Set(commands)];
  const last = names.pop();
  return `envsync ${names.length === 0 ? last : `${names.join(', ')} and ${last}`}`;
}

/** The commands that take a flag, given as written (`--out`, `-o`). */
function takers(flag: string, table: SettingsTable): CommandName[] {
  const long = flag.startsWith('--');
  const name = flag.replace(/^-+/, '');
  return Object.values(table)
    .filter((s) => (long ? s.flag === name : s.short === name))
    .flatMap((s) => [...s.commands, ...(s.tolerated ?? [])]);
}

/** What an unknown flag of `command` most likely meant. */
export function unknownFlagMessage(
  flag: string,
  command: CommandName,
  table: SettingsTable,
): string {
  const own = Object.values(table).filter((s) => accepts(s, command));
  const name = flag.replace(/^-+/, '');
  // No --token on purpose: a token on the command line ends up in shell histories and process
  // listings. A command that reads the token says how it takes one instead.
  if (
    /^--(api-)?token$/.test(flag) &&
    own.some((s) => s.flag === 'token-file' && s.commands.includes(command))
  ) {
    return `there is no ${flag} flag, so that the token stays out of shell histories and process lists: set ENVSYNC_TOKEN, or pass --token-file PATH (env ENVSYNC_TOKEN_FILE)`;
  }
  if (flag.startsWith('--')) {
    const near = suggest(
      name,
      own.map((s) => s.flag),
    );
    if (near !== undefined) return `unknown flag ${flag} (did you mean --${near}?)`;
  }
  const elsewhere = takers(flag, table);
  if (elsewhere.length > 0) {
    const verb = new Set(elsewhere).size === 1 ? 'takes' : 'take';
    return `${flag} is not a flag of envsync ${command}; ${commandList(elsewhere)} ${verb} it`;
  }
  if (flag.startsWith('--')) {
    const others = Object.values(table).filter((s) => !accepts(s, command));
    const near = suggest(
      name,
      others.map((s) => s.flag),
    );
    if (near !== undefined) {
      const by = takers(`--${near}`, table);
      const verb = new Set(by).size === 1 ? 'takes' : 'take';
      return `unknown flag ${flag} (did you mean --${near}? ${commandList(by)} ${verb} it)`;
    }
  }
  return `unknown flag ${flag}`;
}
