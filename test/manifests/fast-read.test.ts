/** The fast reader reads every text it accepts as `yaml` does, on texts made to trip one of them. */
import { expect, it } from 'vitest';
import { LineCounter, parseAllDocuments } from 'yaml';
import { readFast } from '../../src/manifests/fast-read.ts';
import { parseOptions } from '../../src/runtime/yaml-options.ts';

// One per line would be a hundred lines: the scalars, ` ¦ ` between them.
const SCALARS = [
  `web ¦ Web tier ¦ a: b ¦ a:b ¦ x #y ¦ x#y ¦ it's ¦ "q" ¦ 'q' ¦ "a # b" ¦ 'it''s' ¦ 1 ¦ -1 ¦ +1`,
  '007 ¦ 1_000 ¦ 0x1F ¦ 0X1F ¦ 0o17 ¦ 0b101 ¦ 1e3 ¦ 1E+3 ¦ .5 ¦ 5. ¦ +.5 ¦ .inf ¦ -.Inf ¦ .NaN ¦ inf',
  '~ ¦ null ¦ Null ¦ NULL ¦  ¦ true ¦ True ¦ FALSE ¦ yes ¦ off ¦ 12:30 ¦ 2024-01-01 ¦ é ¦ 日本 ¦ 🚀 x',
  '[a, b] ¦ [] ¦ {a: b} ¦ {} ¦ [a, [b]] ¦ - a ¦ ? ¦ a,b ¦ @x ¦ `x` ¦ "multi\n  line" ¦ a  b',
  `plain\n      continued ¦ 'single\n\n      gap' ¦ "dq\n\n      gap" ¦ x\n    # comment`,
].flatMap((row) => row.split(' ¦ '));
const KEYS = ['org', 'environments', 'name', 'type', 'description', 'tags', 'team', '1', 'true'];

function* texts(count: number): Generator<string> {
  let seed = 12345; // mulberry32: every bit of it varies, and the same seed gives the same texts
  const next = (n: number) => {
    let t = Math.imul((seed = (seed + 0x6d2b79f5) | 0) ^ (seed >>> 15), 1 | seed);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const pick = <T>(items: readonly T[]) => items[next(items.length)] as T;
  for (let i = 0; i < count; i++) {
    const lines = [`org: ${pick(SCALARS)}`, 'environments:'];
    for (let e = next(3); e >= 0; e--) {
      lines.push(`  - ${pick(KEYS)}: ${pick(SCALARS)}`);
      for (let k = next(4); k > 0; k--) lines.push(`    ${pick(KEYS)}: ${pick(SCALARS)}`);
      if (next(3) === 0) lines.push(`    tags: {${pick(KEYS)}: ${pick(SCALARS)}}`);
      if (next(4) === 0) lines.push(pick(['', '# note', '  # indented', '    ', '---', 'x: y']));
    }
    yield lines.join('\n') + pick(['\n', '', '\n\n', ' \n']);
  }
}

it('reads as `yaml` reads, on every generated text it does not leave to `yaml`', () => {
  let read = 0;
  const fixed = ['t:\n  ? a\n  : c', 't: {a}', 't: {? a}', 'x: [a,]', 'x: {a: b,}', 'a: b # c'];
  for (const text of [...fixed, ...texts(8000)]) {
    const fast = readFast(text);
    if (fast === undefined) continue;
    read++;
    const docs = parseAllDocuments(text, parseOptions(new LineCounter()));
    const problems = docs.flatMap((doc) => [...doc.errors, ...doc.warnings].map((e) => e.message));
    expect({ text, problems }).toEqual({ text, problems: [] });
    expect({ text, values: fast }).toEqual({ text, values: docs.map((doc) => doc.toJS()) });
  }
  // Enough of them read fast for the comparison to say something.
  expect(read).toBeGreaterThan(500);
});

it('leaves to `yaml` what only it reports or may read otherwise', () => {
  const left = ['a: !!str 1', 'a: &x 1\nb: *x', 'a: |\n  b', 'a:\tb', '%YAML 1.2\n---\na: b'];
  left.push('a: "\\x41"', '\ufeffa: b', 'a: b\na: c', '{1: a}', 'tags: {true: x}', '__proto__: {}');
  for (const text of [...left, 'a: [b]c']) expect(readFast(text), text).toBeUndefined();
});
