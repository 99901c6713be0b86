/** argv -> command -> exit code, and errors into exit codes; it never exits the process. */
import { COMMANDS as HELP, commandHelp, rootHelp, shortUsage } from './commands/help.ts';
import type { Command, CommandContext } from './commands/context.ts';
import { parseFlags, unknownFlagMessage } from './config/flags.ts';
import { COMMAND_NAMES, type CommandName, type SettingsTable } from './config/setting.ts';
import { GENERAL_SETTINGS, SETTINGS } from './config/settings.ts';
import { Masker } from './core/mask.ts';
import { suggest } from './core/suggest.ts';
import { ConfigError, UsageError, errorMessage } from './runtime/errors.ts';
import { maskingStream } from './runtime/log.ts';
import { VERSION } from './runtime/version.ts';

/** Each command's module (its own flags and the command), loaded when it runs. */
const COMMANDS: Record<CommandName, () => Promise<{ settings: SettingsTable; run: Command }>> = {
  validate: () => import('./commands/validate.ts'),
  plan: () => import('./commands/plan.ts'),
  sync: () => import('./commands/sync.ts'),
  run: () => import('./commands/run.ts'),
  status: () => import('./commands/status.ts'),
  export: () => import('./commands/export.ts'),
  migrate: () => import('./commands/migrate.ts'),
  schema: () => import('./commands/schema.ts'),
  emulator: () => import('./commands/emulator.ts'),
};

/** The settings whose flags `command` may take: the shared ones and its own. */
export async function settingsOf(command: CommandName): Promise<SettingsTable> {
  return { ...SETTINGS, ...GENERAL_SETTINGS, ...(await COMMANDS[command]()).settings };
}

/** The whole settings table: every command's settings, in the order of the docs. */
export async function allSettings(): Promise<SettingsTable> {
  return Object.assign({}, ...(await Promise.all(COMMAND_NAMES.map(settingsOf))));
}

function isCommand(name: string): name is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(name);
}

/** The error for a first word that is no command, with a did-you-mean. */
function unknownFirstWord(first: string): string {
  const more = 'Run "envsync --help" for the list of commands.';
  if (first.startsWith('-')) {
    const near = suggest(first.replace(/^-+/, ''), ['help', 'version']);
    const hint = near === undefined ? '(flags go after the command)' : `(did you mean --${near}?)`;
    return `envsync: unknown flag ${first} ${hint}\n${more}\n`;
  }
  const near = suggest(first, COMMAND_NAMES);
  const hint = near === undefined ? '' : ` (did you mean "${near}"?)`;
  return `envsync: unknown command "${first}"${hint}\n${more}\n`;
}

/** Parses `command`'s flags and runs it, or prints its --help. */
async function runCommand(ctx: CommandContext, command: CommandName): Promise<number> {
  const module = await COMMANDS[command]();
  const table = await settingsOf(command);
  const usage = shortUsage(command);
  const parsed = parseFlags(table, command, ctx.argv, {
    operands: HELP[command].operands === true,
    usage,
  });
  if ('unknown' in parsed) {
    throw new UsageError(unknownFlagMessage(parsed.unknown, command, await allSettings()), usage);
  }
  if (parsed.flags['help'] === true) {
    ctx.stdout.write(`${commandHelp(command, table)}\n`);
    return 0;
  }
  return module.run(ctx, parsed.flags, parsed.operands);
}

/** Runs the CLI, returning its exit code; stdout and stderr mask every secret it learns. */
export async function main(given: Omit<CommandContext, 'secrets'>): Promise<number> {
  const secrets = new Masker();
  const ctx: CommandContext = {
    ...given,
    stdout: maskingStream(given.stdout, secrets.mask),
    stderr: maskingStream(given.stderr, secrets.mask),
    secrets,
  };
  const [first, ...rest] = ctx.argv;
  if (first === undefined || first === '-h' || first === '--help' || first === 'help') {
    ctx.stdout.write(`${rootHelp()}\n`);
    return first === undefined ? 1 : 0;
  }
  if (first === '-V' || first === '--version') {
    ctx.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (!isCommand(first)) {
    ctx.stderr.write(unknownFirstWord(first));
    return 1;
  }
  try {
    return await runCommand({ ...ctx, argv: rest }, first);
  } catch (error) {
    const expected = error instanceof UsageError || error instanceof ConfigError;
    ctx.stderr.write(
      `envsync ${first}: ${expected ? '' : 'unexpected error: '}${errorMessage(error)}\n`,
    );
    if (error instanceof UsageError) {
      ctx.stderr.write(error.usage ? `${error.usage}\n` : `Run "envsync ${first} --help".\n`);
    }
    return 1;
  }
}
