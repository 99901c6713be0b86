/**
 * How a write of the state file takes in what another writer saved (pure; state/store.ts
 * carries it out under the file's lock). Every write is a merge, so two runs restricted to
 * different orgs, or a sync beside the daemon, keep each other's records (docs/state.md).
 */

/** Which file a path named when it was read or written: a rename puts a new one in place. */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

/**
 * Whether the file on disk (undefined: there is none) is still the one this process last read
 * or wrote: then nobody else wrote it since, and it need not be read again.
 */
export function sameFile(
  onDisk: FileIdentity | undefined,
  known: FileIdentity | undefined,
): boolean {
  if (onDisk === undefined || known === undefined) return onDisk === known;
  return (
    onDisk.dev === known.dev &&
    onDisk.ino === known.ino &&
    onDisk.size === known.size &&
    onDisk.mtimeMs === known.mtimeMs
  );
}

/** What taking in another writer's file changes in this process's orgs. */
export interface MergePlan {
  /** Orgs this process holds and did not change, which the other writer's file no longer has. */
  readonly drop: readonly string[];
  /** Orgs whose records are taken from the other writer's file. */
  readonly take: readonly string[];
}

/**
 * The orgs this process changed since its last write (`mine`) stay as it has them, whatever the
 * file says: they are what it is about to write. Every other org reads as the other writer's
 * file has it: taken from there, or dropped when the file no longer holds it.
 */
export function planMerge(
  held: Iterable<string>,
  theirs: Iterable<string>,
  mine: (org: string) => boolean,
): MergePlan {
  const inTheirs = new Set(theirs);
  const drop: string[] = [];
  for (const org of held) if (!mine(org) && !inTheirs.has(org)) drop.push(org);
  const take = [...inTheirs].filter((org) => !mine(org));
  return { drop, take };
}
