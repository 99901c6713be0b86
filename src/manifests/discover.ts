import path from 'node:path';
import type { Stats } from 'node:fs';
import * as fs from 'node:fs';
import { readRegularFileSync } from '../runtime/read-file.ts';

/** A manifest file found below the root. */
export interface ManifestFile {
  /** The path as walked (through symlinks), absolute. */
  readonly path: string;
  /** The path shown to people: relative to the working directory when below it. */
  readonly display: string;
}

/** A problem with the tree itself (not with a file's content): unreadable, outside the root, ... */
export interface DiscoveryProblem {
  readonly display: string;
  readonly message: string;
}

/** The ignore rules of the roots one load walks (ignore-rules.ts). */
export interface IgnoreRules {
  forRoot(root: string): RootRules;
}

/**
 * One root's rules, and why its ignore file cannot be used, if it cannot. `ignored` takes a path
 * below the root, `/`-separated, a folder's ending in `/` (`dir/` patterns match folders only).
 */
export interface RootRules {
  readonly ignored: ((relative: string) => boolean) | undefined;
  readonly problem?: { readonly file: string; readonly message: string } | undefined;
}

const MANIFEST_EXTENSION = /\.ya?ml$/i;

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** The real path, as the C library resolves it (what `fs/promises`' realpath does too). */
function realpath(file: string): string {
  return fs.realpathSync.native(file);
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Returns how to show `file` to a person: relative to `cwd` when below it, else absolute. */
export function displayPath(file: string, cwd: string): string {
  const relative = path.relative(cwd, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative)
    ? relative
    : file;
}

/**
 * Lists every `*.yaml` / `*.yml` file below `root` at any depth, skipping hidden files and
 * folders and what the root's ignore rules leave out (a folder left out is not walked). Symlinks
 * are followed only while their target stays inside the root; loops are cut. A FIFO, a socket or
 * a device with such a name is listed too: reading it refuses it, with a message.
 *
 * Synchronous, as the reads of the files are (readManifestFile): the calls were awaited one at a
 * time anyway, and each is answered from the kernel's cache, where promise-based calls load
 * node:fs/promises (and readline with it) and go through the thread pool one by one.
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
  // Files are shown under `displayRoot` when given (the path the user named, not a git-sync
  // worktree it resolved to), else relative to the working directory.
  const show = (full: string) =>
    displayRoot === undefined
      ? displayPath(full, cwd)
      : path.join(displayRoot, path.relative(absoluteRoot, full));
  const realRoot = realpath(absoluteRoot); // throws ENOENT: the caller says what to do
  const { ignored, problem } = rules?.forRoot(absoluteRoot) ?? {};
  if (problem !== undefined)
    problems.push({ display: show(problem.file), message: problem.message });
  // Paths as the rules read them: below the root as walked, `/`-separated, a folder's with a `/`.
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
      problems.push({
        display: show(dir),
        message: `cannot read folder (${codeOf(error) ?? String(error)})`,
      });
      continue;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      let isDirectory = entry.isDirectory();
      if (entry.isSymbolicLink()) {
        // A link the rules leave out, as a file or as a folder, is neither followed nor reported.
        const linkIgnored = () => isIgnored(full, false) || isIgnored(full, true);
        let target: string;
        try {
          target = realpath(full);
        } catch (error) {
          if (linkIgnored()) continue;
          const code = codeOf(error);
          problems.push({
            display: show(full),
            message:
              code === 'ELOOP'
                ? 'symlink loop: not followed'
                : `broken symlink: not followed (${code ?? String(error)})`,
          });
          continue;
        }
        if (!isInside(realRoot, target)) {
          if (linkIgnored()) continue;
          if (MANIFEST_EXTENSION.test(entry.name) || !MANIFEST_EXTENSION.test(target)) {
            problems.push({
              display: show(full),
              message: 'symlink points outside the manifests root: not followed',
            });
          }
          continue;
        }
        let info: Stats;
        try {
          info = fs.statSync(target);
        } catch {
          continue; // gone since realpath found it
        }
        isDirectory = info.isDirectory();
        // Before the folder counts as walked: the same folder may be reached by a path kept.
        if (isIgnored(full, isDirectory)) continue;
        if (isDirectory) {
          if (visited.has(target)) continue; // a loop, or a folder already walked
          visited.add(target);
        }
      } else if (isIgnored(full, isDirectory)) {
        continue;
      } else if (isDirectory) {
        let real = full;
        try {
          real = realpath(full);
        } catch {
          // Not resolvable (gone since it was listed): walked as listed, and fails there if it must.
        }
        if (visited.has(real)) continue;
        visited.add(real);
      }
      // Whatever is not a folder is listed by its name: a FIFO, a socket or a device named like
      // a manifest is then refused when it is read, and reported, never passed over.
      if (isDirectory) pending.push(full);
      else if (MANIFEST_EXTENSION.test(entry.name)) files.push({ path: full, display: show(full) });
    }
  }
  files.sort((a, b) => (a.display < b.display ? -1 : a.display > b.display ? 1 : 0));
  return { files, problems };
}

/**
 * The outcome of reading one file: its text, or why it cannot be used. `notRegular`: the path is
 * a FIFO, a socket, a device or a folder (the message says which).
 */
export type ReadOutcome =
  | { ok: true; text: string }
  | { ok: false; message: string; notRegular?: true };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a manifest file as UTF-8 text (a BOM is dropped), refusing what is not a regular file,
 * files over `maxBytes`, binary files and invalid UTF-8. Never reads more than `maxBytes + 1`
 * bytes, and never waits on a FIFO (src/runtime/read-file.ts).
 *
 * Synchronous on purpose: manifests are small local files, and a thousand of them read this way
 * take about 15 ms where promise-based reads cost 60–200 ms of the main thread (measured with
 * `npm run bench`). Parsing them blocks the event loop far longer anyway.
 */
export function readManifestFile(file: string, maxBytes: number): ReadOutcome {
  const read = readRegularFileSync(file, maxBytes, (bytes): ReadOutcome => {
    if (bytes.includes(0))
      return { ok: false, message: 'binary file (contains NUL bytes), not YAML' };
    try {
      // The text is a copy: the buffer is free for the next file as soon as this returns.
      return { ok: true, text: utf8.decode(bytes) };
    } catch {
      return { ok: false, message: 'not valid UTF-8 text; save the file as UTF-8' };
    }
  });
  if (read.ok) return read.value;
  const { failure } = read;
  switch (failure.kind) {
    case 'abandoned':
      break; // a synchronous read is never abandoned
    case 'not-regular':
      return { ok: false, message: `is ${failure.what}, not a regular file`, notRegular: true };
    case 'too-large':
      return {
        ok: false,
        message: `file is larger than the limit of ${maxBytes} bytes (--max-file-bytes)`,
      };
    case 'error':
      return {
        ok: false,
        message:
          failure.code === 'ENOENT'
            ? 'file disappeared while reading the manifests; run again'
            : `cannot be read (${failure.code})`,
      };
  }
  return { ok: false, message: `cannot be read: ${failure.why}` };
}

/**
 * The manifest files named on a command line (`envsync validate a.yaml manifests/`): a file is
 * one manifest whatever its name (the caller chose it: a pre-commit hook, say), and whatever the
 * ignore rules say; a folder is walked as a manifests root is, with its own ignore file. Each file
 * is listed once however often it is named; a path that is neither is a problem, located at the
 * path itself.
 */
export function discoverGivenPaths(
  paths: readonly string[],
  cwd: string,
  rules?: IgnoreRules,
): { files: ManifestFile[]; problems: DiscoveryProblem[] } {
  const files = new Map<string, ManifestFile>();
  const problems: DiscoveryProblem[] = [];
  for (const given of paths) {
    const full = path.resolve(cwd, given);
    let info: Stats | string;
    try {
      info = fs.statSync(full);
    } catch (error) {
      info = codeOf(error) ?? String(error);
    }
    if (typeof info === 'string') {
      problems.push({
        display: displayPath(full, cwd),
        message: info === 'ENOENT' ? 'no such file or folder' : `cannot be read (${info})`,
      });
    } else if (info.isDirectory()) {
      const found = discoverManifestFiles(full, cwd, undefined, rules);
      for (const file of found.files) files.set(file.path, file);
      problems.push(...found.problems);
    } else {
      files.set(full, { path: full, display: displayPath(full, cwd) });
    }
  }
  const sorted = [...files.values()].sort((a, b) =>
    a.display < b.display ? -1 : a.display > b.display ? 1 : 0,
  );
  return { files: sorted, problems };
}
