import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import { describeHolder, judgeLock, parseLockHolder, type LockHolder } from './lock-rules.ts';
import { isAlive } from './files.ts';
import { formatDuration, StateLockTimeoutError } from './errors.ts';
import * as fsPromises from 'node:fs/promises';
import { READ_LIMITS, readRegularFile } from '../runtime/read-file.ts';

/**
 * One writer per state file at a time: `<state>.lock`, linked into place whole (the link fails
 * when it exists), holding the writer's pid, host name and start time. It is held only while the file is re-read, merged and written
 * (see docs/state.md); a lock whose holder is gone is reclaimed (state/lock-rules.ts decides).
 */

/** Lock files this process holds: a second store of the same file in this process waits too. */
const heldHere = new Set<string>();

/** What a lock file found in the way says, and which file (inode) it was. */
async function inspect(
  lockFile: string,
  clock: Clock,
  timeoutMs: number | undefined,
): Promise<{ holder: LockHolder | undefined; ino: number; ageMs: number } | undefined> {
  try {
    const { bytes, identity } = await readRegularFile(lockFile, {
      subject: `the state file's lock ${lockFile}`,
      fix: 'delete it (envsync creates the lock as a file, and deletes it when done)',
      maxBytes: READ_LIMITS.stateLock,
      limit: 'for a lock file',
      timeoutMs,
    });
    const holder = parseLockHolder(bytes.toString('utf8'));
    return { holder, ino: identity.ino, ageMs: Math.max(0, clock.now() - identity.mtimeMs) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // released meanwhile
    throw error;
  }
}

/** Creates the lock file, or returns undefined when another one is there. */
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
    try {
      await fsPromises.link(temp, lockFile);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw error;
    }
    return ino;
  } finally {
    await fsPromises.unlink(temp).catch(() => undefined);
  }
}

/**
 * Takes the lock of `file`, waiting up to `timeoutMs` for another writer; resolves with its
 * release. Throws StateLockTimeoutError when the wait is over, and the file system's own error
 * (EACCES, EROFS, ENOSPC, ...) when the lock cannot be created at all. A lock's age is the clock's
 * time less the lock file's modification time: on a clock behind the real one, locks look new.
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
    readonly readTimeoutMs?: number | undefined;
    readonly logger: Logger;
    readonly clock: Clock;
  },
): Promise<() => Promise<void>> {
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
          const now = await fsPromises.stat(lockFile).catch(() => undefined);
          if (now?.ino === ino) await fsPromises.unlink(lockFile).catch(() => undefined);
        };
      }
      const found = await inspect(lockFile, clock, readTimeoutMs);
      if (found === undefined) continue;
      const verdict = judgeLock({
        holder: found.holder,
        here: { hostname: hostname(), pid: process.pid },
        alive: isAlive,
        ageMs: found.ageMs,
      });
      if (verdict.kind === 'stale') {
        // Only the lock judged: if another waiter reclaimed it first, theirs stays.
        const again = await fsPromises.stat(lockFile).catch(() => undefined);
        if (again?.ino === found.ino) {
          await fsPromises.unlink(lockFile).catch(() => undefined);
          logger.warn(
            { stateFile: file, lockFile, holder: found.holder },
            `reclaimed the state file's lock ${lockFile}: its holder is gone (${verdict.reason})`,
          );
        }
        if (clock.now() < deadline) continue;
      }
      last = found.holder;
    }
    const left = deadline - clock.now();
    if (left <= 0) {
      throw new StateLockTimeoutError(
        file,
        `the state file ${file} is locked by another envsync writer (${describeHolder(last)}); ` +
          `waited ${formatDuration(timeoutMs)} for it. If that process is still running, let it ` +
          `finish or raise --state-lock-timeout (ENVSYNC_STATE_LOCK_TIMEOUT); if it is gone, ` +
          `delete ${lockFile}`,
      );
    }
    await clock.sleep(Math.min(delayMs, left));
    delayMs = Math.min(delayMs * 2, 200);
  }
}
