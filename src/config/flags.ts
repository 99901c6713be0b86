/** A command's flags, parsed strictly from the settings table, and what an unknown flag meant. */
import * as util from 'node:util';
import { suggest } from '../core/suggest.ts';
import { UsageError } from '../runtime/errors.ts';
import { accepts, flagOf, type CommandName, type Flags, type SettingsTable } from './setting.ts';

/** util.parseArgs options for `command`: every flag of the table it accepts. */
export function flagOptions(
  table: SettingsTable,
  command: CommandName,
): util.ParseArgsOptionsConfig {
  return Object.fromEntries(
    Object.values(table)
      .filter((setting) => accepts(setting, command))
      .map((setting) => {
        const { long, valued, ...short } = flagOf(setting);
        const multiple = setting.parse.separator !== undefined;
        return [long, { type: valued ? 'string' : 'boolean', multiple, ...short }];
      }),
  );
}

/** Parses `command`'s flags; an unknown one comes back as written, for unknownFlagMessage. */
export function parseFlags(
  table: SettingsTable,
  command: CommandName,
  argv: readonly string[],
  { operands, usage }: { readonly operands: boolean; readonly usage: string },
): { flags: Flags; operands: string[] } | { unknown: string } {
  const options = flagOptions(table, command);
  try {
    const { values, positionals } = util.parseArgs({
      args: [...argv],
      options,
      strict: true,
      allowPositionals: operands,
    });
    return { flags: values, operands: positionals };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const { tokens } = util.parseArgs({ args: [...argv], options, strict: false, tokens: true });
      const token = tokens.find((t) => t.kind === 'option' && !Object.hasOwn(options, t.name));
      if (token?.kind === 'option') return { unknown: token.rawName };
    }
    throw new UsageError((error as Error).message.split('\n')[0] ?? 'invalid arguments', usage);
  }
}

/** "validate", "plan and sync", "validate, plan and sync". */
export function listed(names: readonly string[]): string {
  const last = names.at(-1) ?? '';
  return names.length < 2 ? last : `${names.slice(0, -1).join(', ')} and ${last}`;
}

/** The commands that take a flag given as written (`--out`, `-o`), and the verb for them. */
function takers(flag: string, table: SettingsTable): string {
  const name = flag.replace(/^-+/, '');
  const commands = Object.values(table)
    .filter((s) => (flag.startsWith('--') ? flagOf(s).long : flagOf(s).short) === name)
    .flatMap((s) => [...s.commands, ...(s.tolerated ?? [])]);
  const names = [...new Set(commands)];
  if (names.length === 0) return '';
  return `envsync ${listed(names)} ${names.length === 1 ? 'takes' : 'take'} it`;
}

/** What an unknown flag of `command` most likely meant, from the whole settings `table`. */
export function unknownFlagMessage(
  flag: string,
  command: CommandName,
  table: SettingsTable,
): string {
  const [own, others] = [true, false].map((mine) =>
    Object.values(table)
      .filter((s) => accepts(s, command) === mine)
      .map((s) => flagOf(s).long),
  ) as [string[], string[]];
  const name = flag.replace(/^-+/, '');
  // No --token on purpose: a token on the command line ends up in shell histories and process
  // listings. A command that reads the token says how it takes one instead.
  const readsToken = Object.values(table).some(
    (s) => flagOf(s).long === 'token-file' && s.commands.includes(command),
  );
  if (/^--(api-)?token$/.test(flag) && readsToken)
    return `there is no ${flag} flag, so that the token stays out of shell histories and process lists: set ENVSYNC_TOKEN, or pass --token-file PATH (env ENVSYNC_TOKEN_FILE)`;
  const near = flag.startsWith('--') ? suggest(name, own) : undefined;
  if (near !== undefined) return `unknown flag ${flag} (did you mean --${near}?)`;
  const elsewhere = takers(flag, table);
  if (elsewhere !== '') return `${flag} is not a flag of envsync ${command}; ${elsewhere}`;
  const far = flag.startsWith('--') ? suggest(name, others) : undefined;
  if (far !== undefined)
    return `unknown flag ${flag} (did you mean --${far}? ${takers(`--${far}`, table)})`;
  return `unknown flag ${flag}`;
}
