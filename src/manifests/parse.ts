/** Parsing one manifest file: js-yaml or `yaml` reads (fast-read.ts), the zod schema alone decides. */
import { type Document, isMap, LineCounter, parseAllDocuments } from 'yaml';
import { escapeText } from '../core/escape.ts';
import { environmentOf, type FieldValue, normalizeValue } from '../core/fields.ts';
import type { DesiredEnvironment, SourceLocation } from '../core/model.ts';
import { isName } from '../core/names.ts';
import type { DeclaredPolicyDocument } from '../core/policy-documents.ts';
import { noManifestReason } from '../core/validation.ts';
import { errorMessage } from '../runtime/errors.ts';
import {
  formatPath,
  issueMessage,
  MANIFEST_KEYS,
  misplacedKey,
  unknownKeyMessage,
  yamlSyntaxMessage,
} from './messages.ts';
import { readFast } from './fast-read.ts';
import { type Manifest, manifestSchema } from './schema.ts';
import { STRAY_BOM, strayByteOrderMarks, structuralProblems } from './structural-problems.ts';
import {
  hasStringKey,
  isEmptyDocument,
  isOtherYaml,
  normalizeLineBreaks,
  offsetOf,
  type PathSegment,
} from './yaml-document.ts';
import { parseOptions } from '../runtime/yaml-options.ts';

type LineColumn = { readonly line: number; readonly column: number }; // 1-based

/** A problem in a manifest: where (`path`: `environments[0].type`), what, and the org it holds. */
export interface ManifestProblem extends LineColumn {
  readonly file: string;
  readonly path: string;
  readonly message: string;
  readonly org: string | undefined;
}

/** A policy document a valid document declares, where it is, and where its `file` value is. */
export interface PolicyEntry extends LineColumn {
  readonly name: string;
  readonly description?: string | undefined;
  readonly file: string;
  readonly index: number;
  readonly fileAt: LineColumn;
}

/** One valid document. `policyDocuments`: its `policies` with their files read. */
export interface ManifestDocument {
  readonly org: string;
  readonly environments: readonly DesiredEnvironment[];
  readonly policies?: readonly PolicyEntry[] | undefined;
  readonly policyDocuments?: readonly DeclaredPolicyDocument[] | undefined;
  readonly prune?: PruneEntry | undefined;
  readonly suspend?: PruneEntry | undefined;
}

/** A document's `prune:` or `suspend:`, and where its key is written (a refusal points at it). */
export type PruneEntry = LineColumn & { readonly value: boolean };

/** An environment name an invalid document declares (`document`: of the file's non-empty ones). */
export interface DeclaredName extends LineColumn {
  readonly org: string;
  readonly name: string;
  readonly document: number;
  readonly index: number;
}

/** Why a file of other YAML is skipped: the log line and validate's report say it. */
export const NOT_A_MANIFEST = 'not a manifest: no org and no environments';

export type SkippedFile = { readonly file: string; readonly reason: string };

export function skippedLine({ file, reason }: SkippedFile): string {
  return `${file}: ${reason}; skipped`;
}

/** The warning for a root with no manifest at all (not for files named: `validate PATH...`). */
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
  /** The names invalid documents declare, for the check of names declared twice. */
  readonly declared?: readonly DeclaredName[] | undefined;
  /** Some other YAML, skipped: no document, no problem. */
  readonly notManifest?: true | undefined;
}

/** Aliases may expand to at most this many nodes; more is an alias bomb, not a manifest. */
const MAX_ALIAS_COUNT = 100;

/** Syntax errors reported per document: one broken bracket can cascade. */
const MAX_SYNTAX_ERRORS = 5;

/** The parser is recursive: absurd nesting exhausts the stack. */
const TOO_DEEP = 'YAML nested too deeply to be a manifest';
const isTooDeep = (message: string) => /call stack/i.test(message);

/**
 * Parses and validates one manifest file (several documents allowed); never throws. `strict`
 * reads other YAML (neither `org` nor `environments`) as a manifest instead of skipping it.
 */
