import { resolve as resolvePath } from 'node:path';
import * as crypto from 'node:crypto';
import type { DesiredEnvironment, SourceLocation } from '../core/model.ts';
import { assembleOrgs, type OrgManifest, type ParsedFile } from './orgs.ts';
import { discoverGivenPaths, discoverManifestFiles, readManifestFile } from './discover.ts';
import { IGNORE_FILE, loadIgnoreRules } from './ignore-rules.ts';
import { formatPath } from './messages.ts';
import {
  NOT_A_MANIFEST,
  parseManifest,
  type ManifestProblem,
  type ParsedManifest,
  type SkippedFile,
} from './parse.ts';
import { resolvePolicyFiles, type LoadedFile } from './policy-files.ts';
import { textLocator, type Place } from './yaml-document.ts';

/** The whole manifest tree, read and validated. */
export interface ManifestSet {
  /** Sorted by org. */
  readonly orgs: readonly OrgManifest[];
  /** Problems that belong to no organization (unreadable files, YAML that names no org). */
  readonly unattributed: readonly ManifestProblem[];
  /** The manifest files read (not those skipped). */
  readonly fileCount: number;
  /** The files of other YAML, skipped, sorted, and why. */
  readonly skipped: readonly SkippedFile[];
  /** With a cache: the files new, changed or gone since the last load; without, any may have. */
  readonly changedFiles?: ReadonlySet<string> | undefined;
  /** Where a declared environment, or a place below it, is: for problems found after loading. */
  readonly locate?: Locate | undefined;
}

/** `path` is below the environment `env`; `place`, a value of the list or a key of the map. */
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
  /** More lines of the root's .envsyncignore (`--exclude`). */
  readonly exclude?: readonly string[] | undefined;
  /** Read a file of other YAML as a manifest, with its problems, instead of skipping it. */
  readonly strict?: boolean | undefined;
  /** Show file paths under this root instead of the real one (see discoverManifestFiles). */
  readonly displayRoot?: string | undefined;
  /** Parsed files kept between loads (the daemon's): an unchanged file is not parsed again. */
  readonly cache?: ManifestCache | undefined;
}

/** Parsed files by display path: the sha1 of each one's text (not the text), and what it said. */
export type ManifestCache = Map<string, { readonly hash: string; readonly result: ParsedManifest }>;

/** A problem with a file as a whole: at its start, held against no org. */
function fileProblem(file: string, message: string): ManifestProblem {
  return { file, line: 1, column: 1, path: '', message, org: undefined };
}

const unreadable = (file: string, message: string): ParsedFile => ({
  file,
  documents: [],
  problems: [fileProblem(file, message)],
});

/** Reads, parses and validates every manifest below the root. Problems are data, not throws. */
export async function loadManifests(options: LoadOptions): Promise<ManifestSet> {
  const { cwd, maxFileBytes, cache } = options;
  const roots = (options.paths ?? [options.root]).map((root) => resolvePath(cwd, root));
  const rules = loadIgnoreRules(roots, options.exclude ?? [], maxFileBytes);
  const found =
    options.paths === undefined
      ? discoverManifestFiles(options.root, cwd, options.displayRoot, rules)
      : discoverGivenPaths(options.paths, cwd, rules);
  const seen: ManifestCache = new Map();
  const changed = new Set<string>();
  const loaded = found.files.map(({ path, display }): LoadedFile => {
    const outcome = readManifestFile(path, maxFileBytes);
    if (!outcome.ok) {
      changed.add(display);
      const fix = `: a manifest must be a file; remove it, or leave it out with ${IGNORE_FILE}`;
      const message = `${outcome.message}${outcome.notRegular === true ? fix : ''}`;
      return { ...unreadable(display, message), path };
    }
    const hash =
      cache === undefined ? '' : crypto.createHash('sha1').update(outcome.text).digest('hex');
    const cached = cache?.get(display);
    const result = cached?.hash === hash ? cached.result : parseManifest(outcome.text, display);
    if (cache !== undefined) seen.set(display, { hash, result });
    if (result !== cached?.result) changed.add(display);
    return { ...result, file: display, path };
  });
  if (cache !== undefined) {
    // The files gone since the last load changed too.
    for (const display of cache.keys()) if (!seen.has(display)) changed.add(display);
    cache.clear();
    for (const [display, entry] of seen) cache.set(display, entry);
  }
  // The files the manifests name in `policies:` are read as policies, and are not manifests.
  const root = resolvePath(cwd, options.root);
  const resolved = resolvePolicyFiles(loaded, { root, maxFileBytes });
  // Under --strict, other YAML that no manifest names as a policy file is read again (such files
  // are few) as a manifest, with the schema's problems.
  const parsed = resolved.map((file): ParsedFile => {
    if (options.strict !== true || file.notManifest !== true) return file;
    const outcome = readManifestFile(file.path, maxFileBytes);
    if (!outcome.ok) return unreadable(file.file, outcome.message);
    return { ...parseManifest(outcome.text, file.file, { strict: true }), file: file.file };
  });
  // A place below an environment (a key, an item of a list) is found by reading its file again:
  // only the rare message that names one asks, and a file is read and parsed at most once.
  const paths = new Map(loaded.map((file) => [file.file, file.path]));
  const locators = new Map<string, ReturnType<typeof textLocator> | undefined>();
  const placeOf = (source: SourceLocation, path: readonly (string | number)[], place?: Place) => {
    if (!locators.has(source.file)) {
      const outcome = readManifestFile(paths.get(source.file) ?? source.file, maxFileBytes);
      locators.set(source.file, outcome.ok ? textLocator(outcome.text) : undefined);
    }
    const within = ['environments', source.index, ...path];
    return locators.get(source.file)?.(source.document, within, place);
  };
  const start = (source: SourceLocation) => ({
    line: source.line ?? 1,
    column: source.column ?? 1,
  });
  const { orgs, unattributed } = assembleOrgs(
    parsed,
    (source, path = [], place) =>
      (path.length === 0 && place === undefined && source.line !== undefined
        ? undefined
        : placeOf(source, path, place)) ?? start(source),
  );
  const locate: Locate = (env, path, place) => {
    const { source } = env;
    if (source === undefined) return undefined;
    const at = placeOf(source, path, place);
    const { line, column } = at ?? start(source);
    const full = at?.path ?? ['environments', source.index, ...path];
    return { file: source.file, line, column, path: formatPath(full) };
  };
  const skipped = parsed.flatMap((file) =>
    file.notManifest === true ? [{ file: file.file, reason: NOT_A_MANIFEST }] : [],
  );
  return {
    orgs,
    unattributed: [
      ...found.problems.map((p) => fileProblem(p.display, p.message)),
      ...unattributed,
    ],
    fileCount: parsed.length - skipped.length,
    skipped,
    ...(cache === undefined ? {} : { changedFiles: changed }),
    locate,
  };
}

export type { OrgManifest };
export { skippedLine } from './parse.ts';
export { formatProblem } from '../core/validation.ts';
