import path from 'node:path';
import { displayPath } from '../manifests/discover.ts';
import { loadManifests, type ManifestCache, type ManifestSet } from '../manifests/load.ts';
import { resolveManifestsPath, type Resolution } from '../manifests/revision.ts';
import * as fsPromises from 'node:fs/promises';

export { resolveManifestsPath, type Resolution } from '../manifests/revision.ts';

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
  exclude?: readonly string[] | undefined;
  strict?: boolean | undefined;
  cache?: ManifestCache | undefined;
}): Promise<Snapshot> {
  const displayRoot = displayPath(path.resolve(options.cwd, options.root), options.cwd);
  for (let attempt = 1; ; attempt++) {
    const before = await resolveManifestsPath(options.root, options.cwd);
    const manifests = await loadManifests({
      root: before.realRoot,
      cwd: options.cwd,
      maxFileBytes: options.maxFileBytes,
      exclude: options.exclude,
      strict: options.strict,
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
    const info = await fsPromises.stat(path.resolve(cwd, file)).catch(() => undefined);
    if (info?.isFile() === true) latest = Math.max(latest ?? 0, info.mtimeMs);
  }
  return latest;
}
