/**
 * A seeded generator of manifest-like YAML texts for the differential test of the two parsers
 * (test/manifests/differential.test.ts). Most texts are manifests the fast path could accept,
 * written in unusual ways: CR, CRLF and mixed line breaks, tabs, block scalars with indicators,
 * comments, flow collections, the unicode characters some YAML readers take for line breaks
 * (U+0085, U+2028, U+2029), byte order marks, tags, anchors and aliases, merge keys, quotes and
 * escapes. A share of them is then mutated character by character around those same features.
 * The same seed gives the same texts, so a failure names the seed that reproduces it.
 */
import { mulberry32 as random } from '../../src/emulator/faults.ts';

type Rand = () => number;

const pick = <T>(rand: Rand, items: readonly T[]): T =>
  items[Math.floor(rand() * items.length)] as T;
const chance = (rand: Rand, p: number): boolean => rand() < p;
const int = (rand: Rand, max: number): number => Math.floor(rand() * (max + 1));

/** Characters a mutation inserts: the ones YAML readers are known to disagree on. */
const ODD_CHARS = [
  '\r',
  '\r\n',
  '\n',
  '\t',
  ' ',
  '\u0085',
  '\u2028',
  '\u2029',
  '\ufeff',
  '\u00a0',
  '\u000b',
  '\u000c',
  '\u0000',
  '\u001b',
  '\ud800',
  '#',
  ':',
  '-',
  '?',
  ',',
  '[',
  ']',
  '{',
  '}',
  '"',
  "'",
  '\\',
  '|',
  '>',
  '!',
  '&',
  '*',
  '%',
  '@',
  '`',
  '<<',
  '---',
  '...',
  '!!str ',
  '!custom ',
  '&a ',
  '*a',
] as const;

const NAMES = ['production', 'staging', 'a', 'b~1', 'web.2', 'db_x', 'x-y', '0a', 'True', 'null'];
const TYPES = ['K8S', 'S3', 'logical', 'ECS', 'docker', 'k8s', 'True'];
const WORDS = [
  'Prod',
  'a b',
  '',
  'x: y',
  'x #y',
  '- a',
  'tab\there',
  'cr\rhere',
  'crlf\r\nhere',
  'nl\nhere',
  'nel\u0085here',
  'ls\u2028here',
  'ps\u2029here',
  'bom\ufeffhere',
  'nbsp\u00a0here',
  'é ü 日本',
  '😀',
  '"quoted"',
  "'single'",
  'back\\slash',
  'true',
  'True',
  'TRUE',
  'yes',
  'null',
  '~',
  '123',
  '0x1F',
  '1e3',
  '.inf',
  ' lead',
  'trail ',
  '  ',
  '#',
  '!x',
  '&a',
  '*a',
  '%x',
  '@x',
  '`x',
  '[a]',
  '{a}',
  ', x',
  '? x',
  '...',
  '---',
];
const BOOLEANS = ['true', 'false', 'True', 'TRUE', 'False', 'yes', 'on', '!!bool true', '"true"'];
const TAGS = [
  '!!str ',
  '!custom ',
  '!!js/function ',
  '!!binary ',
  '! ',
  '!<tag:yaml.org,2002:str> ',
];

interface Style {
  readonly rand: Rand;
  readonly nl: () => string;
  readonly indent: string;
}

/** A line break of the text's style; `mixed` picks one per break. */
function lineBreaks(rand: Rand): () => string {
  const kind = pick(rand, ['lf', 'lf', 'lf', 'crlf', 'cr', 'mixed', 'unicode'] as const);
  switch (kind) {
    case 'lf':
      return () => '\n';
    case 'crlf':
      return () => '\r\n';
    case 'cr':
      return () => '\r';
    case 'mixed':
      return () => pick(rand, ['\n', '\r\n', '\r']);
    default:
      return () => (chance(rand, 0.9) ? '\n' : pick(rand, ['\u0085', '\u2028', '\u2029']));
  }
}

