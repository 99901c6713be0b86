/**
 * The files a manifest's `policies:` entries name: resolved relative to the manifest, held inside
 * the manifests root, read as bounded UTF-8 text (not parsed), and never read as manifests.
 *
 * Discovery lists every `*.yaml` file before any manifest is read, so a policy file below the
 * root is parsed as a manifest too, and is skipped as other YAML (it declares no org). Once every
 * file is parsed, the named files that are other YAML are taken out of the skipped files. A named
 * file that discovery reads as a manifest (it declares an org, or has problems that keep it from
 * being other YAML: a typo, a syntax error) stays a manifest, with whatever its parse said, and
 * the entry naming it is an error: a manifest is never a policy document, whatever state it is in.
 */
import path from 'node:path';
import type { DeclaredPolicyDocument } from '../core/policy-documents.ts';
import * as fs from 'node:fs';
import { kindOf } from '../runtime/read-file.ts';
import type { ParsedFile } from './orgs.ts';
import { readManifestFile } from './discover.ts';
import type { ManifestDocument, ManifestProblem, PolicyEntry } from './parse.ts';

/** One parsed manifest file, as the load knows it: its real place besides its display path. */
export interface LoadedFile {
  readonly parsed: ParsedFile;
  /** The path as walked, absolute. */
  readonly path: string;
}

export interface PolicyFileOptions {
  /** The manifests root (absolute): a policy file must lie inside it. */
  readonly root: string;
  readonly maxFileBytes: number;
}

function realpath(file: string): string | undefined {
  try {
    return fs.realpathSync.native(file);
  } catch {
    return undefined;
  }
}

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** Where a file named in a manifest is, through the manifest's folder as walked. */
function targetOf(manifest: string, file: string): string {
  return path.resolve(path.dirname(manifest), file);
}

/**
 * Reads the policy files the manifests name, and takes those discovery read as other YAML out of
 * the parsed files. Returns the manifest files, their documents carrying the policy documents
 * read, and every problem with a policy file at its entry's `file` value.
 */
export function resolvePolicyFiles(
  files: readonly LoadedFile[],
  options: PolicyFileOptions,
): ParsedFile[] {
  const named = new Set<string>(); // real paths (or lexical, where none) of every named file
  for (const file of files) {
    const written = file.parsed.documents.flatMap((doc) =>
      (doc.policies ?? []).map((entry) => entry.file),
    );
    for (const name of written) {
      const target = targetOf(file.path, name);
      named.add(realpath(target) ?? target);
    }
  }
  if (named.size === 0) return files.map((file) => file.parsed);
  const realRoot = realpath(options.root) ?? options.root;
  // The manifest files that are named, by real path: a cheap look at the name first.
  const baseNames = new Set([...named].map((file) => path.basename(file)));
  const manifestAt = new Map<string, ParsedFile>();
  for (const file of files) {
    if (!baseNames.has(path.basename(file.path))) continue;
    const real = realpath(file.path) ?? file.path;
    if (named.has(real)) manifestAt.set(real, file.parsed);
  }
  const policyFile = new Set([...manifestAt.values()].filter((parsed) => parsed.notManifest));
  const context = { ...options, realRoot, manifestAt };
  return files
    .filter((file) => !policyFile.has(file.parsed))
    .map((file) => withPolicyDocuments(file, context));
}

interface Context extends PolicyFileOptions {
  readonly realRoot: string;
  /** The files discovery read that a policy entry names, by real path. */
  readonly manifestAt: ReadonlyMap<string, ParsedFile>;
}

/** One manifest file, its documents' policy files read. */
function withPolicyDocuments(file: LoadedFile, context: Context): ParsedFile {
  const { parsed } = file;
  if (!parsed.documents.some((doc) => doc.policies !== undefined)) return parsed;
  const real = realpath(file.path) ?? file.path;
  const problems: ManifestProblem[] = [...parsed.problems];
  const documents = parsed.documents.map((doc): ManifestDocument => {
    if (doc.policies === undefined) return doc;
    const policyDocuments: DeclaredPolicyDocument[] = [];
    for (const entry of doc.policies) {
      const read = readEntry(entry, file, real, context);
      if (typeof read === 'string') {
        problems.push({
          file: parsed.file,
          line: entry.fileLine,
          column: entry.fileColumn,
          path: `policies[${entry.index}].file`,
          message: `policy file ${JSON.stringify(entry.file)}: ${read}`,
          org: doc.org,
        });
        continue;
      }
      policyDocuments.push({
        name: entry.name,
        ...(entry.description === undefined ? {} : { description: entry.description }),
        content: read.text,
        file: read.shown,
        source: {
          file: parsed.file,
          line: entry.line,
          column: entry.column,
          path: `policies[${entry.index}]`,
        },
      });
    }
    return { ...doc, policyDocuments };
  });
  return { ...parsed, documents, problems };
}

/** The text of one entry's file, or why it cannot be used. */
function readEntry(
  entry: PolicyEntry,
  file: LoadedFile,
  manifestReal: string,
  options: Context,
): { text: string; shown: string } | string {
  if (path.isAbsolute(entry.file)) {
    return 'must be a path relative to this manifest, inside the manifests root';
  }
  const target = targetOf(file.path, entry.file);
  const shown = path.join(path.dirname(file.parsed.file), entry.file);
  if (!isInside(options.root, target)) {
    return `is outside the manifests root (${options.root}); a policy file must lie inside it`;
  }
  let info;
  try {
    info = fs.statSync(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? `does not exist (looked for ${shown})`
      : `cannot be read (${code ?? String(error)})`;
  }
  const real = realpath(target) ?? target;
  if (!isInside(options.realRoot, real)) {
    return `leads outside the manifests root (through a symbolic link, to ${real}); a policy file must lie inside it`;
  }
  if (info.isDirectory()) return `is a folder (${shown}), not a file`;
  if (!info.isFile()) return `is ${kindOf(info)}, not a regular file (${shown})`;
  if (real === manifestReal) return 'is this manifest itself; name the file holding the policy';
  const named = options.manifestAt.get(real);
  if (named !== undefined && named.notManifest !== true) {
    const org =
      named.documents.find((doc) => doc.org !== undefined)?.org ??
      named.problems.find((problem) => problem.org !== undefined)?.org;
    const problem = named.problems[0]?.message;
    const never = "a manifest is never a policy: name the file holding the policy's YAML";
    if (org !== undefined) return `is org ${JSON.stringify(org)}'s manifest; ${never}`;
    // A file that declares nothing and has no problem (an empty one) is no manifest to keep.
    if (problem !== undefined) {
      return (
        `is read as a manifest, since it is not YAML that declares nothing (${problem}); ` +
        `${never}, or keep this file out of manifest discovery with .envsyncignore`
      );
    }
  }
  const outcome = readManifestFile(real, options.maxFileBytes);
  if (!outcome.ok) return outcome.message;
  if (outcome.text.trim() === '') return "is empty; it must hold the policy's YAML";
  return { text: outcome.text, shown };
}
