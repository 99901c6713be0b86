import type { CommandContext } from './context.ts';
import { runOneShot } from './one-shot.ts';

/** `envsync plan`: the same as `envsync sync --dry-run`. */
export const planCommand = (ctx: CommandContext): Promise<number> => runOneShot(ctx, 'plan');