/** Escapes a string for a double-quoted YAML scalar, now and then with unusual escapes. */
function doubleQuoted(rand: Rand, text: string): string {
  let out = '';
  for (const char of text) {
    if (char === '"') out += '\\"';
    else if (char === '\\') out += '\\\\';
    else if (char === '\n') out += chance(rand, 0.5) ? '\\n' : '\\u000a';
    else if (char === '\r') out += pick(rand, ['\\r', '\\x0d', '\\u000D']);
    else if (char === '\t') out += pick(rand, ['\\t', '\t', '\\x09']);
    else if (char === '\u0085') out += pick(rand, ['\\N', char]);
    else if (char === '\u2028') out += pick(rand, ['\\L', char]);
    else if (char === '\u2029') out += pick(rand, ['\\P', char]);
    else if (char === '\u00a0') out += pick(rand, ['\\_', char]);
    else if (char === '\ufeff') out += pick(rand, ['\\ufeff', char]);
    else
      out += chance(rand, 0.03) ? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}` : char;
  }
  return `"${out}"`;
}

const SAFE_PLAIN = /^[A-Za-z0-9é日😀][^:#\r\n\u0085\u2028\u2029\ufeff]*(?<![\s])$/u;

/** A scalar in one of YAML's styles (some of which will not say what `text` says). */
function scalar(s: Style, text: string, column: number, block = false): string {
  const { rand } = s;
  const style = chance(rand, 0.97)
    ? pick(rand, [
        'plain',
        'plain',
        'plain',
        'single',
        'double',
        'double',
        ...(block || chance(rand, 0.05) ? (['literal', 'folded'] as const) : []),
      ] as const)
    : pick(rand, ['tagged', 'anchored'] as const);
  switch (style) {
    case 'plain':
      // Mostly text that reads as itself when plain; now and then anything.
      return SAFE_PLAIN.test(text) || chance(rand, 0.1) ? text : doubleQuoted(rand, text);
    case 'single':
      return `'${text.replaceAll("'", "''")}'`;
    case 'double':
      return doubleQuoted(rand, text);
    case 'tagged':
      return `${pick(rand, TAGS)}${pick(rand, [text, doubleQuoted(rand, text)])}`;
    case 'anchored':
      return `&${pick(rand, ['a', 'b', 'x1'])} ${text}`;
    default: {
      const indicator = pick(rand, ['', '-', '+', '2', '1-', '+2', '-1', '9']);
      const head = `${style === 'literal' ? '|' : '>'}${indicator}${chance(rand, 0.2) ? ' # c' : ''}`;
      const pad = ' '.repeat(column + pick(rand, [1, 2, 2, 3]) + (chance(rand, 0.95) ? 4 : 0));
      const lines = text.split(/\r\n|\r|\n/);
      const body = lines
        .map((line, i) =>
          line === '' && chance(rand, 0.5)
            ? ''
            : `${pad}${line}${i === 0 && chance(rand, 0.1) ? ' ' : ''}`,
        )
        .join(s.nl());
      const tail = chance(rand, 0.3) ? `${s.nl()}${chance(rand, 0.5) ? pad : ''}` : '';
      return `${head}${s.nl()}${body}${tail}`;
    }
  }
}

/** A comment, or nothing. */
function comment(s: Style): string {
  return chance(s.rand, 0.15) ? pick(s.rand, [' # note', ' #', '\t# tab', ' # é\u2028x']) : '';
}

function flowList(s: Style, items: readonly string[]): string {
  const sep = pick(s.rand, [', ', ',', ' , ', `,${s.nl()}    `]);
  const inner = items.map((item) => (chance(s.rand, 0.3) ? doubleQuoted(s.rand, item) : item));
  return `[${inner.join(sep)}${chance(s.rand, 0.1) ? ',' : ''}]`;
}

