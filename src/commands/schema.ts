import { printHelp } from './help.ts';
import { parseCommandFlags } from '../config/flags.ts';
import { SETTINGS } from '../config/settings-table.ts';
import { manifestJsonSchema } from '../manifests/schema.ts';
import type { CommandContext } from './context.ts';

/** `envsync schema`: the manifest JSON Schema on stdout. */
export async function schemaCommand(ctx: CommandContext): Promise<number> {
  const flags = await parseCommandFlags(SETTINGS, 'schema', ctx.argv);
  if (flags.help === true) return printHelp(ctx, 'schema');
  ctx.stdout.write(`${JSON.stringify(manifestJsonSchema(), null, 2)}\n`);
  return 0;
}
