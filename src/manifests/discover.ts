/**
 * Finding the manifest files and reading them, synchronously: each call is answered from the
 * kernel's cache, where promise-based ones cost the main thread more (`npm run bench`).
 */
import path from 'node:path';
import * as fs from 'node:fs';
import { codeOf, readRegularFileSync } from '../runtime/read-file.ts';

/** A manifest file: its path as walked (absolute), and as shown to people. */
export type ManifestFile = { readonly path: string; readonly display: string };

/** A problem with the tree itself (not with a file's content): unreadable, outside the root, ... */
export type DiscoveryProblem = { readonly display: string; readonly message: string };

/** The ignore rules of the roots one load walks (ignore-rules.ts). */
export type IgnoreRules = { forRoot(root: string): RootRules };

/** One root's rules: `ignored` takes a path below it, `/`-separated, a folder's ending in `/`. */
export interface RootRules {
  readonly ignored: ((relative: string) => boolean) | undefined;
  readonly problem?: { readonly file: string; readonly message: string } | undefined;
}

const MANIFEST_EXTENSION = /\.ya?ml$/i;

export function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

const realpath = (file: string): string => fs.realpathSync.native(file);

/** The real path, or the path as it is when it cannot be resolved. */
export function realOr(file: string): string {
  try {
    return realpath(file);
  } catch {
    return file;
  }
}

const byDisplay = (a: ManifestFile, b: ManifestFile) =>
  a.display < b.display ? -1 : a.display > b.display ? 1 : 0;

/** Returns how to show `file` to a person: relative to `cwd` when below it, else absolute. */
export function displayPath(file: string, cwd: string): string {
  return file !== cwd && isInside(cwd, file) ? path.relative(cwd, file) : file;
}

/**
 * Lists every `*.yaml` / `*.yml` file below `root` as docs/manifests.md says, shown under
 * `displayRoot` when given (the path the user named, not the worktree it resolved to). Throws
 * ENOENT for a missing root: the caller says what to do.
 */
export function discoverManifestFiles(
  root: string,
  cwd: string,
  displayRoot?: string,
  rules?: IgnoreRules,
): { files: ManifestFile[]; problems: DiscoveryProblem[] } {
  const files: ManifestFile[] = [];
  const problems: DiscoveryProblem[] = [];
  const absoluteRoot = path.resolve(cwd, root);
  const show = (full: string) =>
    displayRoot === undefined
      ? displayPath(full, cwd)
      : path.join(displayRoot, path.relative(absoluteRoot, full));
  const refuse = (full: string, message: string) => problems.push({ display: show(full), message });
  const realRoot = realpath(absoluteRoot);
  const { ignored, problem } = rules?.forRoot(absoluteRoot) ?? {};
  if (problem !== undefined) refuse(problem.file, problem.message);
  const isIgnored = (full: string, folder: boolean) =>
    ignored !== undefined &&
    ignored(`${path.relative(absoluteRoot, full).split(path.sep).join('/')}${folder ? '/' : ''}`);
  const visited = new Set<string>([realRoot]);
  const pending: string[] = [absoluteRoot];

  while (pending.length > 0) {
    const dir = pending.pop() as string;
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      refuse(dir, `cannot read folder (${codeOf(error)})`);
      continue;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      let isDirectory = entry.isDirectory();
      let real = full;
      if (entry.isSymbolicLink()) {
        // A link the rules leave out, as a file or as a folder, is neither followed nor reported.
        const linkIgnored = () => isIgnored(full, false) || isIgnored(full, true);
        try {
          real = realpath(full);
        } catch (error) {
          const code = codeOf(error);
          const loop = code === 'ELOOP';
          const why = loop
            ? 'symlink loop: not followed'
            : `broken symlink: not followed (${code})`;
          if (!linkIgnored()) refuse(full, why);
          continue;
        }
        if (!isInside(realRoot, real)) {
          if (linkIgnored()) continue;
          if (MANIFEST_EXTENSION.test(entry.name) || !MANIFEST_EXTENSION.test(real))
            refuse(full, 'symlink points outside the manifests root: not followed');
          continue;
        }
        try {
          isDirectory = fs.statSync(real).isDirectory();
        } catch {
          continue; // gone since realpath found it
        }
      } else if (isDirectory) real = realOr(full); // gone since listed: fails when walked
      // Before the folder counts as walked: the same folder may be reached by a path kept. A FIFO,
      // a socket or a device named like a manifest is listed: reading it refuses it.
      if (isIgnored(full, isDirectory)) continue;
      if (isDirectory) {
        if (visited.has(real)) continue; // a loop, or a folder already walked
        visited.add(real);
        pending.push(full);
      } else if (MANIFEST_EXTENSION.test(entry.name))
        files.push({ path: full, display: show(full) });
    }
  }
  return { files: files.sort(byDisplay), problems };
}

/** The outcome of reading one file; `notRegular`: a FIFO, a socket, a device or a folder. */
export type ReadOutcome =
  | { ok: true; text: string }
  | { ok: false; message: string; notRegular?: true };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Reads a manifest as UTF-8 text (a BOM dropped), or says why not. */
export function readManifestFile(file: string, maxBytes: number): ReadOutcome {
  const read = readRegularFileSync(file, maxBytes);
  const refuse = (message: string) => ({ ok: false, message }) as const;
  if (Buffer.isBuffer(read)) {
    if (read.includes(0)) return refuse('binary file (contains NUL bytes), not YAML');
    try {
      return { ok: true, text: utf8.decode(read) };
    } catch {
      return refuse('not valid UTF-8 text; save the file as UTF-8');
    }
  }
  if (read.kind === 'not-regular')
    return { ok: false, message: `is ${read.what}, not a regular file`, notRegular: true };
  if (read.kind === 'too-large')
    return refuse(`file is larger than the limit of ${maxBytes} bytes (--max-file-bytes)`);
  if (read.kind === 'abandoned') return refuse(`cannot be read: ${read.why}`); // never when sync
  const gone = read.code === 'ENOENT';
  return refuse(
    gone
      ? 'file disappeared while reading the manifests; run again'
      : `cannot be read (${read.code})`,
  );
}

/** The files named on a command line: a file whatever its name and the rules, a folder walked. */
export function discoverGivenPaths(
  paths: readonly string[],
  cwd: string,
  rules?: IgnoreRules,
): { files: ManifestFile[]; problems: DiscoveryProblem[] } {
  const files = new Map<string, ManifestFile>();
  const problems: DiscoveryProblem[] = [];
  for (const given of paths) {
    const full = path.resolve(cwd, given);
    let info: fs.Stats;
    try {
      info = fs.statSync(full);
    } catch (error) {
      const code = codeOf(error);
      const message = code === 'ENOENT' ? 'no such file or folder' : `cannot be read (${code})`;
      problems.push({ display: displayPath(full, cwd), message });
      continue;
    }
    if (!info.isDirectory()) files.set(full, { path: full, display: displayPath(full, cwd) });
    else {
      const found = discoverManifestFiles(full, cwd, undefined, rules);
      for (const file of found.files) files.set(file.path, file);
      problems.push(...found.problems);
    }
  }
  return { files: [...files.values()].sort(byDisplay), problems };
}
