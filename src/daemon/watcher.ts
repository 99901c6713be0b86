import { watch, type FSWatcher } from 'chokidar';
import path from 'node:path';
import * as fsPromises from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import type { Clock, Timer } from '../core/clock.ts';
import { displayPath } from '../manifests/discover.ts';
import { IGNORE_FILE, loadIgnoreRules, type IsIgnored } from '../manifests/ignore-rules.ts';
import { loadManifests, skippedLine } from '../manifests/load.ts';
import type { ManifestCache, ManifestSet } from '../manifests/load.ts';
import { emptyRootLine } from '../manifests/parse.ts';
import { resolveManifestsPath, type Resolution } from '../manifests/revision.ts';

export interface WatcherOptions {
  readonly settings: Pick<Settings, 'manifests' | 'maxFileBytes' | 'exclude' | 'strict'>;
  readonly cwd: string;
  readonly settleMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly stop: AbortSignal;
  /** Every relevant file event, and the path resolving somewhere new (a git-sync swap). */
  readonly onFileEvent: (reason: string) => void;
  readonly onRetarget: (resolution: Resolution) => void;
}

/** A settled read: the snapshot, the files that changed since the last one, the time it waited. */
export interface SettledRead {
  readonly snapshot: Resolution & { readonly manifests: ManifestSet };
  /** Undefined when anything may have changed (the loader could not tell). */
  readonly changedFiles: ReadonlySet<string> | undefined;
  readonly settleWaitMs: number;
}

const MANIFEST = /\.ya?ml$/i;
/** How often the path is resolved again, as a safety net for a swap no event showed. */
const POLL_MS = 1000;
/** How often a daemon waiting for files that keep changing says so. */
const KEEPS_CHANGING_WARN_MS = 30_000;
/** How many times a snapshot is read while git-sync keeps swapping revisions under it. */
const MAX_SNAPSHOT_ATTEMPTS = 5;

/**
 * Whether chokidar leaves `file` out: hidden files, files not YAML, and what the ignore rules leave
 * out, but the root and its ignore file. Asked without `stats`, a YAML name is taken for a file.
 */
function leftOut(
  realRoot: string,
  ignored: IsIgnored | undefined,
  file: string,
  stats: { isFile(): boolean; isDirectory(): boolean } | undefined,
): boolean {
  if (file === realRoot || file === path.join(realRoot, IGNORE_FILE)) return false;
  if (path.basename(file).startsWith('.')) return true;
  if (stats?.isFile() === true && !MANIFEST.test(file)) return true;
  const relative = path.relative(realRoot, file);
  // Not below the root (a link chokidar followed out of it): the rules say nothing there.
  if (ignored === undefined || relative.startsWith('..') || path.isAbsolute(relative)) return false;
  const folder = stats === undefined ? !MANIFEST.test(file) : stats.isDirectory();
  const posix = relative.split(path.sep).join('/');
  return ignored(folder ? `${posix}/` : posix);
}

/**
 * The manifests as the daemon sees them, watched and read once settled (docs/daemon.md). A
 * recursive watch keeps following a symlink's old target, so the folders holding the symlinks on
 * the way are watched too, and the path is resolved again on their events and on a slow poll. A
 * read waits until no file event came for `settleMs`; a git-sync swap makes none (its worktree is
 * complete before the link moves) and is read at once. Parsed files are kept between reads.
 */
export class ManifestWatcher {
  readonly #options: WatcherOptions;
  #content: FSWatcher | undefined;
  #links: FSWatcher | undefined;
  #poll: Timer | undefined;
  #current: Resolution | undefined;
  #generation = 0;
  #closed = false;
  #checking: Promise<void> | undefined;
  readonly #cache: ManifestCache = new Map();
  /** The file events: how many, when the last came, and what it was. */
  #events = 0;
  #lastEventAt = -Infinity;
  #lastEvent = '';
  /** The real path the last read resolved: another one is a new revision. */
  #readRoot: string | undefined;
  /** Whether the last read found no manifest (said once, when it became so). */
  #saidEmpty = false;

  constructor(options: WatcherOptions) {
    this.#options = options;
  }

