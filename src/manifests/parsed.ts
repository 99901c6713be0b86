/** What parsing one manifest file gives: valid documents, and located problems. */
import { escapeText } from '../core/escape.ts';
import { noManifestReason } from '../core/validation.ts';
import type { DesiredEnvironment } from '../core/model.ts';
import type { DeclaredPolicyDocument } from '../core/policy-documents.ts';

/** A problem in a manifest, located to file, line and column (1-based) and YAML path. */
export interface ManifestProblem {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The YAML path, e.g. `environments[0].type`; empty for the document as a whole. */
  readonly path: string;
  readonly message: string;
  /** The organization the problem holds back, when the document names one. */
  readonly org: string | undefined;
}

/**
 * One policy document a valid document declares, as written: its file is not read yet (load.ts
 * reads it). Documents that declare any are read by the located path, so the places are known.
 */
export interface PolicyEntry {
  readonly name: string;
  readonly description?: string | undefined;
  /** The path as written, relative to the manifest. */
  readonly file: string;
  /** The entry's index in `policies`, and where it and its `file` value are. */
  readonly index: number;
  readonly line: number;
  readonly column: number;
  readonly fileLine: number;
  readonly fileColumn: number;
}

/** One valid document: an org, its environments and the policy documents it declares. */
export interface ManifestDocument {
  readonly org: string;
  readonly environments: readonly DesiredEnvironment[];
  readonly policies?: readonly PolicyEntry[] | undefined;
  /** The policy documents of `policies` whose files were read (policy-files.ts fills it in). */
  readonly policyDocuments?: readonly DeclaredPolicyDocument[] | undefined;
  /** The document's `prune:`, when it declares one. */
  readonly prune?: PruneEntry | undefined;
  /** The document's `suspend:`, when it declares one (read and placed as `prune:` is). */
  readonly suspend?: PruneEntry | undefined;
}

/**
 * A document's `prune:` and where its key is written. Documents that declare one are read by the
 * located path, so the place is always known: a message that refuses it points at the key.
 */
export interface PruneEntry {
  readonly value: boolean;
  readonly line: number;
  readonly column: number;
}

/** An environment name declared by a document that is not valid, and where. */
export interface DeclaredName {
  readonly org: string;
  readonly name: string;
  /** Which of the file's non-empty documents, and which entry of its environments. */
  readonly document: number;
  readonly index: number;
  readonly line: number;
  readonly column: number;
}

/**
 * How a file with no manifest in it is read: by default, a file whose every document has neither
 * `org` nor `environments` (a Kubernetes object, a CI file) is some other YAML, skipped;
 * `strict` reads it as a manifest, with the schema's problems (`--strict`).
 */
export interface ParseOptions {
  readonly strict?: boolean | undefined;
}

/** Why a file is skipped (see ParseOptions): the log line and validate's report say it. */
export const NOT_A_MANIFEST = 'not a manifest: no org and no environments';

/** A YAML file that is not a manifest, skipped, and why. */
export interface SkippedFile {
  readonly file: string;
  readonly reason: string;
}

/** The log line of a file skipped: the file, and why. */
export function skippedLine({ file, reason }: SkippedFile): string {
  return `${file}: ${reason}; skipped`;
}

/**
 * The warning for a manifests root that holds no manifest at all (an empty folder, a wrong
 * --manifests, only backups or other YAML): nothing is declared, so nothing would be planned or
 * sent, and a run that does nothing should not look like a clean one. Undefined when a manifest
 * was found, or when files were named (`validate PATH...`: they say what they are themselves).
 */
export function emptyRootLine(
  root: string,
  manifests: {
    readonly fileCount: number;
    readonly skipped: readonly SkippedFile[];
    readonly unattributed: readonly unknown[];
  },
  paths?: readonly string[],
): string | undefined {
  if (paths !== undefined || manifests.fileCount > 0 || manifests.unattributed.length > 0) {
    return undefined;
  }
  return `no manifest found in ${escapeText(root)}: ${noManifestReason(manifests.skipped.length)}; nothing is declared, so nothing is planned or sent`;
}

export interface ParsedManifest {
  readonly documents: readonly ManifestDocument[];
  readonly problems: readonly ManifestProblem[];
  /** The names invalid documents declare (for the check of names declared twice). */
  readonly declared?: readonly DeclaredName[] | undefined;
  /**
   * The policy files invalid documents name (`policies[].file`, as written): they are not read
   * as manifests either, so a mistake in one manifest does not make its policy file a second one.
   */
  readonly policyFiles?: readonly string[] | undefined;
  /** Some other YAML, skipped (see ParseOptions): no document, no problem. */
  readonly notManifest?: true | undefined;
}
