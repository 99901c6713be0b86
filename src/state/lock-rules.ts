/**
 * When the state file's lock may be taken from its holder (pure; state/lock.ts carries it
 * out). The lock is held only while the file is re-read, merged and written, so a holder that
 * keeps it for long is gone, not busy.
 */

/** What a lock file says about its holder. */
export interface LockHolder {
  readonly pid: number;
  readonly hostname: string;
  /** ISO time the lock was taken. */
  readonly startedAt: string;
}

/** How long a lock from another host (or one whose content cannot be read) is honoured. */
export const FOREIGN_LOCK_STALE_MS = 60_000;

/** What the waiter knows about a lock it found. */
export interface LockFacts {
  /** What the lock file says; undefined when it cannot be read as a holder. */
  readonly holder: LockHolder | undefined;
  /** This process: its host name and pid. */
  readonly here: { readonly hostname: string; readonly pid: number };
  /** Whether a process with the holder's pid runs on this host (asked only for this host). */
  readonly alive: (pid: number) => boolean;
  /** How long ago the lock file was last written. */
  readonly ageMs: number;
}

export type LockVerdict =
  | { readonly kind: 'held' }
  | { readonly kind: 'stale'; readonly reason: string };

/**
 * Whether a lock found on the state file is still held. On this host, its holder's pid is asked
 * (our own pid, when this process does not hold it, is a process before a container restart);
 * from another host, or unreadable, it is honoured for FOREIGN_LOCK_STALE_MS.
 */
export function judgeLock({ holder, here, alive, ageMs }: LockFacts): LockVerdict {
  if (holder === undefined || holder.hostname !== here.hostname) {
    if (ageMs <= FOREIGN_LOCK_STALE_MS) return { kind: 'held' };
    const who = holder === undefined ? 'an unreadable lock' : `host ${holder.hostname}`;
    return {
      kind: 'stale',
      reason: `${who}, last written ${Math.round(ageMs / 1000)}s ago (more than ${FOREIGN_LOCK_STALE_MS / 1000}s)`,
    };
  }
  if (holder.pid === here.pid) {
    return { kind: 'stale', reason: `pid ${holder.pid} is this process, which does not hold it` };
  }
  if (!alive(holder.pid)) return { kind: 'stale', reason: `pid ${holder.pid} is not running` };
  return { kind: 'held' };
}

/** Reads a lock file's content; undefined when it is not a holder (empty, partly written). */
export function parseLockHolder(text: string): LockHolder | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { pid, hostname, startedAt } = value as Record<string, unknown>;
  if (!Number.isSafeInteger(pid) || (pid as number) <= 0) return undefined;
  if (typeof hostname !== 'string' || typeof startedAt !== 'string') return undefined;
  return { pid: pid as number, hostname, startedAt };
}

/** How errors name a holder. */
export function describeHolder(holder: LockHolder | undefined): string {
  if (holder === undefined) return 'a holder that cannot be read';
  return `pid ${holder.pid} on host ${holder.hostname}, since ${holder.startedAt}`;
}
