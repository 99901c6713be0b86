/**
 * The files a manifest's `policies:` entries name (docs/manifests.md): read as text, never as
 * manifests. Discovery parses them too, as other YAML; they are taken out once every file is
 * parsed. One that reads as a manifest stays one, and the entry naming it is an error.
 */
import path from 'node:path';
import * as fs from 'node:fs';
import type { DeclaredPolicyDocument } from '../core/policy-documents.ts';
import { codeOf, kindOf } from '../runtime/read-file.ts';
import type { ParsedFile } from './orgs.ts';
import { isInside, readManifestFile, realOr } from './discover.ts';
import type { ManifestProblem, PolicyEntry } from './parse.ts';

/** One parsed manifest file and its path as walked (absolute). */
export type LoadedFile = ParsedFile & { readonly path: string };

/** Where a file named in a manifest is, through the manifest's folder as walked. */
const targetOf = (manifest: string, file: string) => path.resolve(path.dirname(manifest), file);

interface Context {
  /** The manifests root (absolute), and its real path: a policy file must lie inside it. */
  readonly root: string;
  readonly realRoot: string;
  readonly maxFileBytes: number;
  /** The files discovery read that a policy entry names, by real path. */
  readonly manifestAt: ReadonlyMap<string, ParsedFile>;
}

/** Reads the policy files named into `policyDocuments`, and takes them out of `files`. */
export function resolvePolicyFiles(
  files: readonly LoadedFile[],
  options: { readonly root: string; readonly maxFileBytes: number },
): LoadedFile[] {
  const named = new Set<string>();
  for (const file of files) {
    for (const doc of file.documents)
      for (const entry of doc.policies ?? []) named.add(realOr(targetOf(file.path, entry.file)));
  }
  if (named.size === 0) return [...files];
  // The manifest files that are named, by real path: a cheap look at the name first.
  const baseNames = new Set([...named].map((file) => path.basename(file)));
  const manifestAt = new Map<string, ParsedFile>();
  for (const file of files) {
    if (!baseNames.has(path.basename(file.path))) continue;
    const real = realOr(file.path);
    if (named.has(real)) manifestAt.set(real, file);
  }
  const context = { ...options, realRoot: realOr(options.root), manifestAt };
  const policyFiles = new Set([...manifestAt.values()].filter((file) => file.notManifest));
  return files
    .filter((file) => !policyFiles.has(file))
    .map((file) => withPolicyDocuments(file, context));
}

function withPolicyDocuments(file: LoadedFile, context: Context): LoadedFile {
  if (!file.documents.some((doc) => doc.policies !== undefined)) return file;
  const real = realOr(file.path);
  const problems: ManifestProblem[] = [...file.problems];
  const documents = file.documents.map((doc) => {
    if (doc.policies === undefined) return doc;
    const policyDocuments: DeclaredPolicyDocument[] = [];
    for (const entry of doc.policies) {
      const read = readEntry(entry, file, real, context);
      if (typeof read === 'string') {
        problems.push({
          file: file.file,
          ...entry.fileAt,
          path: `policies[${entry.index}].file`,
          message: `policy file ${JSON.stringify(entry.file)}: ${read}`,
          org: doc.org,
        });
        continue;
      }
      const { line, column, index } = entry;
      policyDocuments.push({
        name: entry.name,
        ...(entry.description === undefined ? {} : { description: entry.description }),
        content: read.text,
        file: read.shown,
        source: { file: file.file, line, column, path: `policies[${index}]` },
      });
    }
    return { ...doc, policyDocuments };
  });
  return { ...file, documents, problems };
}

/** The text of one entry's file, or why it cannot be used. */
function readEntry(
  entry: PolicyEntry,
  file: LoadedFile,
  manifestReal: string,
  context: Context,
): { text: string; shown: string } | string {
  if (path.isAbsolute(entry.file)) {
    return 'must be a path relative to this manifest, inside the manifests root';
  }
  const target = targetOf(file.path, entry.file);
  const shown = path.join(path.dirname(file.file), entry.file);
  if (!isInside(context.root, target)) {
    return `is outside the manifests root (${context.root}); a policy file must lie inside it`;
  }
  let info;
  try {
    info = fs.statSync(target);
  } catch (error) {
    const code = codeOf(error);
    return code === 'ENOENT' ? `does not exist (looked for ${shown})` : `cannot be read (${code})`;
  }
  const real = realOr(target);
  if (!isInside(context.realRoot, real)) {
    return `leads outside the manifests root (through a symbolic link, to ${real}); a policy file must lie inside it`;
  }
  if (info.isDirectory()) return `is a folder (${shown}), not a file`;
  if (!info.isFile()) return `is ${kindOf(info)}, not a regular file (${shown})`;
  if (real === manifestReal) return 'is this manifest itself; name the file holding the policy';
  const named = context.manifestAt.get(real);
  if (named !== undefined && named.notManifest !== true) {
    const org =
      named.documents.find((doc) => doc.org !== undefined)?.org ??
      named.problems.find((problem) => problem.org !== undefined)?.org;
    const never = "a manifest is never a policy: name the file holding the policy's YAML";
    if (org !== undefined) return `is org ${JSON.stringify(org)}'s manifest; ${never}`;
    // A file that declares nothing and has no problem (an empty one) is no manifest to keep.
    const problem = named.problems[0]?.message;
    if (problem !== undefined) {
      return (
        `is read as a manifest, since it is not YAML that declares nothing (${problem}); ` +
        `${never}, or keep this file out of manifest discovery with .envsyncignore`
      );
    }
  }
  const outcome = readManifestFile(real, context.maxFileBytes);
  if (!outcome.ok) return outcome.message;
  if (outcome.text.trim() === '') return "is empty; it must hold the policy's YAML";
  return { text: outcome.text, shown };
}
