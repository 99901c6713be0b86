/**
 * Which published revision the manifests path is: git-sync publishes each commit as
 * `<root>/<link> -> .worktrees/<hash>`, so the last symlink on the way names it.
 */
import path from 'node:path';
import * as fsPromises from 'node:fs/promises';

/** Where the manifests path resolves to now, and which published revision that is. */
export interface Resolution {
  /** The real path of the manifests directory (all symlinks resolved). */
  readonly realRoot: string;
  /**
   * The basename of the last symlink target on the way (git-sync publishes
   * `<root>/<link> -> .worktrees/<hash>`, so this is the commit); undefined without symlinks.
   */
  readonly revision: string | undefined;
  /** Whether that last symlink leads into a `.worktrees` folder: a git-sync worktree. */
  readonly gitSync: boolean;
}

/** Resolves the manifests path component by component, noting the last symlink's target. */
export async function resolveManifestsPath(root: string, cwd: string): Promise<Resolution> {
  const absolute = path.resolve(cwd, root);
  const parts = absolute.split(path.sep).filter((part) => part !== '');
  let current = path.parse(absolute).root;
  let revision: string | undefined;
  let gitSync = false;
  for (const part of parts) {
    current = path.join(current, part);
    const info = await fsPromises.lstat(current);
    if (info.isSymbolicLink()) {
      const target = path.resolve(path.dirname(current), await fsPromises.readlink(current));
      revision = path.basename(target);
      gitSync = path.basename(path.dirname(target)) === '.worktrees';
      current = await fsPromises.realpath(current);
    }
  }
  return { realRoot: await fsPromises.realpath(absolute), revision, gitSync };
}

/**
 * The git revision of a one-shot command's manifests: the commit of the git-sync worktree the
 * path leads into, or undefined (a plain checkout, a path without that layout, or none at all).
 */
export async function gitSyncRevision(root: string, cwd: string): Promise<string | undefined> {
  try {
    const resolution = await resolveManifestsPath(root, cwd);
    return resolution.gitSync ? resolution.revision : undefined;
  } catch {
    return undefined;
  }
}
