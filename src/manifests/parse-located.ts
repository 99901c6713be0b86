import { LineCounter, isMap, parseAllDocuments, type Document } from 'yaml';
import { environmentOf } from '../core/compiled.generated.ts';
import type { FieldSpec, FieldValue } from '../core/fields.ts';
import { normalizeValue } from '../core/value-kinds.ts';
import type { DesiredEnvironment } from '../core/model.ts';
import { isName } from '../core/names.ts';
import { MANIFEST_KEYS, manifestValue } from './accept.ts';
import { normalizeLineBreaks } from './line-breaks.ts';
import { isOtherYaml } from './other-yaml.ts';
import {
  formatPath,
  issueMessage,
  misplacedKey,
  unknownKeyMessage,
  yamlSyntaxMessage,
} from './messages.ts';
import type {
  DeclaredName,
  ManifestDocument,
  ManifestProblem,
  ParsedManifest,
  ParseOptions,
  PolicyEntry,
} from './parsed.ts';
import { manifestSchema, type Manifest } from './schema.ts';
import { STRAY_BOM, strayByteOrderMarks, structuralProblems } from './structural-problems.ts';
import {
  hasStringKey,
  isEmptyDocument,
  offsetOf,
  parseOptions,
  type PathSegment,
} from './yaml-document.ts';

/**
 * The slow, position-tracking path: the `yaml` package and the zod schema, the authority on what
 * is valid and where it is not. parse.ts imports this module only for a file the fast path does
 * not accept: a run over valid manifests never loads either (zod alone takes ~45 ms and ~12 MB).
 */

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

/** A schema output's environment as envsync's model, its sets normalized. */
function readSchemaValue(raw: Record<string, unknown>, spec: FieldSpec): FieldValue | undefined {
  const value = manifestValue(raw, spec);
  return value === undefined ? undefined : normalizeValue(spec, value);
}

/** Parses and validates one file with positions; never throws. */
export function parseManifestLocated(
  text: string,
  file: string,
  options: ParseOptions = {},
): ParsedManifest {
  const lineCounter = new LineCounter();
  const problems: ManifestProblem[] = [];
  const documents: ManifestDocument[] = [];
  const declared: DeclaredName[] = [];
  const policyFiles: string[] = [];
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
      policyFiles.push(...namedPolicyFiles(value));
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
      environments: manifest.environments.map((env, index): DesiredEnvironment => {
        const { line, col } = lineCounter.linePos(offsetOf(doc, ['environments', index]));
        return {
          ...(environmentOf(env.name, env, readSchemaValue) as DesiredEnvironment),
          ...(env.renamed_from === undefined ? {} : { renamedFrom: env.renamed_from }),
          source: { file, document, index, line, column: col },
        };
      }),
    });
  }
  for (const offset of boms) if (!inDocument.has(offset)) at(offset, '', STRAY_BOM, undefined);
  problems.sort((a, b) => a.line - b.line || a.column - b.column);
  return {
    documents,
    problems,
    ...(declared.length === 0 ? {} : { declared }),
    ...(policyFiles.length === 0 ? {} : { policyFiles }),
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

/** The `policies[].file` paths an invalid document names, as far as they can be read. */
function namedPolicyFiles(value: unknown): string[] {
  const policies = (value as { policies?: unknown } | null)?.policies;
  if (!Array.isArray(policies)) return [];
  return policies.flatMap((entry: unknown) => {
    const file = (entry as { file?: unknown } | null)?.file;
    return typeof file === 'string' && file !== '' ? [file] : [];
  });
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
