import type { Document } from 'yaml';
import { yaml } from './located-yaml.ts';

/**
 * What the schema cannot say well about a file, found in its YAML before its value is read: tags
 * a manifest may not write, keys that are not strings, merge keys, values that do not fit their
 * tag, and byte order marks past the first character.
 */

/**
 * The tags a manifest may write: the YAML 1.2 core schema's. Any other (`!custom`,
 * `!!js/function`, `!!binary`, `!!timestamp`, `!!set`, a bare `!`) is an error where it stands:
 * `yaml` would read its value as a plain string, and silently dropping a tag hides a mistake.
 */
const CORE_TAGS = new Set(
  ['str', 'seq', 'map', 'bool', 'int', 'float', 'null'].map((name) => `tag:yaml.org,2002:${name}`),
);

/** A tag as it is usually written: `!!str` for the core ones. */
function showTag(tag: string): string {
  return tag.startsWith('tag:yaml.org,2002:') ? `!!${tag.slice(18)}` : tag;
}

/** A number or boolean as YAML wrote it, anything else as JSON. */
function showScalar(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
    ? String(value)
    : (JSON.stringify(value) ?? typeof value);
}

/** A problem in one document, found before its value is read. */
export interface Finding {
  readonly offset: number;
  /** The source range it covers: the schema's complaints about what lies there say less. */
  readonly covers: readonly [number, number];
  readonly message: string;
}

/** The offset of the end of the line `offset` is on. */
function lineEnd(text: string, offset: number): number {
  const end = text.indexOf('\n', offset);
  return end < 0 ? text.length : end;
}

/**
 * What the schema cannot say well about one document: tags it does not allow, keys that are not
 * strings, merge keys, and values that do not fit their tag (`yaml`'s warnings).
 */
export function structuralProblems(doc: Document, text: string): Finding[] {
  const found: Finding[] = [];
  const start = (node: unknown): number =>
    (node as { range?: [number, number, number] } | null)?.range?.[0] ?? 0;
  const range = (node: unknown): [number, number] => {
    const [from = 0, to = from] =
      (node as { range?: [number, number, number] } | null)?.range ?? [];
    return [from, to];
  };
  yaml().visit(doc, {
    Node(_key, node) {
      const tag = (node as { tag?: string }).tag;
      if (tag !== undefined && !CORE_TAGS.has(tag)) {
        const offset = start(node);
        let bang = text.lastIndexOf('!', offset);
        while (bang > 0 && text[bang - 1] === '!') bang--;
        const at = bang >= 0 && !text.slice(bang, offset).includes('\n') ? bang : offset;
        found.push({
          offset: at,
          covers: [at, range(node)[1]],
          message:
            `unknown YAML tag "${showTag(tag)}": a manifest holds plain values (strings, true or ` +
            'false, lists and mappings); remove the tag (quote the value to keep it as text)',
        });
      }
    },
    Pair(_key, pair) {
      const key = pair.key;
      if (yaml().isScalar(key) && key.value === '<<' && key.type === 'PLAIN') {
        found.push({
          offset: start(key),
          covers: range(key),
          message:
            'merge keys (<<) are not supported: write the fields out in each environment (an ' +
            'anchor and alias can share a whole value, such as a list of policies)',
        });
      } else if (key !== null && !yaml().isScalar(key)) {
        found.push({
          offset: start(key),
          covers: range(key),
          message: `a key must be a string, not ${yaml().isSeq(key) ? 'a list' : yaml().isMap(key) ? 'a mapping' : 'an alias'}`,
        });
      } else if (yaml().isScalar(key) && key.value !== null && typeof key.value !== 'string') {
        found.push({
          offset: start(key),
          covers: range(key),
          message: `a key must be a string, not ${typeof key.value} ${showScalar(key.value)} (quote it)`,
        });
      }
    },
  });
  for (const warning of doc.warnings) {
    // A tag reported above is also one `yaml` could not resolve: say it once.
    if (found.some((f) => Math.abs(f.offset - warning.pos[0]) <= 2)) continue;
    const what = warning.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? '';
    const tag = /^Unresolved tag: (\S+)/.exec(what)?.[1];
    found.push({
      offset: warning.pos[0],
      // The warning points at the tag; the value it tags follows on the same line.
      covers: [warning.pos[0], lineEnd(text, warning.pos[1])],
      message:
        tag === undefined
          ? `YAML: ${what}`
          : `the value does not fit its tag ${showTag(tag)}: remove the tag or fix the value (!!bool takes true or false only)`,
    });
  }
  return found;
}

/**
 * The offsets of byte order marks past the first character. YAML allows one at the start of each
 * document, but `yaml` reads one there as part of the next key (`"\ufefforg"`), and js-yaml as
 * nothing; one is almost always left by joining files, so it is an error that says so.
 */
export function strayByteOrderMarks(text: string): number[] {
  const offsets: number[] = [];
  if (typeof text !== 'string') return offsets; // no text: the parser has said so
  for (let at = text.indexOf('\ufeff', 1); at >= 0; at = text.indexOf('\ufeff', at + 1)) {
    offsets.push(at);
  }
  return offsets;
}

export const STRAY_BOM =
  'a byte order mark (U+FEFF) inside the file: only the first character of a file may be one ' +
  '(it is usually left by joining files); remove it';
