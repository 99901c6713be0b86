import { resolve as resolvePath } from 'node:path';
import * as crypto from 'node:crypto';
import type { DesiredEnvironment, SourceLocation } from '../core/model.ts';
import { assembleOrgs, type OrgManifest, type ParsedFile } from './orgs.ts';
import {
  discoverGivenPaths,
  discoverManifestFiles,
  displayPath,
  readManifestFile,
} from './discover.ts';
import { IGNORE_FILE, loadIgnoreRules } from './ignore-rules.ts';
import { formatPath } from './messages.ts';
import {
  formatProblem,
  NOT_A_MANIFEST,
  parseManifest,
  type ManifestProblem,
  type ParsedManifest,
  type SkippedFile,
} from './parse.ts';
import { resolvePolicyFiles, type LoadedFile } from './policy-files.ts';
import { textLocator, type Locator, type Place } from './yaml-document.ts';

/** The whole manifest tree, read and validated. */
export interface ManifestSet {
  /** Sorted by org. */
  readonly orgs: readonly OrgManifest[];
  /** Problems that belong to no organization (unreadable files, YAML that names no org). */
  readonly unattributed: readonly ManifestProblem[];
  /** The manifest files read (not those skipped). */
  readonly fileCount: number;
  /** The files of other YAML, skipped (parsed.ts, ParseOptions), sorted, and why. */
  readonly skipped: readonly SkippedFile[];
  /**
   * With a cache: the files that are new, changed or gone since the last load (by display path).
   * Undefined without a cache, meaning "anything may have changed".
   */
  readonly changedFiles?: ReadonlySet<string> | undefined;
  /**
   * Where a declared environment, or a place in it, is: for problems found after loading (a
   * member that names no environment, say). Reads the file again for a place below it.
   */
  readonly locate?: Locate | undefined;
}

/**
 * See ManifestSet.locate: `path` is below the environment `env`, `place` a value in the list
 * there or a key of the mapping.
 */
export type Locate = (
  env: DesiredEnvironment,
  path: readonly (string | number)[],
  place?: Place,
) => { file: string; line: number; column: number; path: string } | undefined;

export interface LoadOptions {
  readonly root: string;
  /** Read these files and folders instead of the tree below `root` (see discoverGivenPaths). */
  readonly paths?: readonly string[] | undefined;
  readonly cwd: string;
  readonly maxFileBytes: number;
  /** More lines of the root's .envsyncignore (`--exclude`; ignore-rules.ts). */
  readonly exclude?: readonly string[] | undefined;
  /** Read a file of other YAML as a manifest, with its problems, instead of skipping it. */
  readonly strict?: boolean | undefined;
  /** Show file paths under this root instead of the real one (see discoverManifestFiles). */
  readonly displayRoot?: string | undefined;
  /** Parsed files kept between loads (the daemon's): a file whose text did not change is not parsed again. */
  readonly cache?: ManifestCache | undefined;
}

/** Parsed files by display path: the sha1 of each one's text (not the text), and what it said. */
export type ManifestCache = Map<string, { readonly hash: string; readonly result: ParsedManifest }>;

/** A file read and parsed (or found in the cache), for resolvePolicyFiles. */
function loadedFile(file: { path: string; display: string }, result: ParsedManifest): LoadedFile {
  return {
    parsed: {
      file: file.display,
      documents: result.documents,
      problems: [...result.problems],
      declared: result.declared,
      notManifest: result.notManifest,
    },
    path: file.path,
  };
}

/** A file that could not be read: one problem, at its start. */
function unreadable(file: string, message: string): ParsedFile {
  return {
    file,
    documents: [],
    problems: [{ file, line: 1, column: 1, path: '', message, org: undefined }],
  };
}

/** `compute`, run at most once per file: later calls with the same file get the first result. */
function byFile<T>(compute: (file: string) => T): (file: string) => T {
  const results = new Map<string, T>();
  return (file) => {
    if (!results.has(file)) results.set(file, compute(file));
    return results.get(file) as T;
  };
}

