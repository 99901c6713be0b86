import { watch, type FSWatcher } from 'chokidar';
import path from 'node:path';
import * as fsPromises from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.ts';
import { IGNORE_FILE, loadIgnoreRules, type IsIgnored } from '../manifests/ignore-rules.ts';
import { resolveManifestsPath, type Resolution } from '../manifests/revision.ts';

export interface WatcherOptions {
  readonly root: string;
  readonly cwd: string;
  /** More lines of the root's .envsyncignore (`--exclude`): what they leave out is not watched. */
  readonly exclude: readonly string[];
  /** The ignore file is read within this limit, as a manifest is. */
  readonly maxFileBytes: number;
  readonly logger: Logger;
  /** Sets the poll's timer. */
  readonly clock: Clock;
  /** Called for every relevant file event (debounce it). */
  readonly onFileEvent: (reason: string) => void;
  /** Called when the manifests path resolves somewhere new (a git-sync swap). */
  readonly onRetarget: (resolution: Resolution) => void;
  /** How often to re-resolve the path as a safety net, in ms (default 1000). */
  readonly pollMs?: number;
}

const MANIFEST = /\.ya?ml$/i;

/**
 * Whether chokidar leaves `file` out: hidden files and folders, files that are not YAML, and what
 * the ignore rules leave out, except the root and its ignore file. chokidar asks first without
 * `stats` (then a YAML name is taken for a file, anything else for a folder), and again with them.
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
 * Watches the manifests with chokidar, and the symlinks on the way to them. Plain recursive
 * watches miss git-sync's swaps (they keep following the old target), so this watcher also
 * watches the folders holding the links, re-resolves the path on each of their events and on a
 * slow poll, and moves the content watch to the new real path.
 *
 * What the ignore rules leave out is not watched, so an edit there starts no pass. An edit of the
 * ignore file starts one, and the content watch starts again under the new rules: a folder they
 * no longer leave out is watched from then on.
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

  constructor(options: WatcherOptions) {
    this.#options = options;
  }

  /** Starts watching; resolves once the first scan is done. */
  async start(): Promise<void> {
    const { root, cwd, logger } = this.#options;
    this.#current = await resolveManifestsPath(root, cwd);
    await this.#watchContent(this.#current.realRoot);
    // The folders holding each symlink on the way to the root: where a swap shows itself.
    const parents: string[] = [];
    let current = path.parse(path.resolve(cwd, root)).root;
    for (const part of path
      .resolve(cwd, root)
      .split(path.sep)
      .filter((p) => p !== '')) {
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

  /** The slow poll: a check, then the next one (its timer alone never keeps the process up). */
  #armPoll(): void {
    if (this.#closed) return;
    const { clock, pollMs = 1000 } = this.#options;
    this.#poll = clock.setTimer(pollMs, () => void this.#check().finally(() => this.#armPoll()), {
      unref: true,
    });
  }

  /** Re-resolves the manifests path; on a change, moves the content watch and reports it. */
  #check(): Promise<void> {
    this.#checking ??= (async () => {
      const { root, cwd, logger, onRetarget } = this.#options;
      // Mid-swap or gone for a moment: the next event or poll will tell.
      const next = await resolveManifestsPath(root, cwd).catch(() => undefined);
      if (this.#closed || next === undefined || next.realRoot === this.#current?.realRoot) return;
      this.#current = next;
      await this.#watchContent(next.realRoot);
      logger.info(
        { revision: next.revision, path: next.realRoot },
        'manifests moved to a new revision',
      );
      onRetarget(next);
    })().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  async #watchContent(realRoot: string): Promise<void> {
    const { exclude, maxFileBytes, logger, onFileEvent } = this.#options;
    const rules = loadIgnoreRules([realRoot], exclude, maxFileBytes);
    // Meanwhile closed, or moved to another revision whose watch is under way: nothing to watch.
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
      // Events of a watcher already replaced (the old worktree being deleted) do not count.
      if (generation !== this.#generation) return;
      onFileEvent(`file ${event} ${path.relative(realRoot, file) || '.'}`);
      if (file === path.join(realRoot, IGNORE_FILE) && !this.#closed) {
        this.#watchContent(realRoot).catch(failed);
      }
    });
    watcher.on('error', failed);
    await new Promise<void>((resolve) => watcher.once('ready', resolve));
    await old?.close();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#poll?.cancel();
    await Promise.all([this.#content?.close(), this.#links?.close()]);
  }
}
