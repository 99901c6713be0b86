import { type Document, isMap, LineCounter, parseAllDocuments } from 'yaml';
import { escapeText } from '../core/escape.ts';
import { environmentOf, type FieldValue, normalizeValue } from '../core/fields.ts';
import type { DesiredEnvironment } from '../core/model.ts';
import { isName } from '../core/names.ts';
import type { DeclaredPolicyDocument } from '../core/policy-documents.ts';
import { noManifestReason } from '../core/validation.ts';
import {
  formatPath,
  issueMessage,
  MANIFEST_KEYS,
  misplacedKey,
  unknownKeyMessage,
  yamlSyntaxMessage,
} from './messages.ts';
import { type Manifest, manifestSchema } from './schema.ts';
import { STRAY_BOM, strayByteOrderMarks, structuralProblems } from './structural-problems.ts';
import {
  hasStringKey,
  isEmptyDocument,
  isOtherYaml,
  normalizeLineBreaks,
  offsetOf,
  parseOptions,
  type PathSegment,
} from './yaml-document.ts';

/**
 * Parsing one manifest file: the `yaml` package, which keeps every node's place in the text, and
 * the zod schema (schema.ts), which alone decides what is valid. Every problem comes back with its
 * file, line, column and YAML path.
 */

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
  /** Some other YAML, skipped (see ParseOptions): no document, no problem. */
  readonly notManifest?: true | undefined;
}

/** Aliases may expand to at most this many nodes; more is an alias bomb, not a manifest. */
const MAX_ALIAS_COUNT = 100;

/** Syntax errors reported per document before the rest are summed up. */
const MAX_SYNTAX_ERRORS = 5;

/** Reads `org` from a document even when other parts of it are broken, to know what to hold. */
function readOrg(doc: Document): string | undefined {
  if (!isMap(doc.contents)) return undefined;
  const org = doc.get('org');
  return isName(org) ? org : undefined;
}

/** An environment as the schema outputs it, as envsync's model: its values normalized. */
function desiredOf(
  env: Manifest['environments'][number],
  source: DesiredEnvironment['source'],
): DesiredEnvironment {
  return {
    ...environmentOf(env.name, env, (raw, spec) => {
      const value = raw[spec.manifestKey] as FieldValue | undefined;
      return value === undefined ? undefined : normalizeValue(spec, value);
    }),
    ...(env.renamed_from === undefined ? {} : { renamedFrom: env.renamed_from }),
    source,
  } as DesiredEnvironment;
}

/**
 * Parses and validates the text of one manifest file (several YAML documents allowed). Never
 * throws: every problem comes back located. A file of other YAML comes back marked
 * `notManifest`, unless `options.strict` (see ParseOptions).
 */
