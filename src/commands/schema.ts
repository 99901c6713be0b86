import { manifestJsonSchema } from '../manifests/schema.ts';
import type { CommandContext } from './context.ts';

export const settings = {};

/** `envsync schema`: the manifest JSON Schema on stdout. */
export async function run(ctx: CommandContext): Promise<number> {
  ctx.stdout.write(`${JSON.stringify(manifestJsonSchema(), null, 2)}\n`);
  return 0;
}
