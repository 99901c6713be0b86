/** What parsing one manifest file gives: valid documents, and located problems. */
import type { DesiredEnvironment } from '../core/model.ts';

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

/** One valid document: an org and its environments. */
export interface ManifestDocument {
  readonly org: string;
  readonly environments: readonly DesiredEnvironment[];
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

export interface ParsedManifest {
  readonly documents: readonly ManifestDocument[];
  readonly problems: readonly ManifestProblem[];
  /** The names invalid documents declare (for the check of names declared twice). */
  readonly declared?: readonly DeclaredName[] | undefined;
}
