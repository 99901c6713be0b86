import type { DesiredEnvironment, SourceLocation } from '../core/model.ts';
import { compareNames } from '../core/plan.ts';
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { discoverManifestFiles, displayPath, readManifestFile } from './discover.ts';
import {
  formatProblem,
  parseManifest,
  sharedValues,
  textLocator,
  type ManifestProblem,
} from './parse.ts';

/** Everything the manifests declare for one organization, and what is wrong with it. */
export interface OrgManifest {
  readonly org: string;
  /** Sorted by name. Empty when the org has problems: an invalid org is left alone entirely. */
  readonly environments: readonly DesiredEnvironment[];
  readonly files: readonly string[];
  readonly problems: readonly ManifestProblem[];
}

/** The whole manifest tree, read and validated. */
export interface ManifestSet {
  /** Sorted by org. */
  readonly orgs: readonly OrgManifest[];
  /** Problems that belong to no organization (unreadable files, YAML that names no org). */
  readonly unattributed: readonly ManifestProblem[];
  readonly fileCount: number;
  /**
   * With a cache: the files that are new, changed or gone since the last load (by display path).
   * Undefined without a cache, meaning "anything may have changed".
   */
  readonly changedFiles?: ReadonlySet<string> | undefined;
}

export interface LoadOptions {
  readonly root: string;
  readonly cwd: string;
  readonly maxFileBytes: number;
  /** Show file paths under this root instead of the real one (see discoverManifestFiles). */
  readonly displayRoot?: string | undefined;
  /**
   * Parsed files kept between loads (the daemon's): a file whose identity, size and time did not
   * change is not read again, and one whose text did not change is not parsed again.
   */
  readonly cache?: ManifestCache | undefined;
}

/** One file as last read: how to recognise it, its text and what it said. */
export interface ManifestCacheEntry {
  readonly statKey: string | undefined;
  /** sha1 of the text: the text itself is not kept. */
  readonly hash: string;
  readonly result: ReturnType<typeof parseManifest>;
}

/** Parsed files by display path. */
export type ManifestCache = Map<string, ManifestCacheEntry>;

/**
 * A file's identity for the cache; undefined for a file changed in the last two seconds, whose
 * time stamp cannot tell two quick writes of the same size apart (git's "racy" rule).
 */
