/** What the schema cannot say well about a document, found in `yaml`'s tree before its value. */
import { isMap, isScalar, isSeq, visit, type Document } from 'yaml';

/** A problem in one document; `covers`: the schema's complaints about what lies there say less. */
export interface Finding {
  readonly offset: number;
  readonly covers: readonly [number, number];
  readonly message: string;
}

const CORE = 'tag:yaml.org,2002:';

/** The core schema's tags: `yaml` reads any other's value as a plain string, hiding a mistake. */
const CORE_TAGS = new Set(
  ['str', 'seq', 'map', 'bool', 'int', 'float', 'null'].map((n) => CORE + n),
);

/** A tag as it is usually written: `!!str` for the core ones. */
const showTag = (tag: string) => (tag.startsWith(CORE) ? `!!${tag.slice(CORE.length)}` : tag);

/** What the schema cannot say well about one document (see above). */
export function structuralProblems(doc: Document, text: string): Finding[] {
  const found: Finding[] = [];
  const range = (node: unknown): [number, number] => {
    const [from = 0, to = from] =
      (node as { range?: [number, number, number] } | null)?.range ?? [];
    return [from, to];
  };
  const add = (node: unknown, message: string) =>
    found.push({ offset: range(node)[0], covers: range(node), message });
  visit(doc, {
    Node(_key, node) {
      const tag = (node as { tag?: string }).tag;
      if (tag === undefined || CORE_TAGS.has(tag)) return;
      // The node starts after its tag: the problem is shown at the tag's `!` or `!!`.
      const offset = range(node)[0];
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
    },
    Pair(_key, { key }) {
      if (isScalar(key) && key.value === '<<' && key.type === 'PLAIN') {
        add(
          key,
          'merge keys (<<) are not supported: write the fields out in each environment (an ' +
            'anchor and alias can share a whole value, such as a list of policies)',
        );
      } else if (key !== null && !isScalar(key)) {
        const what = isSeq(key) ? 'a list' : isMap(key) ? 'a mapping' : 'an alias';
        add(key, `a key must be a string, not ${what}`);
      } else if (isScalar(key) && key.value !== null && typeof key.value !== 'string') {
        add(
          key,
          `a key must be a string, not ${typeof key.value} ${key.value as number | boolean} (quote it)`,
        );
      }
    },
  });
  for (const warning of doc.warnings) {
    // A tag reported above is also one `yaml` could not resolve: say it once.
    if (found.some((f) => Math.abs(f.offset - warning.pos[0]) <= 2)) continue;
    const what = warning.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? '';
    const tag = /^Unresolved tag: (\S+)/.exec(what)?.[1];
    // The warning points at the tag; the value it tags follows on the same line.
    const lineEnd = text.indexOf('\n', warning.pos[1]);
    found.push({
      offset: warning.pos[0],
      covers: [warning.pos[0], lineEnd < 0 ? text.length : lineEnd],
      message:
        tag === undefined
          ? `YAML: ${what}`
          : `the value does not fit its tag ${showTag(tag)}: remove the tag or fix the value (!!bool takes true or false only)`,
    });
  }
  return found;
}

/** Byte order marks past the first character: `yaml` reads one as part of the next key. */
export function strayByteOrderMarks(text: string): number[] {
  const offsets: number[] = [];
  for (let at = text.indexOf('\ufeff', 1); at >= 0; at = text.indexOf('\ufeff', at + 1)) {
    offsets.push(at);
  }
  return offsets;
}

export const STRAY_BOM =
  'a byte order mark (U+FEFF) inside the file: only the first character of a file may be one ' +
  '(it is usually left by joining files); remove it';
