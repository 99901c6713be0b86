import type { CommandContext } from './context.ts';

/** `envsync emulator`: to be written (issue 2). */
export async function emulatorCommand(_ctx: CommandContext): Promise<number> {
  throw new Error('not yet');
}
