import path from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import type { AppliedLookup, AppliedRecord, Records } from '../core/model.ts';
import { Masker } from '../core/mask.ts';
import { compareNames } from '../core/names.ts';
import { type FileIdentity, planMerge, sameFile } from './merge.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { Coalescer } from './coalescer.ts';
import { removeStaleTempFiles, writeFileAtomic } from './files.ts';
import { type Group, orgPart, recordAt, recordsOf, stateText, toGroups } from './codec.ts';
import { stateWriteError } from './errors.ts';
import { identityOf, readStateFile } from './state-file.ts';
import { acquireStateLock } from './lock.ts';
import * as fsPromises from 'node:fs/promises';

export { StateLockTimeoutError, StateWriteError } from './errors.ts';

/** How long a writer waits for another one's lock on the state file, unless told otherwise. */
export const DEFAULT_STATE_LOCK_TIMEOUT_MS = 30_000;

export interface StateStoreOptions {
  /** The secrets the file never holds (groupJson); none by default. */
  readonly secrets?: Masker | undefined;
  /** How long a save waits for another writer's lock (--state-lock-timeout). */
  readonly lockTimeoutMs?: number | undefined;
  /** The time, for the lock's waits and the holder's start (the real clock by default). */
  readonly clock?: Clock | undefined;
  /**
   * Log, once, the write that creates the file: for the default path, which a command creates in
   * its working directory without being asked to.
   */
  readonly announceCreation?: boolean | undefined;
  /** How long a read of the file or of its lock may take (--deadline; 5 minutes by default). */
  readonly readTimeoutMs?: number | undefined;
}

/**
 * The state file in memory: per org and environment, what envsync last applied of the fields a
 * listing may not carry, and the fingerprint of what it last applied (core/drift.ts). Reading
 * it is forgiving: a missing or broken file costs one extra PUT per environment, never a crash.
 * Writing it is not: a save that fails rejects with a StateWriteError, and the engine sends
 * nothing it could not record first (docs/state.md).
 * Each write takes the file's lock, re-reads the file if another writer changed it, keeps that
 * writer's records of every org this store did not change, and replaces the file atomically
 * (temp file + rename). Writes are coalesced.
 */
export class StateStore {
  readonly file: string;
  readonly api: string | undefined;
  /**
   * Each org's records, grouped as the file has them: a reference per environment, and no
   * per-org dictionary until the org is asked for (at 300,000 environments those dictionaries
   * were 18 MB).
   */
  #orgs: Map<string, readonly Group[]>;
  /** Each org's part of the file, serialized once per change (a big state is written often). */
  readonly #parts = new Map<string, string>();
  readonly #logger: Logger;
  readonly #lockTimeoutMs: number;
  readonly #readTimeoutMs: number | undefined;
  readonly #clock: Clock;
  readonly #secrets: Masker;
  /** The file as this store last read or wrote it: when it is still that file, no re-read. */
  #identity: FileIdentity | undefined;
  /** Orgs set since the last write that holds them: this store's, whatever the file says. */
  readonly #dirty = new Set<string>();
  readonly #writes = new Coalescer(() => this.#writeDirty());
  #writeError: string | undefined;
  /** Whether the write that creates the file is still to be logged. */
  #announceCreation: boolean;

  private constructor(
    file: string,
    api: string | undefined,
    orgs: Map<string, readonly Group[]>,
    logger: Logger,
    options: StateStoreOptions,
    identity: FileIdentity | undefined,
  ) {
    this.file = file;
    this.api = api;
    this.#orgs = orgs;
    this.#logger = logger;
    this.#lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_STATE_LOCK_TIMEOUT_MS;
    this.#readTimeoutMs = options.readTimeoutMs;
    this.#clock = options.clock ?? systemClock;
    this.#secrets = options.secrets ?? new Masker();
    this.#identity = identity;
    this.#announceCreation = options.announceCreation === true;
  }

  /**
   * Loads the state file; anything wrong with its text is a warning and an empty state. A path
   * that is not a regular file, or a file over the limit, is an error (state-file.ts).
   */
  static async load(
    file: string,
    logger: Logger,
    api?: string,
    options: StateStoreOptions = {},
  ): Promise<StateStore> {
    await removeStaleTempFiles(file);
    await removeStaleTempFiles(`${file}.lock`);
    const read = await readStateFile(file, api, options.readTimeoutMs);
    if (read.kind === 'ok') {
      return new StateStore(file, api, read.orgs, logger, options, read.identity);
    }
    if (read.kind === 'missing') {
      logger.debug({ stateFile: file }, 'no state file yet; starting empty');
      return new StateStore(file, api, new Map(), logger, options, undefined);
    }
    logger.warn({ stateFile: file, ...read.fields }, `${read.what}; ${read.atLoad}`);
    // The broken file is known: the first write replaces it, unless another writer did first.
    return new StateStore(file, api, new Map(), logger, options, read.identity);
  }

