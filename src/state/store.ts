import * as fsPromises from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import type { AppliedLookup, AppliedRecord, Records } from '../core/model.ts';
import { Masker } from '../core/mask.ts';
import { emptyMap } from '../core/fields.ts';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { FileReadError, READ_LIMITS, readRegularFile } from '../runtime/read-file.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { removeStaleTempFiles, writeFileAtomic } from './files.ts';
import { parseState, STATE_VERSION, stateText } from './format.ts';
import { acquireStateLock } from './lock.ts';

interface StateStoreOptions {
  /** The secrets the file never holds. */
  readonly secrets?: Masker | undefined;
  /** --state-lock-timeout, 30 s by default. */
  readonly lockTimeoutMs?: number | undefined;
  readonly clock?: Clock | undefined;
  /** Log, once, the write that creates the file (the default path, made without being asked). */
  readonly announceCreation?: boolean | undefined;
  /** How long a read of the file or of its lock may take (--deadline). */
  readonly readTimeoutMs?: number | undefined;
}

/** Which file a path names, as of when: a rename puts a new one in place. */
const identityOf = (stats: { dev: number; ino: number; size: number; mtimeMs: number }) =>
  `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;

const identityNow = (file: string) => fsPromises.stat(file).then(identityOf, () => undefined);

/** Which file could not be written, why, and what to do. */
export class StateWriteError extends Error {
  override name = 'StateWriteError';
  readonly file: string;
  constructor(file: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.file = file;
  }
}

const HINTS: readonly (readonly [readonly string[], string])[] = [
  [
    ['EACCES', 'EPERM', 'EROFS'],
    'make its directory writable by this user, or point --state (ENVSYNC_STATE) at a writable place',
  ],
  [
    ['ENOSPC', 'EDQUOT'],
    'free space on that disk (or raise the quota), or point --state (ENVSYNC_STATE) at another disk',
  ],
  [
    ['ENOTDIR', 'EEXIST', 'EISDIR'],
    'a part of its path is not what it should be (a file where a directory belongs, or the reverse): fix the path given to --state (ENVSYNC_STATE)',
  ],
];

function stateWriteError(file: string, error: unknown): StateWriteError {
  // A ConfigError says what to do itself (another writer's lock, ...).
  if (error instanceof ConfigError)
    return new StateWriteError(file, error.message, { cause: error });
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
  const hint =
    HINTS.find(([codes]) => codes.includes(code))?.[1] ??
    'check that the path given to --state (ENVSYNC_STATE) can be written';
  const message = `cannot write the state file ${file}: ${errorMessage(error)}; ${hint}`;
  return new StateWriteError(file, message, { cause: error });
}

/**
 * The state file in memory (docs/state.md). A broken file is a warning and an empty state, which
 * costs extra PUTs, never a wrong change; a save that fails rejects with a StateWriteError, and
 * the engine sends nothing it could not record.
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
   * Loads the state file written for `api`. Throws a FileReadError for a path that is not a
   * regular file, too large a file or a read past --deadline, and a ConfigError for an older
   * version: starting empty there would hide the mistake.
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

  /** Reads the file, noting which: its orgs, or undefined (and a warning ending `then`). */
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

  /** The records of one org as a lookup (as `get` has them now). */
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

  set(org: string, records: Readonly<Records>): void {
    this.#orgs.set(org, Object.assign(emptyMap<AppliedRecord>(), records));
    this.#dirty.add(org);
  }

  /**
   * Writes the state if it changed (`always`: even if not, proving that it can be written). Saves
   * asked for during a write coalesce into one more write. Rejects with a StateWriteError when the
   * write that was to hold this call's changes failed; those changes stay pending.
   */
  save({ always = false }: { readonly always?: boolean } = {}): Promise<void> {
    if (!always && this.#dirty.size === 0) return this.#running ?? Promise.resolve();
    return (this.#next ??= this.#writeNext());
  }

  async #writeNext(): Promise<void> {
    await this.#running?.catch(() => undefined);
    this.#next = undefined;
    const running = (this.#running = this.#write());
    await running.finally(() => {
      if (this.#running === running) this.#running = undefined;
    });
  }

  /**
   * One write of everything changed so far, under the lock. When another writer replaced the file,
   * the orgs this store changed stay as it has them, every other org as that file has it.
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
