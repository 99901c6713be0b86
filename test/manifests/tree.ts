import { onTestFinished } from 'vitest';
import { formatProblem } from '../../src/core/validation.ts';
import { loadManifests, type LoadOptions, type ManifestSet } from '../../src/manifests/load.ts';
import { tempDir } from '../helpers/tmp.ts';

/** A new temporary folder holding `files`, removed when the test ends. */
export async function tree(files: Record<string, string | Buffer> = {}) {
  const tmp = await tempDir();
  onTestFinished(() => tmp.cleanup());
  for (const [name, text] of Object.entries(files)) await tmp.write(name, text);
  return tmp;
}

/** Loads `manifests/` below `dir`, with a limit of 1 MiB a file unless `options` say otherwise. */
export const load = (dir: string, options: Partial<LoadOptions> = {}) =>
  loadManifests({ root: 'manifests', cwd: dir, maxFileBytes: 1 << 20, ...options });

/** What a load found: each org with its files, every problem (those of no org first), the skipped. */
export function found(set: ManifestSet) {
  return {
    orgs: set.orgs.map((org) => `${org.org}: ${org.files.join(' ')}`),
    problems: [...set.unattributed, ...set.orgs.flatMap((org) => org.problems)].map(formatProblem),
    skipped: set.skipped.map((s) => `${s.file}: ${s.reason}`),
  };
}

/** What a load that found only these orgs, no problem and no file skipped, found. */
export const only = (...orgs: string[]) => ({ orgs, problems: [], skipped: [] });
