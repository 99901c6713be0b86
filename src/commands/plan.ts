import { resolveValues, type Flags } from '../config/setting.ts';
import { resolveSettings } from '../config/settings.ts';
import type { CommandContext } from './context.ts';
import { PASS_SETTINGS, runPass } from './pass.ts';

export const settings = PASS_SETTINGS;

/** `envsync plan`: the same as `envsync sync --dry-run`. */
export async function run(ctx: CommandContext, flags: Flags): Promise<number> {
  const resolved = await resolveSettings(flags, ctx.env, ctx.cwd);
  const { planOut, ...ci } = resolveValues(PASS_SETTINGS, { flags, env: ctx.env });
  return runPass(ctx, resolved, { command: 'plan', dryRun: true, outFile: planOut, ci });
}
