/**
 * argv -> command -> exit code: the only place that turns errors into exit codes. The arguments,
 * environment, working directory and output streams come in the context (src/cli.ts passes the
 * process's), and it never exits or sets the exit code itself, so the one-shot commands also run
 * inside another process (the tests). `run` and `emulator` are the exception: they wait for stop
 * signals, which are the process's (src/commands/signals.ts).
 */
import { COMMAND_NAMES, type CommandName } from './config/commands.ts';
import { Masker } from './core/mask.ts';
import { suggest } from './core/suggest.ts';
import { maskingStream } from './runtime/log.ts';
import { ConfigError, errorMessage, UsageError } from './runtime/errors.ts';
import { VERSION } from './runtime/version.ts';
import type { Command, CommandContext } from './commands/context.ts';

const COMMANDS: Record<CommandName, () => Promise<Command>> = {
  validate: async () => (await import('./commands/validate.ts')).validateCommand,
  plan: async () => (await import('./commands/plan.ts')).planCommand,
  sync: async () => (await import('./commands/sync.ts')).syncCommand,
  run: async () => (await import('./commands/run.ts')).runCommand,
  export: async () => (await import('./commands/export.ts')).exportCommand,
  schema: async () => (await import('./commands/schema.ts')).schemaCommand,
  emulator: async () => (await import('./commands/emulator.ts')).emulatorCommand,
};

function isCommand(name: string): name is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(name);
}

/** The error for a first word that is no command: a short line with a did-you-mean. */
function unknownFirstWord(first: string): string {
  if (first.startsWith('-')) {
    const near = suggest(first.replace(/^-+/, ''), ['help', 'version']);
    const hint =
      near === undefined ? ' (flags go after the command)' : ` (did you mean --${near}?)`;
    return `envsync: unknown flag ${first}${hint}\nRun "envsync --help" for the list of commands.\n`;
  }
  const near = suggest(first, COMMAND_NAMES);
  const hint = near === undefined ? '' : ` (did you mean "${near}"?)`;
  return `envsync: unknown command "${first}"${hint}\nRun "envsync --help" for the list of commands.\n`;
}

/**
 * Runs the CLI and returns the exit code. Whatever is written to stdout and stderr, the errors
 * below included, has every secret the command learns masked.
 */
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
    const { rootHelp } = await import('./commands/help.ts');
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
    const command = await COMMANDS[first]();
    return await command({ ...ctx, argv: rest });
  } catch (error) {
    if (error instanceof UsageError) {
      ctx.stderr.write(`envsync ${first}: ${error.message}\n`);
      ctx.stderr.write(error.usage ? `${error.usage}\n` : `Run "envsync ${first} --help".\n`);
      return 1;
    }
    if (error instanceof ConfigError) {
      ctx.stderr.write(`envsync ${first}: ${error.message}\n`);
      return 1;
    }
    ctx.stderr.write(`envsync ${first}: unexpected error: ${errorMessage(error)}\n`);
    return 1;
  }
}