export function parseManifest(
  text: string,
  file: string,
  options: { readonly strict?: boolean | undefined } = {},
): ParsedManifest {
  const lineCounter = new LineCounter();
  const problems: ManifestProblem[] = [];
  const documents: ManifestDocument[] = [];
  const declared: DeclaredName[] = [];
  const place = (offset: number): LineColumn => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const at = (offset: number, path: string, message: string, org: string | undefined) =>
    problems.push({ file, ...place(offset), path, message, org });

  const source = normalizeLineBreaks(text);
  const fast = fastManifest(readFast(source) ?? [], file);
  if (fast !== undefined) return fast;
  let docs: Document[];
  try {
    docs = parseAllDocuments(source, parseOptions(lineCounter)) as Document[];
  } catch (error) {
    const message = errorMessage(error);
    at(0, '', isTooDeep(message) ? TOO_DEEP : `cannot be parsed as YAML: ${message}`, undefined);
    return { documents, problems };
  }
  const boms = strayByteOrderMarks(source);
  if (options.strict !== true && isOtherYaml(docs, boms))
    return { documents, problems, notManifest: true };
  const inDocument = new Set<number>();
  let document = -1;
  for (const doc of docs) {
    if (!isEmptyDocument(doc)) document++;
    const named = isMap(doc.contents) ? doc.get('org') : undefined;
    const org = isName(named) ? named : undefined;
    // A stray byte order mark first: the syntax errors or unknown keys it causes say less.
    const [from, , to] = doc.range ?? [0, 0, source.length];
    const stray = boms.filter((offset) => offset >= from && offset < to);
    for (const offset of stray) {
      inDocument.add(offset);
      at(offset, '', STRAY_BOM, org);
    }
    if (stray.length > 0) continue;
    if (doc.errors.length > 0) {
      const tooDeep = doc.errors.find((error) => isTooDeep(error.message));
      if (tooDeep !== undefined) {
        at(tooDeep.pos[0], '', TOO_DEEP, org);
        continue;
      }
      for (const error of doc.errors.slice(0, MAX_SYNTAX_ERRORS)) {
        at(error.pos[0], '', yamlSyntaxMessage(error.code, error.message), org);
      }
      const more = doc.errors.length - MAX_SYNTAX_ERRORS;
      const next = doc.errors[MAX_SYNTAX_ERRORS]?.pos[0] ?? 0;
      if (more > 0) at(next, '', `... and ${more} more YAML syntax errors`, org);
      continue;
    }
    if (isEmptyDocument(doc)) continue;
    // Every problem is reported in one run, but the schema's complaints about a place a
    // structural problem covers say less.
    const findings = structuralProblems(doc, source);
    for (const finding of findings) at(finding.offset, '', finding.message, org);
    const covered = (offset: number) =>
      findings.some(({ covers: [start, end] }) => offset >= start && offset <= end);
    const envAt = (index: number) => place(offsetOf(doc, ['environments', index]));
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      const offset = (doc.contents as { range?: [number, number, number] }).range?.[0] ?? 0;
      const deep = error instanceof RangeError && isTooDeep(error.message);
      at(offset, '', deep ? TOO_DEEP : `cannot be read: ${errorMessage(error)}`, org);
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
        if (!covered(offset)) at(offset, formatPath(path), issueMessage(issue, value), org);
      }
      // Its names are checked for repeats with its other problems, not only once they are fixed.
      const envs = (value as { environments?: unknown } | null)?.environments;
      for (const [index, env] of (Array.isArray(envs) ? envs : []).entries()) {
        const name = (env as { name?: unknown } | null)?.name;
        if (org === undefined || !isName(name)) continue;
        declared.push({ org, name, document, index, ...envAt(index) });
      }
      continue;
    }
    const manifest = result.data as Manifest;
    const flag = (key: 'prune' | 'suspend') => {
      const flagged = manifest[key];
      return flagged === undefined
        ? undefined
        : { value: flagged, ...place(offsetOf(doc, [], key)) };
    };
    documents.push({
      org: manifest.org,
      prune: flag('prune'),
      suspend: flag('suspend'),
      policies: manifest.policies?.map((entry, index) => ({
        ...entry,
        index,
        ...place(offsetOf(doc, ['policies', index])),
        fileAt: place(offsetOf(doc, ['policies', index, 'file'])),
      })),
      environments: environmentsOf(manifest, (index) => ({
        file,
        document,
        index,
        ...envAt(index),
      })),
    });
  }
  for (const offset of boms) if (!inDocument.has(offset)) at(offset, '', STRAY_BOM, undefined);
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return { documents, problems, ...(declared.length === 0 ? {} : { declared }) };
}

/** Each environment as envsync's model: its values normalized, its place in the file. */
function environmentsOf(manifest: Manifest, source: (index: number) => SourceLocation) {
  return manifest.environments.map((env, index): DesiredEnvironment => ({
    ...(environmentOf(env.name, env, (raw, spec) => {
      const given = raw[spec.manifestKey] as FieldValue | undefined;
      return given === undefined ? undefined : normalizeValue(spec, given);
    }) as DesiredEnvironment),
    ...(env.renamed_from === undefined ? {} : { renamedFrom: env.renamed_from }),
    source: source(index),
  }));
}

/** The fast reader's documents if each is a valid manifest whose places can wait; else undefined. */
function fastManifest(values: readonly unknown[], file: string): ParsedManifest | undefined {
  const documents: ManifestDocument[] = [];
  for (const value of values) {
    if (value === null || value === undefined) continue;
    // Their places are kept with them: `yaml` reads a manifest that declares one.
    if (['prune', 'suspend', 'policies'].some((key) => Object.hasOwn(value, key))) return undefined;
    const result = manifestSchema.safeParse(value);
    if (!result.success) return undefined;
    const manifest = result.data as Manifest;
    const document = documents.length;
    const environments = environmentsOf(manifest, (index) => ({ file, document, index }));
    documents.push({ org: manifest.org, environments });
  }
  return documents.length === 0 ? undefined : { documents, problems: [] };
}
