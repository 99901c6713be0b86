import type { CommandContext } from './context.ts';
import { runOneShot } from './one-shot.ts';

/** `envsync validate`: manifests only, offline. */
export const validateCommand = (ctx: CommandContext): Promise<number> =>
  runOneShot(ctx, 'validate');