function statKeyOf(file: string): string | undefined {
  let info;
  try {
    info = statSync(file);
  } catch {
    return undefined;
  }
  if (Date.now() - info.mtimeMs < 2000) return undefined;
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}`;
}

/** Finds line and column of an environment read without positions (for the rare message). */
export type Locate = (source: SourceLocation) => { line: number; column: number };

/** One file's parse, as assembleOrgs reads it. */
interface ParsedFile {
  readonly file: string;
  readonly documents: ReturnType<typeof parseManifest>['documents'];
  readonly problems: readonly ManifestProblem[];
}

/**
 * Where an environment was declared. The position-tracking parser records it; the fast one does
 * not (to save memory), and there it is the environment's position: document `document` of the
 * file's documents, entry `index` of its environments.
 */
function sourceOf(
  env: DesiredEnvironment,
  file: string,
  document: number,
  index: number,
): SourceLocation {
  return env.source ?? { file, document, index };
}

/**
 * Where each environment was declared, by identity: built only when a name is declared twice (the
 * rare message that names both places), once, however many repeats there are.
 */
function sourceIndex(parsed: readonly ParsedFile[]): Map<DesiredEnvironment, SourceLocation> {
  const index = new Map<DesiredEnvironment, SourceLocation>();
  for (const file of parsed) {
    for (const [d, doc] of file.documents.entries()) {
      for (const [i, env] of doc.environments.entries()) {
        index.set(env, sourceOf(env, file.file, d, i));
      }
    }
  }
  return index;
}

/** Names declared twice that are reported one by one, per org; the rest are counted. */
const MAX_REPEATS_SHOWN = 5;

/** Merges parsed documents into orgs, flagging names declared twice with both places. */
export function assembleOrgs(
  parsed: readonly ParsedFile[],
  locate: Locate = (source) => ({ line: source.line ?? 1, column: source.column ?? 1 }),
): { orgs: OrgManifest[]; unattributed: ManifestProblem[] } {
  const byOrg = new Map<
    string,
    {
      envs: Map<string, DesiredEnvironment>;
      files: Set<string>;
      problems: ManifestProblem[];
      /** Names declared twice, and where the first one not shown was. */
      repeats: number;
      moreRepeats?: SourceLocation;
    }
  >();
  const unattributed: ManifestProblem[] = [];
  let sources: Map<DesiredEnvironment, SourceLocation> | undefined;
  const entry = (org: string) => {
    let value = byOrg.get(org);
    if (value === undefined) {
      value = { envs: new Map(), files: new Set(), problems: [], repeats: 0 };
      byOrg.set(org, value);
    }
    return value;
  };
  for (const file of parsed) {
    for (const problem of file.problems) {
      if (problem.org === undefined) unattributed.push(problem);
      else {
        const org = entry(problem.org);
        org.problems.push(problem);
        org.files.add(problem.file);
      }
    }
    for (const [d, doc] of file.documents.entries()) {
      const org = entry(doc.org);
      org.files.add(file.file);
      for (const [index, env] of doc.environments.entries()) {
        const first = org.envs.get(env.name);
        if (first === undefined) {
          org.envs.set(env.name, env);
          continue;
        }
        const source = sourceOf(env, file.file, d, index);
        org.repeats++;
        if (org.repeats > MAX_REPEATS_SHOWN) {
          // One broken file says so in a few lines, not thousands: the rest are counted.
          org.moreRepeats ??= source;
          continue;
        }
        const here = locate(source);
        sources ??= sourceIndex(parsed);
        const firstSource = sources.get(first);
        const there =
          firstSource === undefined ? undefined : { ...firstSource, ...locate(firstSource) };
        org.problems.push({
          file: source.file,
          line: here.line,
          column: here.column,
          path: `environments[${source.index}].name`,
          message:
            `environment "${env.name}" of org "${doc.org}" is declared twice: here and at ` +
            (there ? `${there.file}:${there.line}:${there.column}` : 'another place'),
          org: doc.org,
        });
      }
    }
  }
  for (const [org, value] of byOrg) {
    const source = value.moreRepeats;
    if (source === undefined) continue;
    const here = locate(source);
    const more = value.repeats - MAX_REPEATS_SHOWN;
    value.problems.push({
      file: source.file,
      line: here.line,
      column: here.column,
      path: `environments[${source.index}].name`,
      message: `... and ${more} more environment name(s) of org "${org}" declared twice from here on`,
      org,
    });
  }
  const orgs = [...byOrg.entries()]
    .sort(([a], [b]) => compareNames(a, b))
    .map(([org, value]): OrgManifest => ({
      org,
      environments:
        value.problems.length > 0
          ? []
          : [...value.envs.values()].sort((a, b) => compareNames(a.name, b.name)),
      files: [...value.files].sort(compareNames),
      problems: value.problems,
    }));
  return { orgs, unattributed };
}

/** Reads, parses and validates every manifest below the root. Problems are data, not throws. */
export async function loadManifests(options: LoadOptions): Promise<ManifestSet> {
  const { files, problems: treeProblems } = await discoverManifestFiles(
    options.root,
    options.cwd,
    options.displayRoot,
  );
  const parsed: ParsedFile[] = Array.from({ length: files.length });
  const seen: ManifestCache = new Map();
  const shared = sharedValues(); // names and policy lists repeat across files
  const paths = new Map<string, string>();
  const changed = new Set<string>();
  for (const [index, file] of files.entries()) {
    const cached = options.cache?.get(file.display);
    const statKey = options.cache === undefined ? undefined : statKeyOf(file.path);
    if (cached !== undefined && statKey !== undefined && cached.statKey === statKey) {
      // Same file, untouched since the last load.
      seen.set(file.display, cached);
      parsed[index] = {
        file: file.display,
        documents: cached.result.documents,
        problems: [...cached.result.problems],
      };
      continue;
    }
    const outcome = readManifestFile(file.path, options.maxFileBytes);
    if (!outcome.ok) {
      changed.add(file.display);
      parsed[index] = {
        file: file.display,
        documents: [],
        problems: [
          {
            file: file.display,
            line: 1,
            column: 1,
            path: '',
            message: outcome.message,
            org: undefined,
          },
        ],
      };
      continue;
    }
    const hash =
      options.cache === undefined ? '' : createHash('sha1').update(outcome.text).digest('hex');
    const result =
      cached !== undefined && cached.hash === hash
        ? cached.result
        : parseManifest(outcome.text, file.display, shared);
    if (options.cache !== undefined) seen.set(file.display, { statKey, hash, result });
    if (result !== cached?.result) changed.add(file.display);
    paths.set(file.display, file.path);
    parsed[index] = {
      file: file.display,
      documents: result.documents,
      problems: [...result.problems],
    };
  }
  if (options.cache !== undefined) {
    // Keep only the files that are still there; the others changed by going away.
    for (const display of options.cache.keys()) if (!seen.has(display)) changed.add(display);
    options.cache.clear();
    for (const [display, entry] of seen) options.cache.set(display, entry);
  }
  // Environments read by the fast path carry no line and column. The rare message that needs
  // them (a name declared twice) asks for them; only then are those few files read again.
  const wanted = new Set<string>();
  const known = (source: SourceLocation) =>
    source.line !== undefined && source.column !== undefined
      ? { line: source.line, column: source.column }
      : undefined;
  let assembled = assembleOrgs(parsed, (source) => {
    const position = known(source);
    if (position === undefined) wanted.add(source.file);
    return position ?? { line: 1, column: 1 };
  });
  if (wanted.size > 0) {
    const locators = new Map<string, ReturnType<typeof textLocator>>();
    for (const file of wanted) {
      const outcome = readManifestFile(paths.get(file) ?? file, options.maxFileBytes);
      if (outcome.ok) locators.set(file, textLocator(outcome.text));
    }
    assembled = assembleOrgs(
      parsed,
      (source) =>
        known(source) ??
        locators.get(source.file)?.(source.document, ['environments', source.index]) ?? {
          line: 1,
          column: 1,
        },
    );
  }
  const { orgs, unattributed } = assembled;
  const treeLevel: ManifestProblem[] = treeProblems.map((problem) => ({
    file: problem.display,
    line: 1,
    column: 1,
    path: '',
    message: problem.message,
    org: undefined,
  }));
  return {
    orgs,
    unattributed: [...treeLevel, ...unattributed],
    fileCount: files.length,
    ...(options.cache === undefined ? {} : { changedFiles: changed }),
  };
}

export { displayPath, formatProblem };
