/**
 * The files below a manifests root that are left out by rule: the lines of the root's
 * `.envsyncignore`, in gitignore's syntax, then the `--exclude` patterns, read as more lines of
 * that file (so a `!pattern` there can take back a line of the file). gitignore's rules are the
 * `ignore` package's, the one linters and bundlers use.
 *
 * Matching is case-sensitive, as git's is on Linux: `K8s/` does not leave out `k8s/`.
 */
import path from 'node:path';
import ignore from 'ignore';
import * as fs from 'node:fs';
import { readManifestFile, type IgnoreRules, type RootRules } from './discover.ts';

export type { IgnoreRules, RootRules } from './discover.ts';

/** Whether a path below the root is left out (see RootRules). */
export type IsIgnored = NonNullable<RootRules['ignored']>;

/** The ignore file's name; only the one at the manifests root (or a folder given) is read. */
export const IGNORE_FILE = '.envsyncignore';

const NO_RULES: IgnoreRules = { forRoot: () => ({ ignored: undefined }) };

function hasIgnoreFile(folder: string): boolean {
  try {
    fs.statSync(path.join(folder, IGNORE_FILE));
    return true;
  } catch {
    return false;
  }
}

/** The rules for the trees below `roots` (absolute): each root's ignore file, then `exclude`. */
export function loadIgnoreRules(
  roots: readonly string[],
  exclude: readonly string[],
  maxFileBytes: number,
): IgnoreRules {
  if (exclude.length === 0 && !roots.some(hasIgnoreFile)) return NO_RULES;
  return { forRoot: (root) => rootRules(root, exclude, maxFileBytes) };
}

/** One root's rules: its ignore file's lines (when it has one), then `exclude`. */
function rootRules(root: string, exclude: readonly string[], maxFileBytes: number): RootRules {
  const rules = ignore({ ignorecase: false });
  const file = path.join(root, IGNORE_FILE);
  let problem: RootRules['problem'];
  if (hasIgnoreFile(root)) {
    const outcome = readManifestFile(file, maxFileBytes);
    if (outcome.ok) rules.add(outcome.text);
    else {
      const fix = outcome.notRegular === true ? `: ${IGNORE_FILE} must be a file` : '';
      problem = { file, message: `${outcome.message}${fix}` };
    }
  }
  rules.add(exclude);
  return { ignored: (relative) => rules.ignores(relative), problem };
}
