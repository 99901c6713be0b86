/**
 * One writer per state file at a time: `<state>.lock` holds the writer's pid, host name and start
 * time. It is held only while the file is re-read, merged and written (docs/state.md), so a holder
 * that keeps it for long is gone, not busy, and its lock is reclaimed.
 */
import * as fsPromises from 'node:fs/promises';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import * as z from 'zod';
import type { Clock } from '../core/clock.ts';
import { formatDuration } from '../config/duration.ts';
import { READ_LIMITS, readRegularFile } from '../runtime/read-file.ts';
import { ConfigError } from '../runtime/errors.ts';
import { isAlive } from './files.ts';

const holderSchema = z.object({
  pid: z.int().positive(),
  hostname: z.string(),
  startedAt: z.string(),
});
type LockHolder = z.infer<typeof holderSchema>;

/** How long a lock from another host (or one whose content cannot be read) is honoured. */
export const FOREIGN_LOCK_STALE_MS = 60_000;

/** A lock in a waiter's way: its holder (undefined: unreadable), how long ago it was written. */
export interface LockFacts {
  readonly holder: LockHolder | undefined;
  readonly ageMs: number;
  readonly here: { readonly hostname: string; readonly pid: number };
  readonly alive: (pid: number) => boolean;
}

/**
 * Why a lock is stale, or undefined while it is held. On this host its holder's pid is asked (our
 * own pid, not held here, is a process before a container restart); from another host, or
 * unreadable, it is honoured for FOREIGN_LOCK_STALE_MS.
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

/** Lock files this process holds: a second store of the same file waits too. */
const heldHere = new Set<string>();

/**
 * Creates the lock file: its inode, or undefined when another lock is there. It is written whole,
 * then linked into place, so a writer killed at any moment leaves no lock or a whole one.
 */
async function create(lockFile: string, holder: LockHolder): Promise<number | undefined> {
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

/** Removes `file` if it is still the inode `ino`, never a lock that replaced it. */
async function unlinkIfStill(file: string, ino: number): Promise<boolean> {
  if ((await fsPromises.stat(file).catch(() => undefined))?.ino !== ino) return false;
  await fsPromises.unlink(file).catch(() => undefined);
  return true;
}

/**
 * Takes the lock of `file`, waiting up to `timeoutMs` for another writer; resolves with its
 * release. Throws a ConfigError naming the holder when the wait is over.
 */
export async function acquireStateLock(
  file: string,
  {
    timeoutMs,
    readTimeoutMs,
    logger,
    clock,
  }: {
    readonly timeoutMs: number;
    /** How long a read of a lock in the way may take (--deadline). */
    readonly readTimeoutMs: number | undefined;
    readonly logger: Logger;
    readonly clock: Clock;
  },
): Promise<() => Promise<void>> {
  const lockFile = `${file}.lock`;
  const here = { hostname: hostname(), pid: process.pid };
  const deadline = clock.now() + timeoutMs;
  let delayMs = 10;
  let last: LockHolder | undefined;
  for (;;) {
    if (!heldHere.has(lockFile)) {
      const ino = await create(lockFile, {
        ...here,
        startedAt: new Date(clock.now()).toISOString(),
      });
      if (ino !== undefined) {
        heldHere.add(lockFile);
        return async () => {
          heldHere.delete(lockFile);
          await unlinkIfStill(lockFile, ino); // one reclaimed from us belongs to its new holder
        };
      }
      const found = await readRegularFile(lockFile, {
        subject: `the state file's lock ${lockFile}`,
        fix: 'delete it (envsync creates the lock as a file, and deletes it when done)',
        maxBytes: READ_LIMITS.stateLock,
        limit: 'for a lock file',
        timeoutMs: readTimeoutMs,
      }).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // let go meanwhile
        throw error;
      });
      if (found === undefined) continue;
      const { ino: foundIno, mtimeMs } = found.identity;
      const ageMs = Math.max(0, clock.now() - mtimeMs);
      let holder: LockHolder | undefined;
      try {
        holder = holderSchema.parse(JSON.parse(found.bytes.toString('utf8')));
      } catch {
        holder = undefined;
      }
      const stale = judgeLock({ holder, ageMs, here, alive: isAlive });
      // Only the lock judged: if another waiter reclaimed it first, theirs stays.
      if (stale !== undefined && (await unlinkIfStill(lockFile, foundIno))) {
        logger.warn(
          { stateFile: file, lockFile, holder },
          `reclaimed the state file's lock ${lockFile}: its holder is gone (${stale})`,
        );
      }
      if (stale !== undefined && clock.now() < deadline) continue;
      last = holder;
    }
    const left = deadline - clock.now();
    if (left <= 0) {
      const who = last
        ? `pid ${last.pid} on host ${last.hostname}, since ${last.startedAt}`
        : 'a holder that cannot be read';
      throw new ConfigError(
        `the state file ${file} is locked by another envsync writer (${who}); waited ${formatDuration(timeoutMs)} for it. If that process is still running, let it finish or raise --state-lock-timeout (ENVSYNC_STATE_LOCK_TIMEOUT); if it is gone, delete ${lockFile}`,
      );
    }
    await clock.sleep(Math.min(delayMs, left));
    delayMs = Math.min(delayMs * 2, 200);
  }
}
