import { manifestJsonSchema } from '../manifests/json-schema.ts';
import { parseFlags } from './args.ts';
import type { CommandContext } from './context.ts';

const USAGE = `Usage: envsync schema

Prints the JSON Schema (draft 2020-12) of a manifest document, generated from the schema the
validator uses. Save it and point your editor at it, e.g. with a first line
  # yaml-language-server: $schema=./manifest.schema.json`;

/** `envsync schema`: the manifest JSON Schema on stdout. */
export async function schemaCommand(ctx: CommandContext): Promise<number> {
  const { values } = parseFlags(ctx.argv, { help: { type: 'boolean', short: 'h' } }, USAGE);
  if (values.help) {
    ctx.stdout.write(`${USAGE}\n`);
    return 0;
  }
  ctx.stdout.write(`${JSON.stringify(manifestJsonSchema(), null, 2)}\n`);
  return 0;
}