/** Reads, parses and validates every manifest below the root. Problems are data, not throws. */
export async function loadManifests(options: LoadOptions): Promise<ManifestSet> {
  const roots = (options.paths ?? [options.root]).map((root) => resolvePath(options.cwd, root));
  const rules = loadIgnoreRules(roots, options.exclude ?? [], options.maxFileBytes);
  const { files, problems: treeProblems } =
    options.paths === undefined
      ? discoverManifestFiles(options.root, options.cwd, options.displayRoot, rules)
      : discoverGivenPaths(options.paths, options.cwd, rules);
  const loaded: LoadedFile[] = Array.from({ length: files.length });
  const seen: ManifestCache = new Map();
  const paths = new Map<string, string>();
  const changed = new Set<string>();
  for (const [index, file] of files.entries()) {
    const outcome = readManifestFile(file.path, options.maxFileBytes);
    if (!outcome.ok) {
      changed.add(file.display);
      const message =
        outcome.notRegular === true
          ? `${outcome.message}: a manifest must be a file; remove it, or leave it out with ${IGNORE_FILE}`
          : outcome.message;
      loaded[index] = { parsed: unreadable(file.display, message), path: file.path };
      continue;
    }
    const cached = options.cache?.get(file.display);
    const hash =
      options.cache === undefined
        ? ''
        : crypto.createHash('sha1').update(outcome.text).digest('hex');
    const result =
      cached?.hash === hash ? cached.result : parseManifest(outcome.text, file.display);
    if (options.cache !== undefined) seen.set(file.display, { hash, result });
    if (result !== cached?.result) changed.add(file.display);
    paths.set(file.display, file.path);
    loaded[index] = loadedFile(file, result);
  }
  if (options.cache !== undefined) {
    // Keep only the files that are still there; the others changed by going away.
    for (const display of options.cache.keys()) if (!seen.has(display)) changed.add(display);
    options.cache.clear();
    for (const [display, entry] of seen) options.cache.set(display, entry);
  }
  // The files the manifests name in `policies:` are read as policies, and are not manifests.
  const resolved = resolvePolicyFiles(loaded, {
    root: resolvePath(options.cwd, options.root),
    maxFileBytes: options.maxFileBytes,
  });
  // Under --strict, other YAML that no manifest names as a policy file is read as a manifest,
  // with the schema's problems (ParseOptions): read again, as such files are few.
  const parsed = resolved.map((file): ParsedFile => {
    if (options.strict !== true || file.notManifest !== true) return file;
    const path = paths.get(file.file) ?? file.file;
    const outcome = readManifestFile(path, options.maxFileBytes);
    if (!outcome.ok) return unreadable(file.file, outcome.message);
    const strict = parseManifest(outcome.text, file.file, { strict: true });
    return loadedFile({ path, display: file.file }, strict).parsed;
  });
  // A place below an environment (a key, an item of a list) is found by reading its file again:
  // only the rare message that names one asks, and a file is read and parsed at most once.
  const locatorOf = byFile((file): Locator | undefined => {
    const outcome = readManifestFile(paths.get(file) ?? file, options.maxFileBytes);
    return outcome.ok ? textLocator(outcome.text) : undefined;
  });
  const placeOf = (source: SourceLocation, path: readonly (string | number)[], place?: Place) =>
    locatorOf(source.file)?.(source.document, ['environments', source.index, ...path], place);
  const { orgs, unattributed } = assembleOrgs(parsed, (source, path = [], place) =>
    path.length === 0 && place === undefined
      ? { line: source.line ?? 1, column: source.column ?? 1 }
      : (placeOf(source, path, place) ?? { line: source.line ?? 1, column: source.column ?? 1 }),
  );
  const treeLevel: ManifestProblem[] = treeProblems.map((problem) => ({
    file: problem.display,
    line: 1,
    column: 1,
    path: '',
    message: problem.message,
    org: undefined,
  }));
  const locate: Locate = (env, path, place) => {
    const source = env.source;
    if (source === undefined) return undefined;
    const at = placeOf(source, path, place);
    const full = ['environments', source.index, ...(at?.path ?? path)];
    return {
      file: source.file,
      line: at?.line ?? source.line ?? 1,
      column: at?.column ?? source.column ?? 1,
      path: formatPath(at === undefined ? full : at.path.slice(0)),
    };
  };
  const skipped = parsed.flatMap((file) =>
    file.notManifest === true ? [{ file: file.file, reason: NOT_A_MANIFEST }] : [],
  );
  return {
    orgs,
    unattributed: [...treeLevel, ...unattributed],
    fileCount: parsed.length - skipped.length,
    skipped,
    ...(options.cache === undefined ? {} : { changedFiles: changed }),
    locate,
  };
}

export { assembleOrgs, displayPath, formatProblem, type OrgManifest, type SkippedFile };
export { skippedLine } from './parse.ts';