  /**
   * The records of one org as a lookup, without building a table (the planner asks once per
   * environment): a binary search in each group's sorted names, the last group first, as `get`.
   */
  lookup(org: string): AppliedLookup {
    const groups = this.#orgs.get(org) ?? [];
    return (name) => {
      for (let g = groups.length - 1; g >= 0; g--) {
        const group = groups[g] as Group;
        const { names } = group;
        let low = 0;
        let high = names.length - 1;
        while (low <= high) {
          const middle = (low + high) >> 1;
          const order = compareNames(names[middle] as string, name);
          if (order === 0) return recordAt(group, middle);
          if (order < 0) low = middle + 1;
          else high = middle - 1;
        }
      }
      return undefined;
    };
  }

  /** The records of one org, by environment name (a new object each time). */
  get(org: string): Readonly<Record<string, AppliedRecord>> {
    return recordsOf(this.#orgs.get(org) ?? []);
  }

  /** Why the last write failed; undefined once a write succeeds (for readiness and /status). */
  get writeError(): string | undefined {
    return this.#writeError;
  }

  /** Replaces the records of one org. */
  set(org: string, records: Readonly<Records>): void {
    this.#orgs.set(org, toGroups(records));
    this.#parts.delete(org);
    this.#dirty.add(org);
  }

  /**
   * Writes the state if it changed (`always`: even if not, proving that it can be written).
   * Saves asked for during a write coalesce into one more write, so "after each org" costs at
   * most two writes in flight, however many orgs finish at once. Rejects with a StateWriteError
   * when the write that was to hold this call's changes failed; those changes stay pending.
   */
  save({ always = false }: { readonly always?: boolean } = {}): Promise<void> {
    if (!always && this.#dirty.size === 0) return this.#writes.inFlight ?? Promise.resolve();
    return this.#writes.request();
  }

  /** One write of everything changed so far; what it fails to write stays pending. */
  async #writeDirty(): Promise<void> {
    const own = new Set(this.#dirty);
    this.#dirty.clear();
    try {
      await this.#write(own);
      this.#writeError = undefined;
    } catch (error) {
      for (const org of own) this.#dirty.add(org);
      const failure = stateWriteError(this.file, error);
      this.#writeError = failure.message;
      throw failure;
    }
  }

  /** Under the lock: merge what another writer saved, then replace the file. */
  async #write(own: ReadonlySet<string>): Promise<void> {
    await fsPromises.mkdir(path.dirname(this.file), { recursive: true });
    const release = await acquireStateLock(this.file, {
      timeoutMs: this.#lockTimeoutMs,
      readTimeoutMs: this.#readTimeoutMs,
      logger: this.#logger,
      clock: this.#clock,
    });
    try {
      const creates = this.#announceCreation && (await identityOf(this.file)) === undefined;
      await this.#mergeFromDisk(own);
      await writeFileAtomic(this.file, this.#text());
      this.#identity = await identityOf(this.file);
      this.#announceCreation = false;
      if (creates) {
        this.#logger.info(
          { stateFile: this.file },
          `created the state file ${this.file}: it records what envsync applied, for the next run; --state FILE or ENVSYNC_STATE puts it elsewhere (docs/state.md)`,
        );
      }
    } finally {
      await release();
    }
  }

  /**
   * If another writer replaced the file since this store last read or wrote it, takes that
   * writer's records of every org this store has not changed (`own` and what is pending).
   */
  async #mergeFromDisk(own: ReadonlySet<string>): Promise<void> {
    if (sameFile(await identityOf(this.file), this.#identity)) return;
    const read = await readStateFile(this.file, this.api, this.#readTimeoutMs);
    let theirs = new Map<string, readonly Group[]>();
    if (read.kind === 'ok') theirs = read.orgs;
    else if (read.kind === 'bad') {
      this.#logger.warn(
        { stateFile: this.file, ...read.fields },
        `${read.what}; it is rewritten with the records this process holds`,
      );
    }
    const { drop, take } = planMerge(
      this.#orgs.keys(),
      theirs.keys(),
      (org) => own.has(org) || this.#dirty.has(org),
    );
    for (const org of drop) this.#orgs.delete(org);
    for (const org of take) this.#orgs.set(org, theirs.get(org) as readonly Group[]);
    for (const org of [...drop, ...take]) this.#parts.delete(org);
  }

  #text(): string {
    const parts: string[] = [];
    for (const org of [...this.#orgs.keys()].sort()) {
      let part = this.#parts.get(org);
      if (part === undefined) {
        part = orgPart(org, this.#orgs.get(org) ?? [], this.#secrets);
        this.#parts.set(org, part);
      }
      parts.push(part);
    }
    return stateText(this.api, parts);
  }
}