/** One environment as the lines of a block mapping entry, or as a flow mapping. */
function environment(s: Style, index: number): string {
  const { rand, indent } = s;
  const fields: [string, string][] = [];
  const name = chance(rand, 0.9) ? `${pick(rand, NAMES)}${index}` : pick(rand, NAMES);
  fields.push(['name', name]);
  fields.push(['type', pick(rand, TYPES.slice(0, chance(rand, 0.95) ? 5 : TYPES.length))]);
  fields.push(['description', pick(rand, WORDS)]);
  if (chance(rand, 0.3))
    fields.push(['include_scaling', pick(rand, BOOLEANS.slice(0, chance(rand, 0.8) ? 2 : 9))]);
  if (chance(rand, 0.3)) fields.push(['policies', '']);
  if (chance(rand, 0.15))
    fields.push(['require_provenance', pick(rand, BOOLEANS.slice(0, chance(rand, 0.8) ? 2 : 9))]);
  // Now and then the environment's own name, which the schema refuses.
  if (chance(rand, 0.2))
    fields.push(['renamed_from', chance(rand, 0.9) ? `${pick(rand, NAMES)}.old${index}` : name]);
  if (chance(rand, 0.03))
    fields.push([pick(rand, ['extra', 'Name', '\ufeffname', '<<', '? x']), 'y']);
  if (chance(rand, 0.6)) fields.sort(() => rand() - 0.5);

  const policies = () => {
    const list = Array.from({ length: int(rand, 3) }, () =>
      pick(rand, ['pci', 'sox', 'baseline', 'a b', 'é', 'p#1', "o'k"]),
    );
    return chance(rand, 0.5) || list.length === 0
      ? flowList(s, list)
      : list
          .map((item) => `${s.nl()}${indent}${indent}- ${scalar(s, item, 4)}${comment(s)}`)
          .join('');
  };
  if (chance(rand, 0.25)) {
    const parts = fields.map(([key, value]) =>
      key === 'policies'
        ? `${key}: ${flowList(s, ['pci', 'sox'].slice(0, int(rand, 2)))}`
        : `${key}: ${value === '' || /[,[\]{}#:\r\n\u0085\u2028\u2029]|^[\s'"!&*%@`|>?-]|\s$/u.test(value) ? doubleQuoted(rand, value) : value}`,
    );
    return `- {${parts.join(pick(rand, [', ', ',', `,${s.nl()}${indent}  `]))}}`;
  }
  // Each key of the entry at the column of the first (a tab there is now and then a mistake).
  const dash = chance(rand, 0.97) ? pick(rand, ['- ', '- ', '-   ']) : '-\t';
  const under = ' '.repeat(dash.length === 2 ? 2 : dash.length);
  const lines = fields.map(([key, value], i) => {
    const lead = i === 0 ? dash : under;
    const text =
      key === 'policies' ? policies() : scalar(s, value, under.length, key === 'description');
    return `${lead}${key}:${text.startsWith('\r') || text.startsWith('\n') ? '' : ' '}${text}${comment(s)}`;
  });
  return lines.join(`${s.nl()}${chance(rand, 0.05) ? `${indent}# between${s.nl()}` : ''}`);
}

/**
 * A document of some other YAML (a Kubernetes object, a CI file, a list, a line of text), or a
 * near miss: envsync's other keys without org and environments, or one of the two alone.
 */
function otherDocument(s: Style): string {
  const { rand, indent } = s;
  const name = scalar(s, pick(rand, NAMES), indent.length);
  const lines = pick(rand, [
    [`apiVersion: v1${comment(s)}`, 'kind: ConfigMap', 'metadata:', `${indent}name: ${name}`],
    ['name: ci', 'on: [push]', 'jobs:', `${indent}build:`, `${indent}${indent}runs-on: x`],
    ['- one', `- ${name}`],
    ['just text'],
    ['prune: true', 'policies: []'],
    ['environments: []'],
    [`org: ${name}`],
    [`- org: ${name}`, '- environments: []'],
  ]);
  return lines.join(s.nl());
}

/** One manifest document. */
function document(s: Style): string {
  const { rand } = s;
  // A file of only other YAML is skipped: both parsers must agree on which files those are.
  if (chance(rand, 0.05)) return otherDocument(s);
  const count = int(rand, 3);
  const envs = Array.from({ length: count }, (_, i) => environment(s, i));
  const listIndent = chance(rand, 0.5) ? '' : s.indent;
  const org = scalar(s, pick(rand, ['acme', 'org1', 'a~b', 'True']), 0);
  const head = `org: ${org}${comment(s)}`;
  if (chance(rand, 0.05)) {
    // Anchors, aliases and merge keys: the located path's territory.
    const base = `base: &base {type: K8S, description: d}`;
    return `${base}${s.nl()}${head}${s.nl()}environments:${s.nl()}- <<: *base${s.nl()}  name: m${s.nl()}${envs.map((e) => `${listIndent}${e.split(/(?<=\r\n|\r|\n)/).join(listIndent)}`).join(s.nl())}`;
  }
  const list =
    count === 0
      ? ` ${pick(rand, ['[]', '[ ]', '!!seq []', '&e []'])}`
      : `${s.nl()}${envs.map((e) => `${listIndent}${e.replace(/(\r\n|\r(?!\n)|\n|\u0085|\u2028|\u2029)/g, `$1${listIndent}`)}`).join(s.nl())}`;
  const parts = [head, `environments:${list}`];
  // A document that declares prune is the located path's: the two must still agree.
  if (chance(rand, 0.05)) parts.push(`prune: ${pick(rand, BOOLEANS)}${comment(s)}`);
  if (chance(rand, 0.3)) parts.reverse();
  return parts.join(s.nl());
}

/** A whole file: one or more documents, with markers, directives and byte order marks. */
function file(rand: Rand): string {
  const s: Style = {
    rand,
    nl: lineBreaks(rand),
    indent: chance(rand, 0.97) ? pick(rand, ['  ', '  ', '    ', ' ']) : '\t',
  };
  const docs = Array.from({ length: 1 + (chance(rand, 0.3) ? int(rand, 2) : 0) }, () =>
    document(s),
  );
  let text = '';
  for (const [i, doc] of docs.entries()) {
    const bom = chance(rand, 0.05) ? '\ufeff' : '';
    const directive = chance(rand, 0.03) ? `%YAML 1.2${s.nl()}` : '';
    const marker =
      i > 0 || directive !== '' || chance(rand, 0.2)
        ? `---${pick(rand, ['', ' ', ' # c'])}${s.nl()}`
        : '';
    text += `${bom}${directive}${marker}${doc}${s.nl()}`;
    if (chance(rand, 0.1)) text += `...${s.nl()}`;
  }
  if (chance(rand, 0.2)) text = text.replace(/\r?\n$|\r$/, '');
  return text;
}

/** Inserts, deletes or replaces a few characters around the features parsers disagree on. */
function mutate(rand: Rand, text: string): string {
  let out = text;
  for (let n = 1 + int(rand, 2); n > 0; n--) {
    const at = int(rand, out.length);
    const op = pick(rand, ['insert', 'insert', 'delete', 'replace'] as const);
    const chars = pick(rand, ODD_CHARS);
    if (op === 'insert') out = out.slice(0, at) + chars + out.slice(at);
    else if (op === 'delete') out = out.slice(0, at) + out.slice(at + 1 + int(rand, 2));
    else out = out.slice(0, at) + chars + out.slice(at + 1);
  }
  return out;
}

/** The `index`th generated text of `seed`. */
export function manifestText(seed: number, index: number): string {
  const rand = random(seed * 1_000_003 + index);
  const text = file(rand);
  return chance(rand, 0.25) ? mutate(rand, text) : text;
}
