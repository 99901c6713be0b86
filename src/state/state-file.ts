import type { FileIdentity } from './merge.ts';
import { judgeStateText, unreadableState, type StateRefusal } from './read.ts';
import * as fsPromises from 'node:fs/promises';
import { FileReadError, READ_LIMITS, readRegularFile } from '../runtime/read-file.ts';
import { STATE_FORMAT, type Group } from './codec.ts';

/**
 * Reading the state file from disk, with the identity of the file that was read, so a later
 * write can tell whether another writer replaced it since. What the text is trusted for is
 * state/read.ts's decision.
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
    const { dev, ino, size, mtimeMs } = await fsPromises.stat(file);
    return { dev, ino, size, mtimeMs };
  } catch {
    return undefined;
  }
}

/**
 * Reads and judges the state file written for `api`, within `timeoutMs` (--deadline). Throws a
 * FileReadError (exit 1) for a path that is not a regular file (a FIFO, a directory, ...), for a
 * file over 256 MiB and for a read that does not end in time: starting empty there would hide
 * the mistake, and the next write would replace whatever it is. Anything else wrong is data.
 */
export async function readStateFile(
  file: string,
  api: string | undefined,
  timeoutMs?: number,
): Promise<StateRead> {
  let read;
  try {
    // The identity is the one of the file whose text was read (one handle for both).
    read = await readRegularFile(file, {
      subject: `state file ${file}`,
      fix: 'point --state at a file, or at a path where envsync may create one',
      maxBytes: READ_LIMITS.state,
      limit: 'for a state file',
      timeoutMs,
    });
  } catch (error) {
    if (!(error instanceof FileReadError) || error.failure.kind !== 'error') throw error;
    if (error.code === 'ENOENT') return { kind: 'missing' };
    return { ...unreadableState(error.code), identity: undefined };
  }
  const verdict = judgeStateText(read.bytes.toString('utf8'), api, STATE_FORMAT);
  return { ...verdict, identity: read.identity };
}
