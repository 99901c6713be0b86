import * as fsPromises from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import type { AppliedLookup, AppliedRecord, Records } from '../core/model.ts';
import { Masker } from '../core/mask.ts';
import { emptyMap } from '../core/plain-object.ts';
import { ConfigError } from '../runtime/errors.ts';
import { FileReadError, READ_LIMITS, readRegularFile } from '../runtime/read-file.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { stateWriteError } from './errors.ts';
import { removeStaleTempFiles, writeFileAtomic } from './files.ts';
import { parseState, STATE_VERSION, stateText } from './format.ts';
import { acquireStateLock } from './lock.ts';

export { StateLockTimeoutError, StateWriteError } from './errors.ts';

export interface StateStoreOptions {
  /** The secrets the file never holds (format.ts, stateText); none by default. */
  readonly secrets?: Masker | undefined;
  /** How long a save waits for another writer's lock (--state-lock-timeout; 30 s by default). */
  readonly lockTimeoutMs?: number | undefined;
  /** The time, for the lock's waits and the holder's start (the real clock by default). */
  readonly clock?: Clock | undefined;
  /** Log, once, the write that creates the file (the default path, made without being asked). */
  readonly announceCreation?: boolean | undefined;
  /** How long a read of the file or of its lock may take (--deadline; 5 minutes by default). */
  readonly readTimeoutMs?: number | undefined;
}

