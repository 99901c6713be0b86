import path from 'node:path';
import * as fsPromises from 'node:fs/promises';

/**
 * Where the manifests path resolves to now, and which revision: git-sync publishes each commit as
 * `<root>/<link> -> .worktrees/<hash>`, so it is the last symlink's target on the way.
 */
export interface Resolution {
  readonly realRoot: string;
  readonly revision: string | undefined;
  readonly gitSync: boolean;
}

/** Resolves the manifests path component by component, noting the last symlink's target. */
export async function resolveManifestsPath(root: string, cwd: string): Promise<Resolution> {
  const absolute = path.resolve(cwd, root);
  let current = path.parse(absolute).root;
  let revision: string | undefined;
  let gitSync = false;
  for (const part of absolute.split(path.sep).filter(Boolean)) {
    current = path.join(current, part);
    if (!(await fsPromises.lstat(current)).isSymbolicLink()) continue;
    const target = path.resolve(path.dirname(current), await fsPromises.readlink(current));
    revision = path.basename(target);
    gitSync = path.basename(path.dirname(target)) === '.worktrees';
    current = await fsPromises.realpath(current);
  }
  return { realRoot: await fsPromises.realpath(absolute), revision, gitSync };
}

/** The commit of the git-sync worktree a one-shot command's manifests path leads into, if any. */
export async function gitSyncRevision(root: string, cwd: string): Promise<string | undefined> {
  try {
    const resolution = await resolveManifestsPath(root, cwd);
    return resolution.gitSync ? resolution.revision : undefined;
  } catch {
    return undefined;
  }
}