  /** Starts watching; resolves once the first scan is done. */
  async start(): Promise<void> {
    const { settings, cwd, logger } = this.#options;
    const absolute = path.resolve(cwd, settings.manifests);
    this.#current = await resolveManifestsPath(settings.manifests, cwd);
    await this.#watchContent(this.#current.realRoot);
    // The folders holding each symlink on the way to the root: where a swap shows itself.
    const parents: string[] = [];
    let current = path.parse(absolute).root;
    for (const part of absolute.split(path.sep).filter((p) => p !== '')) {
      current = path.join(current, part);
      const info = await fsPromises.lstat(current).catch(() => undefined);
      if (info?.isSymbolicLink()) parents.push(path.dirname(current));
    }
    if (parents.length > 0) {
      const links = watch(parents, { depth: 0, ignoreInitial: true, followSymlinks: false });
      this.#links = links;
      links.on('all', () => void this.#check());
      links.on('error', (error) => logger.warn({ err: error }, 'link watcher error'));
      await new Promise<void>((resolve) => links.once('ready', resolve));
    }
    this.#armPoll();
  }

  /** The slow poll (its timer alone never keeps the process up). */
  #armPoll(): void {
    if (this.#closed) return;
    const next = () => void this.#check().finally(() => this.#armPoll());
    this.#poll = this.#options.clock.setTimer(POLL_MS, next, { unref: true });
  }

  /** Re-resolves the manifests path; on a change, moves the content watch and reports it. */
  #check(): Promise<void> {
    this.#checking ??= (async () => {
      const { settings, cwd, logger } = this.#options;
      // Mid-swap or gone for a moment: the next event or poll will tell.
      const next = await resolveManifestsPath(settings.manifests, cwd).catch(() => undefined);
      if (this.#closed || next === undefined || next.realRoot === this.#current?.realRoot) return;
      this.#current = next;
      await this.#watchContent(next.realRoot);
      logger.info(
        { revision: next.revision, path: next.realRoot },
        'manifests moved to a new revision',
      );
      // The new revision is complete: edits of the old one no longer delay a read.
      this.#lastEventAt = -Infinity;
      this.#options.onRetarget(next);
    })().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  async #watchContent(realRoot: string): Promise<void> {
    const { settings, logger, clock } = this.#options;
    const rules = loadIgnoreRules([realRoot], settings.exclude ?? [], settings.maxFileBytes);
    // Meanwhile closed, or moved on to another revision: nothing to watch.
    if (this.#closed || realRoot !== this.#current?.realRoot) return;
    const { ignored } = rules.forRoot(realRoot);
    const generation = ++this.#generation;
    const old = this.#content;
    const watcher = watch(realRoot, {
      ignoreInitial: true,
      followSymlinks: true,
      ignored: (file, stats) => leftOut(realRoot, ignored, file, stats),
    });
    this.#content = watcher;
    const failed = (error: unknown) => logger.warn({ err: error }, 'manifest watcher error');
    watcher.on('all', (event, file) => {
      // Events of a replaced watcher (the old worktree being deleted) do not count.
      if (generation !== this.#generation) return;
      const reason = `file ${event} ${path.relative(realRoot, file) || '.'}`;
      this.#events++;
      this.#lastEventAt = clock.now();
      this.#lastEvent = reason;
      this.#options.onFileEvent(reason);
      if (file === path.join(realRoot, IGNORE_FILE) && !this.#closed)
        this.#watchContent(realRoot).catch(failed);
    });
    watcher.on('error', failed);
    await new Promise<void>((resolve) => watcher.once('ready', resolve));
    await old?.close();
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
      // A write not reported yet: a changed file of the same revision written within the settle
      // time counts as an event (once per read, so a clock skew cannot hold it).
      if (!timesChecked && snapshot.realRoot === this.#readRoot) {
        timesChecked = true;
        const stat = (file: string) => fsPromises.stat(path.resolve(cwd, file)).catch(() => null);
        const infos = await Promise.all([...(changedNow ?? [])].map(stat));
        const written = Math.max(...infos.map((i) => (i?.isFile() ? i.mtimeMs : -Infinity)));
        const now = clock.now();
        if (now - written < settleMs) {
          this.#lastEventAt = Math.max(this.#lastEventAt, Math.min(written, now));
          continue;
        }
      }
      this.#readRoot = snapshot.realRoot;
      // A file of other YAML is named once, when it is new or changed, not at every pass.
      for (const skipped of snapshot.manifests.skipped) {
        if (changedFiles?.has(skipped.file) !== false)
          logger.info({ file: skipped.file }, skippedLine(skipped));
      }
      // A root without a manifest is said once, when it becomes so; --strict cannot end a
      // daemon, so it warns the same way.
      const empty = emptyRootLine(settings.manifests, snapshot.manifests);
      if (empty !== undefined && !this.#saidEmpty) logger.warn({ root: settings.manifests }, empty);
      this.#saidEmpty = empty !== undefined;
      return { snapshot, changedFiles, settleWaitMs };
    }
  }

  async #snapshot(): Promise<SettledRead['snapshot']> {
    const { settings, cwd } = this.#options;
    const { manifests: root, maxFileBytes, exclude, strict } = settings;
    const displayRoot = displayPath(path.resolve(cwd, root), cwd);
    for (let attempt = 1; ; attempt++) {
      const before = await resolveManifestsPath(root, cwd);
      const options = { cwd, maxFileBytes, exclude, strict, displayRoot, cache: this.#cache };
      const manifests = await loadManifests({ root: before.realRoot, ...options });
      const after = await resolveManifestsPath(root, cwd).catch(() => undefined);
      if (after?.realRoot === before.realRoot || attempt >= MAX_SNAPSHOT_ATTEMPTS)
        return { ...before, manifests };
    }
  }

  /** Waits until no file event came for `settleMs`; returns the time it waited, in ms. */
  async #settle(): Promise<number> {
    const { clock, logger, settleMs, stop } = this.#options;
    const began = clock.now();
    let warnAt = began + KEEPS_CHANGING_WARN_MS;
    for (;;) {
      const now = clock.now();
      const delay = Math.max(0, this.#lastEventAt + settleMs - now);
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

  async close(): Promise<void> {
    this.#closed = true;
    this.#poll?.cancel();
    await Promise.all([this.#content?.close(), this.#links?.close()]);
  }
}
