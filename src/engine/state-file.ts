import type { FileIdentity } from '../core/state-merge.ts';
import { judgeStateText, unreadableState, type StateRefusal } from '../core/state-read.ts';
import { fsPromises } from '../runtime/builtins.ts';
import { STATE_FORMAT, type Group } from './state-codec.ts';

/**
 * Reading the state file from disk, with the identity of the file that was read, so a later
 * write can tell whether another writer replaced it since. What the text is trusted for is
 * core/state-read.ts's decision.
 */

/** What reading the state file gave: its orgs, or why it is taken as empty. */
export type StateRead =
  | {
      readonly kind: 'ok';
      readonly orgs: Map<string, readonly Group[]>;
      readonly identity: FileIdentity;
    }
  | { readonly kind: 'missing' }
  | (StateRefusal & { readonly identity: FileIdentity | undefined });

/** The identity of the file at `file` now; undefined when there is none (or it cannot be asked). */
export async function identityOf(file: string): Promise<FileIdentity | undefined> {
  try {
    const { dev, ino, size, mtimeMs } = await fsPromises().stat(file);
    return { dev, ino, size, mtimeMs };
  } catch {
    return undefined;
  }
}

/** Reads and judges the state file written for `api`; never throws. */
export async function readStateFile(file: string, api: string | undefined): Promise<StateRead> {
  let text: string;
  let identity: FileIdentity;
  try {
    // One handle for both, so the identity is the one of the file whose text was read.
    const handle = await fsPromises().open(file, 'r');
    try {
      const { dev, ino, size, mtimeMs } = await handle.stat();
      identity = { dev, ino, size, mtimeMs };
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    return { ...unreadableState(code), identity: undefined };
  }
  const verdict = judgeStateText(text, api, STATE_FORMAT);
  return { ...verdict, identity };
}
