import { printHelp } from './help.ts';
import { parseCommandFlags } from '../config/flags.ts';
import { resolveValues } from '../config/resolve.ts';
import { resolveSettings } from '../config/settings.ts';
import { SETTINGS } from '../config/settings-table.ts';
import { pickSettings } from '../config/setting.ts';
import { CI_SETTINGS } from './ci.ts';
import type { CommandContext } from './context.ts';

import { runPass } from './pass.ts';

const PLAN_SETTINGS = { ...CI_SETTINGS, ...pickSettings(SETTINGS, ['planOut']) };

/** `envsync plan`: the same as `envsync sync --dry-run`. */
export async function planCommand(ctx: CommandContext): Promise<number> {
  const flags = await parseCommandFlags(SETTINGS, 'plan', ctx.argv);
  if (flags.help === true) return printHelp(ctx, 'plan');
  const settings = await resolveSettings(flags, ctx.env, ctx.cwd);
  const { planOut, ...ci } = resolveValues(PLAN_SETTINGS, { flags, env: ctx.env });
  return runPass(ctx, settings, { command: 'plan', dryRun: true, outFile: planOut, ci });
}
