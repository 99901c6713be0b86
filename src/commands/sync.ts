import type { CommandContext } from './context.ts';
import { runOneShot } from './one-shot.ts';

/** `envsync sync [--dry-run]`: plan, apply, verify, record. */
export const syncCommand = (ctx: CommandContext): Promise<number> => runOneShot(ctx, 'sync');
