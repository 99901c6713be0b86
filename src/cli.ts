#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=20
/**
 * envsync's entry point: argv -> command. The only place that turns errors into exit codes.
 */
import module from 'node:module';
import { ConfigError, UsageError, errorMessage } from './errors.ts';
import { VERSION } from './version.ts';
import type { Command, CommandContext } from './commands/context.ts';

interface CommandEntry {
  readonly summary: string;
  readonly load: () => Promise<Command>;
}

const COMMANDS: Record<string, CommandEntry> = {
  validate: {
    summary: 'validate the manifests (offline, no token)',
    load: async () => (await import('./commands/validate.ts')).validateCommand,
  },
  plan: {
    summary: 'show what sync would change (never writes)',
    load: async () => (await import('./commands/plan.ts')).planCommand,
  },
  sync: {
    summary: 'make the service match the manifests (--dry-run: plan only)',
    load: async () => (await import('./commands/sync.ts')).syncCommand,
  },
  run: {
    summary: 'keep the service in step with the manifests, continuously',
    load: async () => (await import('./commands/run.ts')).runCommand,
  },
  export: {
    summary: "write orgs' environments, as the API lists them, as manifests",
    load: async () => (await import('./commands/export.ts')).exportCommand,
  },
  schema: {
    summary: 'print the JSON Schema of a manifest (for editors)',
    load: async () => (await import('./commands/schema.ts')).schemaCommand,
  },
  emulator: {
    summary: 'run a local emulator of the Environments API',
    load: async () => (await import('./commands/emulator.ts')).emulatorCommand,
  },
};

const USAGE = `Usage: envsync <command> [flags]

Commands:
${Object.entries(COMMANDS)
  .map(([name, entry]) => `  ${name.padEnd(10)} ${entry.summary}`)
  .join('\n')}

Flags:
  -h, --help     show this help (also: envsync <command> --help)
  -V, --version  print the version

Exit codes: 0 success, 1 error, 2 changes pending (only with --detailed-exitcode).`;

// Cache compiled code between runs (in the OS temp folder; silently off where it cannot write):
// the commands below are loaded after this line, and start-up matters to a CI step.
module.enableCompileCache?.();

/** Runs the CLI and returns the exit code. */
export async function main(ctx: CommandContext): Promise<number> {
  const [first, ...rest] = ctx.argv;
  if (first === undefined || first === '-h' || first === '--help' || first === 'help') {
    ctx.stdout.write(`${USAGE}\n`);
    return first === undefined ? 1 : 0;
  }
  if (first === '-V' || first === '--version') {
    ctx.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const entry = Object.hasOwn(COMMANDS, first) ? COMMANDS[first] : undefined;
  if (entry === undefined) {
    ctx.stderr.write(
      `envsync: unknown ${first.startsWith('-') ? 'flag' : 'command'} "${first}"\n` +
        `Run "envsync --help" for the list of commands.\n`,
    );
    return 1;
  }
  try {
    const command = await entry.load();
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

const code = await main({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
});
process.exitCode = code;