/** Which file a path named when it was read or written: a rename puts a new one in place. */
const identityOf = (stats: { dev: number; ino: number; size: number; mtimeMs: number }) =>
  `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;

/** The identity of the file at `file` now; undefined when there is none. */
const identityNow = async (file: string) => fsPromises.stat(file).then(identityOf, () => undefined);

/**
 * The state file in memory: per org and environment, what envsync last applied of the fields a
 * listing may not carry, and the fingerprint of what it last applied (core/drift.ts). Reading
 * it is forgiving: a broken file is a warning and an empty state, which costs one extra PUT per
 * environment, never a wrong change. Writing it is not: a save that fails rejects with a
 * StateWriteError, and the engine sends nothing it could not record first (docs/state.md).
 * Each write takes the file's lock, re-reads the file if another writer changed it, keeps that
 * writer's records of every org this store did not change, and replaces the file atomically.
 */
export class StateStore {
  readonly file: string;
  readonly api: string | undefined;
  readonly #orgs = new Map<string, Records>();
  readonly #logger: Logger;
  readonly #options: StateStoreOptions;
  /** The file as this store last read or wrote it: while it is still that file, no re-read. */
  #identity: string | undefined;
  /** Orgs set since the last write that holds them: this store's, whatever the file says. */
  readonly #dirty = new Set<string>();
  /** The write under way, and the next one, which serves every save asked for meanwhile. */
  #running: Promise<void> | undefined;
  #next: Promise<void> | undefined;
  #writeError: string | undefined;
  #announceCreation: boolean;

  private constructor(
    file: string,
    api: string | undefined,
    logger: Logger,
    options: StateStoreOptions,
  ) {
    this.file = file;
    this.api = api;
    this.#logger = logger;
    this.#options = options;
    this.#announceCreation = options.announceCreation === true;
  }

  /**
   * Loads the state file; a missing one is an empty state, and so is one whose text is not a
   * state file of this version for `api`, with a warning. Throws a FileReadError (exit 1) for a
   * path that is not a regular file (a FIFO, a directory, ...), a file over 256 MiB and a read
   * that does not end in time (--deadline), and a ConfigError for a file of an older version:
   * starting empty there would hide the mistake, or send what the file held back.
   */
  static async load(
    file: string,
    logger: Logger,
    api?: string,
    options: StateStoreOptions = {},
  ): Promise<StateStore> {
    await removeStaleTempFiles(file);
    await removeStaleTempFiles(`${file}.lock`);
    const store = new StateStore(file, api, logger, options);
    const theirs = await store.#read('starting empty (it will be rewritten)');
    for (const [org, records] of theirs ?? []) store.#orgs.set(org, records);
    return store;
  }

  /**
   * Reads the file, and records which file it read: its orgs, or undefined (with a warning that
   * ends with `then`, unless there is no file) when they cannot be used.
   */
  async #read(then: string): Promise<Map<string, Records> | undefined> {
    const { file } = this;
    let read;
    try {
      read = await readRegularFile(file, {
        subject: `state file ${file}`,
        fix: 'point --state at a file, or at a path where envsync may create one',
        maxBytes: READ_LIMITS.state,
        limit: 'for a state file',
        timeoutMs: this.#options.readTimeoutMs,
      });
    } catch (error) {
      if (!(error instanceof FileReadError) || error.failure.kind !== 'error') throw error;
      this.#identity = undefined;
      if (error.code === 'ENOENT') this.#logger.debug({ stateFile: file }, 'no state file yet');
      else
        this.#logger.warn(
          { stateFile: file, code: error.code },
          `state file cannot be read; ${then}`,
        );
      return undefined;
    }
    // The identity of the file whose text was read (one handle for both).
    this.#identity = identityOf(read.identity);
    const verdict = parseState(read.bytes.toString('utf8'), this.api);
    if (verdict.kind === 'older') {
      throw new ConfigError(
        `the state file ${file} has version ${verdict.version}, an older format this envsync does not read (it reads version ${STATE_VERSION}); nothing was sent. Delete it: the next sync rebuilds it (one extra PUT per environment whose listing hides a declared field)`,
      );
    }
    if (verdict.kind === 'ok') return verdict.orgs;
    this.#logger.warn({ stateFile: file, ...verdict.fields }, `${verdict.what}; ${then}`);
    return undefined;
  }

  /** The records of one org as a lookup by environment name (as `get` has them now). */
  lookup(org: string): AppliedLookup {
    const records = this.#orgs.get(org);
    return (name) => records?.[name];
  }

  /** The records of one org, by environment name (a new object each time). */
  get(org: string): Readonly<Record<string, AppliedRecord>> {
    return Object.assign(emptyMap<AppliedRecord>(), this.#orgs.get(org));
  }

  /** Why the last write failed; undefined once a write succeeds (for readiness and /status). */
  get writeError(): string | undefined {
    return this.#writeError;
  }

  /** Replaces the records of one org. */
  set(org: string, records: Readonly<Records>): void {
    this.#orgs.set(org, Object.assign(emptyMap<AppliedRecord>(), records));
    this.#dirty.add(org);
  }

  /**
   * Writes the state if it changed (`always`: even if not, proving that it can be written).
   * Saves asked for during a write coalesce into one more write, so "after each org" costs at
   * most two writes in flight, however many orgs finish at once. Rejects with a StateWriteError
   * when the write that was to hold this call's changes failed; those changes stay pending.
   */
  save({ always = false }: { readonly always?: boolean } = {}): Promise<void> {
    if (!always && this.#dirty.size === 0) return this.#running ?? Promise.resolve();
    return (this.#next ??= this.#writeNext());
  }

  /** The next write, once the one under way is over. */
  async #writeNext(): Promise<void> {
    await this.#running?.catch(() => undefined);
    this.#next = undefined;
    const running = (this.#running = this.#write());
    await running.finally(() => {
      if (this.#running === running) this.#running = undefined;
    });
  }

  /**
   * One write of everything changed so far, under the lock; what it fails to write stays
   * pending. If another writer replaced the file since this store last read or wrote it, every
   * write is a merge (docs/state.md): the orgs this store changed stay as it has them, whatever
   * the file says; every other org reads as the file has it, or goes when the file has it not.
   */
  async #write(): Promise<void> {
    const own = new Set(this.#dirty);
    this.#dirty.clear();
    const { file } = this;
    try {
      await fsPromises.mkdir(path.dirname(file), { recursive: true });
      const release = await acquireStateLock(file, {
        timeoutMs: this.#options.lockTimeoutMs ?? 30_000,
        readTimeoutMs: this.#options.readTimeoutMs,
        logger: this.#logger,
        clock: this.#options.clock ?? systemClock,
      });
      try {
        const onDisk = await identityNow(file);
        if (onDisk !== this.#identity) {
          const theirs = await this.#read('it is rewritten with the records this process holds');
          const mine = (org: string) => own.has(org) || this.#dirty.has(org);
          for (const org of this.#orgs.keys()) {
            if (!mine(org) && !theirs?.has(org)) this.#orgs.delete(org);
          }
          for (const [org, records] of theirs ?? []) if (!mine(org)) this.#orgs.set(org, records);
        }
        const secrets = this.#options.secrets ?? new Masker();
        await writeFileAtomic(file, stateText(this.api, this.#orgs, secrets));
        this.#identity = await identityNow(file);
        if (this.#announceCreation && onDisk === undefined) {
          this.#logger.info(
            { stateFile: file },
            `created the state file ${file}: it records what envsync applied, for the next run; --state FILE or ENVSYNC_STATE puts it elsewhere (docs/state.md)`,
          );
        }
        this.#announceCreation = false;
      } finally {
        await release();
      }
      this.#writeError = undefined;
    } catch (error) {
      for (const org of own) this.#dirty.add(org);
      const failure = stateWriteError(file, error);
      this.#writeError = failure.message;
      throw failure;
    }
  }
}
