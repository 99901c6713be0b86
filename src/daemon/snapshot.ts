import path from 'node:path';
import { displayPath } from '../manifests/discover.ts';
import { loadManifests, type ManifestCache, type ManifestSet } from '../manifests/load.ts';
import { fsPromises } from '../runtime/builtins.ts';

/** Where the manifests path resolves to now, and which published revision that is. */
export interface Resolution {
  /** The real path of the manifests directory (all symlinks resolved). */
  readonly realRoot: string;
  /**
   * The basename of the last symlink target on the way (git-sync publishes
   * `<root>/<link> -> .worktrees/<hash>`, so this is the commit); undefined without symlinks.
   */
  readonly revision: string | undefined;
}

/** Resolves the manifests path component by component, noting the last symlink's target. */
export async function resolveManifestsPath(root: string, cwd: string): Promise<Resolution> {
  const absolute = path.resolve(cwd, root);
  const parts = absolute.split(path.sep).filter((part) => part !== '');
  let current = path.parse(absolute).root;
  let revision: string | undefined;
  for (const part of parts) {
    current = path.join(current, part);
    const info = await fsPromises().lstat(current);
    if (info.isSymbolicLink()) {
      const target = path.resolve(path.dirname(current), await fsPromises().readlink(current));
      revision = path.basename(target);
      current = await fsPromises().realpath(current);
    }
  }
  return { realRoot: await fsPromises().realpath(absolute), revision };
}

export interface Snapshot extends Resolution {
  readonly manifests: ManifestSet;
}

const MAX_SNAPSHOT_ATTEMPTS = 5;

/**
 * Reads a consistent snapshot of the manifests: resolve once, read everything below the real
 * path, resolve again; if a git-sync swap happened meanwhile, read again.
 */
export async function readSnapshot(options: {
  root: string;
  cwd: string;
  maxFileBytes: number;
  cache?: ManifestCache | undefined;
}): Promise<Snapshot> {
  const displayRoot = displayPath(path.resolve(options.cwd, options.root), options.cwd);
  for (let attempt = 1; ; attempt++) {
    const before = await resolveManifestsPath(options.root, options.cwd);
    const manifests = await loadManifests({
      root: before.realRoot,
      cwd: options.cwd,
      maxFileBytes: options.maxFileBytes,
      displayRoot,
      cache: options.cache,
    });
    const after = await resolveManifestsPath(options.root, options.cwd).catch(() => undefined);
    if (after?.realRoot === before.realRoot || attempt >= MAX_SNAPSHOT_ATTEMPTS) {
      return { ...before, manifests };
    }
  }
}

/**
 * The latest modification time (ms since the epoch) among `files` (display paths, as the loader
 * reports changed files); undefined when none can be read (gone files do not count).
 */
export async function latestModification(
  files: Iterable<string>,
  cwd: string,
): Promise<number | undefined> {
  let latest: number | undefined;
  for (const file of files) {
    const info = await fsPromises()
      .stat(path.resolve(cwd, file))
      .catch(() => undefined);
    if (info?.isFile() === true) latest = Math.max(latest ?? 0, info.mtimeMs);
  }
  return latest;
}