export function parseManifest(
  text: string,
  file: string,
  options: ParseOptions = {},
): ParsedManifest {
  const lineCounter = new LineCounter();
  const problems: ManifestProblem[] = [];
  const documents: ManifestDocument[] = [];
  const declared: DeclaredName[] = [];
  const at = (offset: number, path: string, message: string, org: string | undefined) => {
    const { line, col } = lineCounter.linePos(offset);
    problems.push({ file, line, column: col, path, message, org });
  };

  const source = normalizeLineBreaks(text);
  let docs: Document[];
  try {
    docs = parseAllDocuments(source, parseOptions(lineCounter)) as Document[];
  } catch (error) {
    // The parser is recursive; absurd nesting can exhaust the stack.
    const message = error instanceof Error ? error.message : String(error);
    const what = /call stack/i.test(message)
      ? 'YAML nested too deeply to be a manifest'
      : `cannot be parsed as YAML: ${message}`;
    at(0, '', what, undefined);
    return { documents, problems };
  }

  const boms = strayByteOrderMarks(source);
  if (options.strict !== true && isOtherYaml(docs, boms)) {
    return { documents, problems, notManifest: true };
  }
  const inDocument = new Set<number>();
  let document = -1;
  for (const doc of docs) {
    if (!isEmptyDocument(doc)) document++;
    const org = readOrg(doc);
    // A stray byte order mark first: the syntax errors or unknown keys it causes say less.
    const [from, , to] = doc.range ?? [0, 0, source.length];
    const stray = boms.filter((offset) => offset >= from && offset < to);
    if (stray.length > 0) {
      for (const offset of stray) {
        inDocument.add(offset);
        at(offset, '', STRAY_BOM, org);
      }
      continue;
    }
    if (doc.errors.length > 0) {
      const tooDeep = doc.errors.find((error) => /call stack/i.test(error.message));
      if (tooDeep !== undefined) {
        at(tooDeep.pos[0], '', 'YAML nested too deeply to be a manifest', org);
        continue;
      }
      // One broken bracket can cascade: the first few errors say enough.
      for (const error of doc.errors.slice(0, MAX_SYNTAX_ERRORS)) {
        at(error.pos[0], '', yamlSyntaxMessage(error.code, error.message), org);
      }
      const more = doc.errors.length - MAX_SYNTAX_ERRORS;
      if (more > 0)
        at(
          doc.errors[MAX_SYNTAX_ERRORS]?.pos[0] ?? 0,
          '',
          `... and ${more} more YAML syntax errors`,
          org,
        );
      continue;
    }
    if (isEmptyDocument(doc)) continue;
    // Structural problems do not stop the schema's check: every problem is reported in one run,
    // except the schema's own complaints about a place a structural problem already covers.
    const findings = structuralProblems(doc, source);
    for (const finding of findings) at(finding.offset, '', finding.message, org);
    const covered = (offset: number) =>
      findings.some(({ covers: [start, end] }) => offset >= start && offset <= end);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      const offset = (doc.contents as { range?: [number, number, number] }).range?.[0] ?? 0;
      if (error instanceof RangeError && /call stack/i.test(error.message)) {
        at(offset, '', 'YAML nested too deeply to be a manifest', org);
        continue;
      }
      at(
        offset,
        '',
        `cannot be read: ${error instanceof Error ? error.message : String(error)}`,
        org,
      );
      continue;
    }
    const result = manifestSchema.safeParse(value);
    if (!result.success || findings.length > 0) {
      for (const issue of result.error?.issues ?? []) {
        const path = issue.path as PathSegment[];
        if (issue.code === 'unrecognized_keys') {
          const known =
            path.length === 0
              ? MANIFEST_KEYS.root
              : path[0] === 'policies'
                ? MANIFEST_KEYS.policy
                : MANIFEST_KEYS.environment;
          for (const key of issue.keys) {
            const offset = offsetOf(doc, path, key);
            // A key that is not a string was named above; toJS made it a string no one wrote.
            if (covered(offset) || !hasStringKey(doc, path, key)) continue;
            const belongs =
              path.length === 0 || path[0] === 'environments'
                ? misplacedKey(key, path.length === 0)
                : undefined;
            at(offset, formatPath([...path, key]), unknownKeyMessage(key, known, belongs), org);
          }
          continue;
        }
        // A key that breaks a rule is shown where the key is written, not its value.
        const offset =
          issue.code === 'custom' && issue.params?.['at'] === 'key'
            ? offsetOf(doc, path.slice(0, -1), String(path.at(-1)))
            : offsetOf(doc, path);
        if (covered(offset)) continue;
        at(offset, formatPath(path), issueMessage(issue, value), org);
      }
      if (org !== undefined)
        declared.push(...declaredNames(doc, value, org, document, lineCounter));
      continue;
    }
    const manifest = result.data as Manifest;
    const position = (path: readonly (string | number)[]) =>
      lineCounter.linePos(offsetOf(doc, path));
    documents.push({
      org: manifest.org,
      ...(manifest.prune === undefined
        ? {}
        : { prune: { value: manifest.prune, ...declaredAt(doc, 'prune', lineCounter) } }),
      ...(manifest.suspend === undefined
        ? {}
        : { suspend: { value: manifest.suspend, ...declaredAt(doc, 'suspend', lineCounter) } }),
      ...(manifest.policies === undefined
        ? {}
        : {
            policies: manifest.policies.map((entry, index): PolicyEntry => {
              const where = position(['policies', index]);
              const fileAt = position(['policies', index, 'file']);
              return {
                name: entry.name,
                ...(entry.description === undefined ? {} : { description: entry.description }),
                file: entry.file,
                index,
                line: where.line,
                column: where.col,
                fileLine: fileAt.line,
                fileColumn: fileAt.col,
              };
            }),
          }),
      environments: manifest.environments.map((env, index) => {
        const { line, col } = lineCounter.linePos(offsetOf(doc, ['environments', index]));
        return desiredOf(env, { file, document, index, line, column: col });
      }),
    });
  }
  for (const offset of boms) if (!inDocument.has(offset)) at(offset, '', STRAY_BOM, undefined);
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return {
    documents,
    problems,
    ...(declared.length === 0 ? {} : { declared }),
  };
}

/** Where the root key `key` of a document is written. */
function declaredAt(
  doc: Document,
  key: string,
  lineCounter: LineCounter,
): { line: number; column: number } {
  const { line, col } = lineCounter.linePos(offsetOf(doc, [], key));
  return { line, column: col };
}

/**
 * The environment names an invalid document declares, and where: a name declared twice is then
 * reported with the document's other problems, not only once they are fixed.
 */
function declaredNames(
  doc: Document,
  value: unknown,
  org: string,
  document: number,
  lineCounter: LineCounter,
): DeclaredName[] {
  const environments = (value as { environments?: unknown } | null)?.environments;
  if (!Array.isArray(environments)) return [];
  return environments.flatMap((env: unknown, index): DeclaredName[] => {
    const name = (env as { name?: unknown } | null)?.name;
    if (!isName(name)) return [];
    const { line, col } = lineCounter.linePos(offsetOf(doc, ['environments', index]));
    return [{ org, name, document, index, line, column: col }];
  });
}

export { formatProblem } from '../core/validation.ts';
