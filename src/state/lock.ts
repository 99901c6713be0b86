/**
 * One writer per state file at a time: `<state>.lock`, holding the writer's pid, host name and
 * start time, linked into place whole (the link fails when it exists). It is held only while the
 * file is re-read, merged and written (docs/state.md), so a holder that keeps it for long is gone,
 * not busy, and its lock is reclaimed (judgeLock).
 */
import * as fsPromises from 'node:fs/promises';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import * as z from 'zod';
import type { Clock } from '../core/clock.ts';
import { formatDuration } from '../config/duration.ts';
import { READ_LIMITS, readRegularFile } from '../runtime/read-file.ts';
import { StateLockTimeoutError } from './errors.ts';
import { isAlive } from './files.ts';

const holderSchema = z.object({
  pid: z.int().positive(),
  hostname: z.string(),
  /** ISO time the lock was taken. */
  startedAt: z.string(),
});
export type LockHolder = z.infer<typeof holderSchema>;

/** How long a lock from another host (or one whose content cannot be read) is honoured. */
export const FOREIGN_LOCK_STALE_MS = 60_000;

/**
 * What a waiter knows about a lock in its way: its holder (undefined when the file cannot be read
 * as one), this process, whether a pid runs on this host, and how long ago the lock was written.
 */
export interface LockFacts {
  readonly holder: LockHolder | undefined;
  readonly here: { readonly hostname: string; readonly pid: number };
  readonly alive: (pid: number) => boolean;
  readonly ageMs: number;
}

/**
 * Why a lock found on the state file is stale, or undefined while it is held. On this host, its
 * holder's pid is asked (our own pid, when this process does not hold it, is a process before a
 * container restart); from another host, or unreadable, it is honoured for FOREIGN_LOCK_STALE_MS.
 */
export function judgeLock({ holder, here, alive, ageMs }: LockFacts): string | undefined {
  if (holder === undefined || holder.hostname !== here.hostname) {
    if (ageMs <= FOREIGN_LOCK_STALE_MS) return undefined;
    const who = holder === undefined ? 'an unreadable lock' : `host ${holder.hostname}`;
    return `${who}, last written ${Math.round(ageMs / 1000)}s ago (more than ${FOREIGN_LOCK_STALE_MS / 1000}s)`;
  }
  if (holder.pid === here.pid) return `pid ${holder.pid} is this process, which does not hold it`;
  return alive(holder.pid) ? undefined : `pid ${holder.pid} is not running`;
}

/** Lock files this process holds: a second store of the same file in this process waits too. */
const heldHere = new Set<string>();

/** What a lock file in the way says, which file (inode) it is, and how old; undefined if gone. */
async function inspect(lockFile: string, clock: Clock, timeoutMs: number | undefined) {
  try {
    const { bytes, identity } = await readRegularFile(lockFile, {
      subject: `the state file's lock ${lockFile}`,
      fix: 'delete it (envsync creates the lock as a file, and deletes it when done)',
      maxBytes: READ_LIMITS.stateLock,
      limit: 'for a lock file',
      timeoutMs,
    });
    let holder: LockHolder | undefined;
    try {
      holder = holderSchema.parse(JSON.parse(bytes.toString('utf8')));
    } catch {
      holder = undefined; // empty or partly written
    }
    return { holder, ino: identity.ino, ageMs: Math.max(0, clock.now() - identity.mtimeMs) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // released meanwhile
    throw error;
  }
}

/** Creates the lock file; its inode, or undefined when another lock is there. */
async function create(lockFile: string, clock: Clock): Promise<number | undefined> {
  const holder: LockHolder = {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date(clock.now()).toISOString(),
  };
  // The holder is written in full before the lock exists, then linked into place (a link fails
  // if the lock exists, like O_EXCL): a writer killed at any moment leaves no lock or a whole
  // one, never an empty one that nobody could judge. Its temp file goes at the next load.
  const temp = `${lockFile}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await fsPromises.writeFile(temp, `${JSON.stringify(holder)}\n`, { flag: 'wx' });
    const { ino } = await fsPromises.stat(temp);
    await fsPromises.link(temp, lockFile);
    return ino;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  } finally {
    await fsPromises.unlink(temp).catch(() => undefined);
  }
}

/** Removes `file` if it is still the inode `ino`: never another writer's lock. */
async function unlinkIfStill(file: string, ino: number): Promise<boolean> {
  const now = await fsPromises.stat(file).catch(() => undefined);
  if (now?.ino !== ino) return false;
  await fsPromises.unlink(file).catch(() => undefined);
  return true;
}

/**
 * Takes the lock of `file`, waiting up to `timeoutMs` for another writer; resolves with its
 * release. Throws StateLockTimeoutError when the wait is over, and the file system's own error
 * (EACCES, EROFS, ENOSPC, ...) when the lock cannot be created at all. A lock's age is the clock's
 * time less the lock file's modification time: on a clock behind the real one, locks look new.
 */
export async function acquireStateLock(
  file: string,
  options: {
    readonly timeoutMs: number;
    /** How long a read of a lock in the way may take (--deadline). */
    readonly readTimeoutMs?: number | undefined;
    readonly logger: Logger;
    readonly clock: Clock;
  },
): Promise<() => Promise<void>> {
  const { timeoutMs, readTimeoutMs, logger, clock } = options;
  const lockFile = `${file}.lock`;
  const deadline = clock.now() + timeoutMs;
  let delayMs = 10;
  let last: LockHolder | undefined;
  for (;;) {
    if (!heldHere.has(lockFile)) {
      const ino = await create(lockFile, clock);
      if (ino !== undefined) {
        heldHere.add(lockFile);
        return async () => {
          heldHere.delete(lockFile);
          // Only our own lock: one reclaimed from us by mistake belongs to its new holder.
          await unlinkIfStill(lockFile, ino);
        };
      }
      const found = await inspect(lockFile, clock, readTimeoutMs);
      if (found === undefined) continue;
      const here = { hostname: hostname(), pid: process.pid };
      const stale = judgeLock({ holder: found.holder, here, alive: isAlive, ageMs: found.ageMs });
      if (stale !== undefined) {
        // Only the lock judged: if another waiter reclaimed it first, theirs stays.
        if (await unlinkIfStill(lockFile, found.ino)) {
          logger.warn(
            { stateFile: file, lockFile, holder: found.holder },
            `reclaimed the state file's lock ${lockFile}: its holder is gone (${stale})`,
          );
        }
        if (clock.now() < deadline) continue;
      }
      last = found.holder;
    }
    const left = deadline - clock.now();
    if (left <= 0) {
      const holder =
        last === undefined
          ? 'a holder that cannot be read'
          : `pid ${last.pid} on host ${last.hostname}, since ${last.startedAt}`;
      throw new StateLockTimeoutError(
        file,
        `the state file ${file} is locked by another envsync writer (${holder}); ` +
          `waited ${formatDuration(timeoutMs)} for it. If that process is still running, let it ` +
          `finish or raise --state-lock-timeout (ENVSYNC_STATE_LOCK_TIMEOUT); if it is gone, ` +
          `delete ${lockFile}`,
      );
    }
    await clock.sleep(Math.min(delayMs, left));
    delayMs = Math.min(delayMs * 2, 200);
  }
}
