/**
 * The files below a manifests root left out by rule: the root's `.envsyncignore` (gitignore's
 * syntax, case-sensitive), then `--exclude` as more lines of it (docs/manifests.md).
 */
import path from 'node:path';
import ignore from 'ignore';
import * as fs from 'node:fs';
import { readManifestFile, type IgnoreRules, type RootRules } from './discover.ts';

/** Whether a path below the root is left out (see RootRules). */
export type IsIgnored = NonNullable<RootRules['ignored']>;

/** The ignore file's name; only the one at the manifests root (or a folder given) is read. */
export const IGNORE_FILE = '.envsyncignore';

const hasIgnoreFile = (folder: string) => fs.existsSync(path.join(folder, IGNORE_FILE));

/** The rules for the trees below `roots` (absolute): each root's ignore file, then `exclude`. */
export function loadIgnoreRules(
  roots: readonly string[],
  exclude: readonly string[],
  maxFileBytes: number,
): IgnoreRules {
  if (exclude.length === 0 && !roots.some(hasIgnoreFile))
    return { forRoot: () => ({ ignored: undefined }) };
  return {
    forRoot(root) {
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
    },
  };
}
