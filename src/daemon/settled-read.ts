import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import { settleDelay } from './daemon-policy.ts';
import { skippedLine, type ManifestCache } from '../manifests/load.ts';
import { emptyRootLine } from '../manifests/parse.ts';
import { latestModification, readSnapshot, type Snapshot } from './snapshot.ts';

/** How often a daemon waiting for files that keep changing says so. */
const KEEPS_CHANGING_WARN_MS = 30_000;

/** The watcher's file events as the reader needs them: how many, and when the last came. */
class FileActivity {
  events = 0;
  lastAt: number | undefined;
  last = '';

  note(reason: string, at: number): void {
    this.events++;
    this.lastAt = at;
    this.last = reason;
  }

  forgetLast(): void {
    this.lastAt = undefined;
  }
}

/** What a settled read found: the snapshot, the files that changed over every read, the wait. */
export interface SettledRead {
  readonly snapshot: Snapshot;
  /** Undefined when anything may have changed (the loader could not tell). */
  readonly changedFiles: ReadonlySet<string> | undefined;
  readonly settleWaitMs: number;
}

export interface SettledReaderOptions {
  readonly root: string;
  readonly cwd: string;
  readonly maxFileBytes: number;
  /** More lines of the root's .envsyncignore (`--exclude`). */
  readonly exclude: readonly string[] | undefined;
  /** Other YAML is an error, not skipped (`--strict`). */
  readonly strict: boolean;
  readonly settleMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Aborted when the daemon stops: the read ends at once. */
  readonly stop: AbortSignal;
}

/**
 * Reads the manifests once their files have settled: no file event for `settleMs` (a file edited
 * in place is read only once its writer is done, even one that pauses between writes); a file
 * event during the read means wait and read again. A git-sync swap makes no file event: its
 * worktree is complete before the link moves, so it is read at once. Keeps the parsed files in
 * `cache` between reads, so a read parses only what changed. Undefined when `stop` aborts.
 */
export class SettledReader {
  readonly #options: SettledReaderOptions;
  readonly #cache: ManifestCache = new Map();
  readonly #activity = new FileActivity();
  /** The real path the last read resolved: a read of another one reads a new revision. */
  #readRoot: string | undefined;
  /** Whether the last read found no manifest (said once, when it became so). */
  #saidEmpty = false;

  constructor(options: SettledReaderOptions) {
    this.#options = options;
  }

  /** The watcher saw a file change: a read waits until they settle. */
  fileEvent(reason: string): void {
    this.#activity.note(reason, this.#options.clock.now());
  }

  /** A new revision was published: it is complete, so edits of the old one no longer delay. */
  newRevision(): void {
    this.#activity.forgetLast();
  }

  async read(): Promise<SettledRead | undefined> {
    const activity = this.#activity;
    const { clock, cwd, settleMs, stop } = this.#options;
    let settleWaitMs = 0;
    let timesChecked = false;
    let changedFiles: Set<string> | undefined = new Set();
    for (;;) {
      settleWaitMs += await this.#settle();
      if (stop.aborted) return undefined;
      const events = activity.events;
      const snapshot = await readSnapshot({
        root: this.#options.root,
        cwd,
        maxFileBytes: this.#options.maxFileBytes,
        exclude: this.#options.exclude,
        strict: this.#options.strict,
        cache: this.#cache,
      });
      const changedNow = snapshot.manifests.changedFiles;
      if (changedNow === undefined) changedFiles = undefined;
      else for (const file of changedNow) changedFiles?.add(file);
      if (events !== activity.events) continue;
      // A write the watcher has not reported yet: a changed file of the same revision written
      // within the settle time counts as an event (once per read, so a clock skew cannot hold
      // it). A new revision's files are complete, however new.
      if (!timesChecked && snapshot.realRoot === this.#readRoot) {
        timesChecked = true;
        const written = await latestModification(changedNow ?? [], cwd);
        const now = clock.now();
        if (written !== undefined && now - written < settleMs) {
          activity.lastAt = Math.max(activity.lastAt ?? 0, Math.min(written, now));
          continue;
        }
      }
      this.#readRoot = snapshot.realRoot;
      // A file of other YAML is named once, when it is new or changed, not at every pass.
      for (const skipped of snapshot.manifests.skipped) {
        if (changedFiles === undefined || changedFiles.has(skipped.file)) {
          this.#options.logger.info({ file: skipped.file }, skippedLine(skipped));
        }
      }
      // A root without a manifest is said once, when it becomes so (git-sync may swap in an
      // empty revision); --strict cannot end a daemon, so it warns the same way.
      const empty = emptyRootLine(this.#options.root, snapshot.manifests);
      if (empty !== undefined && !this.#saidEmpty) {
        this.#options.logger.warn({ root: this.#options.root }, empty);
      }
      this.#saidEmpty = empty !== undefined;
      return { snapshot, changedFiles, settleWaitMs };
    }
  }

  /** Waits until no file event came for `settleMs`; returns the time it waited, in ms. */
  async #settle(): Promise<number> {
    const activity = this.#activity;
    const { clock, logger, settleMs, stop } = this.#options;
    const began = clock.now();
    let warnAt = began + KEEPS_CHANGING_WARN_MS;
    for (;;) {
      const now = clock.now();
      const delay = settleDelay(activity.lastAt, now, settleMs);
      if (delay === 0 || stop.aborted) return now - began;
      if (now >= warnAt) {
        warnAt = now + KEEPS_CHANGING_WARN_MS;
        logger.warn(
          { settleMs, lastEvent: activity.last },
          `manifests keep changing (last: ${activity.last}); waiting for ${settleMs} ms without a change`,
        );
      }
      await clock.sleep(delay, stop).catch(() => undefined);
    }
  }
}
