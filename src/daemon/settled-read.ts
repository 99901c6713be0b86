import path from 'node:path';
import * as fsPromises from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import type { Clock } from '../core/clock.ts';
import { displayPath } from '../manifests/discover.ts';
import {
  loadManifests,
  skippedLine,
  type ManifestCache,
  type ManifestSet,
} from '../manifests/load.ts';
import { emptyRootLine } from '../manifests/parse.ts';
import { resolveManifestsPath, type Resolution } from '../manifests/revision.ts';

/** How often a daemon waiting for files that keep changing says so. */
const KEEPS_CHANGING_WARN_MS = 30_000;
/** How often a snapshot is read again when git-sync keeps swapping revisions under it. */
const MAX_SNAPSHOT_ATTEMPTS = 5;

/** What a settled read found: the snapshot, the files that changed over every read, the wait. */
export interface SettledRead {
  readonly snapshot: Resolution & { readonly manifests: ManifestSet };
  /** Undefined when anything may have changed (the loader could not tell). */
  readonly changedFiles: ReadonlySet<string> | undefined;
  readonly settleWaitMs: number;
}

export interface SettledReaderOptions {
  readonly settings: Pick<Settings, 'manifests' | 'maxFileBytes' | 'exclude' | 'strict'>;
  readonly cwd: string;
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
 * worktree is complete before the link moves, so it is read at once. Each read is a consistent
 * snapshot: resolve the path, read everything below it, resolve again, and read again if a swap
 * happened meanwhile. The parsed files are kept in a cache between reads, so a read parses only
 * what changed.
 */
export class SettledReader {
  readonly #options: SettledReaderOptions;
  readonly #cache: ManifestCache = new Map();
  /** The watcher's file events: how many, when the last came, and what it was. */
  #events = 0;
  #lastEventAt: number | undefined;
  #lastEvent = '';
  /** The real path the last read resolved: a read of another one reads a new revision. */
  #readRoot: string | undefined;
  /** Whether the last read found no manifest (said once, when it became so). */
  #saidEmpty = false;

  constructor(options: SettledReaderOptions) {
    this.#options = options;
  }

  /** The watcher saw a file change: a read waits until they settle. */
  fileEvent(reason: string): void {
    this.#events++;
    this.#lastEventAt = this.#options.clock.now();
    this.#lastEvent = reason;
  }

  /** A new revision was published: it is complete, so edits of the old one no longer delay. */
  newRevision(): void {
    this.#lastEventAt = undefined;
  }

  /** The snapshot, once settled; undefined when the daemon stops meanwhile. */
  async read(): Promise<SettledRead | undefined> {
    const { clock, cwd, settleMs, stop, logger, settings } = this.#options;
    let settleWaitMs = 0;
    let timesChecked = false;
    let changedFiles: Set<string> | undefined = new Set();
    for (;;) {
      settleWaitMs += await this.#settle();
      if (stop.aborted) return undefined;
      const events = this.#events;
      const snapshot = await this.#snapshot();
      const changedNow = snapshot.manifests.changedFiles;
      if (changedNow === undefined) changedFiles = undefined;
      else for (const file of changedNow) changedFiles?.add(file);
      if (events !== this.#events) continue;
      // A write the watcher has not reported yet: a changed file of the same revision written
      // within the settle time counts as an event (once per read, so a clock skew cannot hold
      // it). A new revision's files are complete, however new.
      if (!timesChecked && snapshot.realRoot === this.#readRoot) {
        timesChecked = true;
        const times = await Promise.all(
          [...(changedNow ?? [])].map((file) =>
            fsPromises.stat(path.resolve(cwd, file)).then(
              (info) => (info.isFile() ? info.mtimeMs : -Infinity),
              () => -Infinity,
            ),
          ),
        );
        const written = Math.max(-Infinity, ...times);
        const now = clock.now();
        if (now - written < settleMs) {
          this.#lastEventAt = Math.max(this.#lastEventAt ?? 0, Math.min(written, now));
          continue;
        }
      }
      this.#readRoot = snapshot.realRoot;
      // A file of other YAML is named once, when it is new or changed, not at every pass.
      for (const skipped of snapshot.manifests.skipped) {
        if (changedFiles === undefined || changedFiles.has(skipped.file)) {
          logger.info({ file: skipped.file }, skippedLine(skipped));
        }
      }
      // A root without a manifest is said once, when it becomes so (git-sync may swap in an
      // empty revision); --strict cannot end a daemon, so it warns the same way.
      const empty = emptyRootLine(settings.manifests, snapshot.manifests);
      if (empty !== undefined && !this.#saidEmpty) logger.warn({ root: settings.manifests }, empty);
      this.#saidEmpty = empty !== undefined;
      return { snapshot, changedFiles, settleWaitMs };
    }
  }

  async #snapshot(): Promise<SettledRead['snapshot']> {
    const { settings, cwd } = this.#options;
    const displayRoot = displayPath(path.resolve(cwd, settings.manifests), cwd);
    for (let attempt = 1; ; attempt++) {
      const before = await resolveManifestsPath(settings.manifests, cwd);
      const manifests = await loadManifests({
        root: before.realRoot,
        cwd,
        maxFileBytes: settings.maxFileBytes,
        exclude: settings.exclude,
        strict: settings.strict,
        displayRoot,
        cache: this.#cache,
      });
      const after = await resolveManifestsPath(settings.manifests, cwd).catch(() => undefined);
      if (after?.realRoot === before.realRoot || attempt >= MAX_SNAPSHOT_ATTEMPTS) {
        return { ...before, manifests };
      }
    }
  }

  /** Waits until no file event came for `settleMs`; returns the time it waited, in ms. */
  async #settle(): Promise<number> {
    const { clock, logger, settleMs, stop } = this.#options;
    const began = clock.now();
    let warnAt = began + KEEPS_CHANGING_WARN_MS;
    for (;;) {
      const now = clock.now();
      const delay = Math.max(0, (this.#lastEventAt ?? -Infinity) + settleMs - now);
      if (delay === 0 || stop.aborted) return now - began;
      if (now >= warnAt) {
        warnAt = now + KEEPS_CHANGING_WARN_MS;
        logger.warn(
          { settleMs, lastEvent: this.#lastEvent },
          `manifests keep changing (last: ${this.#lastEvent}); waiting for ${settleMs} ms without a change`,
        );
      }
      await clock.sleep(delay, stop).catch(() => undefined);
    }
  }
}
