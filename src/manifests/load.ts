import { resolve as resolvePath } from 'node:path';
import { crypto, fs } from '../runtime/builtins.ts';
import type { DesiredEnvironment, SourceLocation } from '../core/model.ts';
import { assembleOrgs, sourceOf, type OrgManifest, type ParsedFile } from './assemble.ts';
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
  sharedValues,
  textLocator,
  type ManifestProblem,
  type ParsedManifest,
  type SkippedFile,
} from './parse.ts';
import { resolvePolicyFiles, type LoadedFile } from './policy-files.ts';
import type { Locator, Place } from './text-locator.ts';

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
   * member that names no environment, say). Reads the file again; undefined when it cannot tell.
   */
  readonly locate?: Locate | undefined;
}

/**
 * See ManifestSet.locate: `env` is an environment of the valid org `org` (whose names are unique),
 * `path` is below the environment, `place` a value in the list there or a key of the mapping.
 */
export type Locate = (
  org: string,
  env: DesiredEnvironment,
  path: readonly (string | number)[],
  place?: Place,
) => Promise<{ file: string; line: number; column: number; path: string } | undefined>;

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
  readonly result: ParsedManifest;
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
    info = fs().statSync(file);
  } catch {
    return undefined;
  }
  if (Date.now() - info.mtimeMs < 2000) return undefined;
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}`;
}

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
    policyFiles: result.policyFiles,
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

/** Where `org` declares the environment `name`: the first of its files and documents that does. */
async function findSource(
  org: string,
  name: string,
  files: readonly string[],
  documentsOf: (file: string) => Promise<ParsedFile['documents']>,
): Promise<SourceLocation | undefined> {
  for (const file of files) {
    for (const [d, doc] of (await documentsOf(file)).entries()) {
      if (doc.org !== org) continue;
      const index = doc.environments.findIndex((env) => env.name === name);
      const env = doc.environments[index];
      if (env !== undefined) return sourceOf(env, file, d, index);
    }
  }
  return undefined;
}

/** Reads, parses and validates every manifest below the root. Problems are data, not throws. */
export async function loadManifests(options: LoadOptions): Promise<ManifestSet> {
  const roots = (options.paths ?? [options.root]).map((root) => resolvePath(options.cwd, root));
  const rules = await loadIgnoreRules(roots, options.exclude ?? [], options.maxFileBytes);
  const { files, problems: treeProblems } =
    options.paths === undefined
      ? discoverManifestFiles(options.root, options.cwd, options.displayRoot, rules)
      : discoverGivenPaths(options.paths, options.cwd, rules);
  const loaded: LoadedFile[] = Array.from({ length: files.length });
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
      paths.set(file.display, file.path);
      loaded[index] = loadedFile(file, cached.result);
      continue;
    }
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
    const hash =
      options.cache === undefined
        ? ''
        : crypto().createHash('sha1').update(outcome.text).digest('hex');
    const result =
      cached !== undefined && cached.hash === hash
        ? cached.result
        : await parseManifest(outcome.text, file.display, shared);
    if (options.cache !== undefined) seen.set(file.display, { statKey, hash, result });
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
  const parsed =
    options.strict === true
      ? await Promise.all(
          resolved.map(async (file): Promise<ParsedFile> => {
            if (file.notManifest !== true) return file;
            const path = paths.get(file.file) ?? file.file;
            const outcome = readManifestFile(path, options.maxFileBytes);
            if (!outcome.ok) return unreadable(file.file, outcome.message);
            const strict = await parseManifest(outcome.text, file.file, shared, { strict: true });
            return loadedFile({ path, display: file.file }, strict).parsed;
          }),
        )
      : resolved;
  // Environments read by the fast path carry no line and column, and no environment carries those
  // of its keys. The rare message that needs them (a name declared twice, a clash of renames, the
  // ownership tag under prune) asks for them; only then are those few files read again.
  const wanted = new Set<string>();
  const known = (source: SourceLocation, path: readonly (string | number)[], place?: Place) =>
    source.line !== undefined &&
    source.column !== undefined &&
    path.length === 0 &&
    place === undefined
      ? { line: source.line, column: source.column }
      : undefined;
  let assembled = assembleOrgs(parsed, (source, path = [], place) => {
    const position = known(source, path, place);
    if (position === undefined) wanted.add(source.file);
    return position ?? { line: 1, column: 1 };
  });
  // A file is read again at most once, however many places are asked for in it; its text is
  // then parsed for positions (locatorOf) or for its environments (documentsOf below) at most once.
  const textOf = byFile((file): string | null => {
    const outcome = readManifestFile(paths.get(file) ?? file, options.maxFileBytes);
    return outcome.ok ? outcome.text : null;
  });
  const locatorOf = byFile(async (file): Promise<Locator | undefined> => {
    const text = textOf(file);
    return text === null ? undefined : textLocator(text);
  });
  if (wanted.size > 0) {
    const locators = new Map(
      await Promise.all([...wanted].map(async (file) => [file, await locatorOf(file)] as const)),
    );
    assembled = assembleOrgs(
      parsed,
      (source, path = [], place) =>
        known(source, path, place) ??
        locators.get(source.file)?.(
          source.document,
          ['environments', source.index, ...path],
          place,
        ) ?? {
          line: source.line ?? 1,
          column: source.column ?? 1,
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
  // Found again by name in the org's files, so that the load's parsed files need not be kept
  // (at 100,000 environments they hold a copy of every list of environments): this is for the
  // rare message that needs a place, and a valid org's names are unique.
  const filesOf = new Map(orgs.map((org) => [org.org, org.files]));
  const documentsOf = byFile(async (file): Promise<ParsedFile['documents']> => {
    const text = textOf(file);
    return text === null ? [] : (await parseManifest(text, file)).documents;
  });
  const locate: Locate = async (org, env, path, place) => {
    const source = await findSource(org, env.name, filesOf.get(org) ?? [], documentsOf);
    if (source === undefined) return undefined;
    const full = ['environments', source.index, ...path];
    const at = (await locatorOf(source.file))?.(source.document, full, place) ?? {
      line: 1,
      column: 1,
      path: full,
    };
    return { file: source.file, line: at.line, column: at.column, path: formatPath(at.path) };
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
