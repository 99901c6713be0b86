/** The keys the service retired cut out of each environment's text; every other byte stays. */
import { isMap, isPair, isScalar, isSeq, LineCounter, parseAllDocuments, type Pair } from 'yaml';
import { parseOptions } from '../runtime/yaml-options.ts';
import { normalizeLineBreaks } from './yaml-document.ts';

/** One key removed, where it was written. */
export type RemovedKey = { readonly key: string; readonly line: number; readonly column: number };

type Span = readonly [start: number, end: number];

/**
 * The text a pair of a mapping spans, to cut out: its whole lines in a block mapping (a comment
 * after the value on its line goes with it), or the pair and one comma beside it in a flow one.
 * A first pair written after a list item's `- ` keeps the dash: the next line's key moves up to it.
 */
function spanOf(text: string, pair: Pair, flow: boolean): Span | undefined {
  const key = pair.key as { range?: [number, number, number] } | null;
  const value = pair.value as { range?: [number, number, number] } | null;
  const start = key?.range?.[0];
  const end = value?.range?.[1] ?? key?.range?.[1];
  if (start === undefined || end === undefined) return undefined;
  if (flow) {
    const after = /^\s*,\s*/.exec(text.slice(end));
    if (after !== null) return [start, end + after[0].length];
    const before = /,\s*$/.exec(text.slice(0, start));
    return before === null ? [start, end] : [start - before[0].length, end];
  }
  const from = text.lastIndexOf('\n', start - 1) + 1;
  const lineEnd = text.indexOf('\n', end);
  const to = lineEnd < 0 ? text.length : lineEnd + 1;
  if (text.slice(from, start).trim() === '') return [from, to];
  // `- key: value` then the item's other keys: cut from the key to the next line's indentation.
  const indent = /^[ \t]*/.exec(text.slice(to))?.[0].length ?? 0;
  return [start, Math.min(text.length, to + indent)];
}

/** `text` without `retired` keys in its environments, and where each was; throws if unparsable. */
export function withoutRetiredKeys(
  text: string,
  retired: readonly string[],
): { readonly text: string; readonly removed: readonly RemovedKey[] } {
  const lineCounter = new LineCounter();
  const source = normalizeLineBreaks(text);
  const docs = parseAllDocuments(source, parseOptions(lineCounter));
  if (docs.some((doc) => doc.errors.length > 0))
    throw new Error('cannot be parsed as YAML: fix it first (envsync validate says where)');
  const spans: Span[] = [];
  const removed: RemovedKey[] = [];
  for (const doc of docs) {
    const environments = isMap(doc.contents) ? doc.contents.get('environments', true) : undefined;
    for (const env of isSeq(environments) ? environments.items : []) {
      if (!isMap(env)) continue;
      for (const pair of env.items) {
        if (!isPair(pair) || !isScalar(pair.key) || !retired.includes(String(pair.key.value)))
          continue;
        const span = spanOf(source, pair, env.flow === true);
        if (span === undefined) continue;
        spans.push(span);
        const { line, col } = lineCounter.linePos(pair.key.range?.[0] ?? 0);
        removed.push({ key: String(pair.key.value), line, column: col });
      }
    }
  }
  let out = text;
  for (const [start, end] of spans.sort((a, b) => b[0] - a[0])) {
    out = out.slice(0, start) + out.slice(end);
  }
  // The cut must leave what the file said, less those keys: read both, and compare.
  const expected = docs.map((doc) => {
    const environments = doc.get('environments', true) as { items?: unknown[] } | undefined;
    for (const [i] of (environments?.items ?? []).entries())
      for (const key of retired) doc.deleteIn(['environments', i, key]);
    return JSON.stringify(doc.toJS());
  });
  const got = parseAllDocuments(normalizeLineBreaks(out), parseOptions(new LineCounter()));
  const same =
    Array.isArray(got) &&
    got.length === expected.length &&
    got.every((doc, i) => doc.errors.length === 0 && JSON.stringify(doc.toJS()) === expected[i]);
  if (!same) {
    throw new Error(
      'the keys cannot be cut out of this file without changing the rest; remove them by hand',
    );
  }
  return { text: out, removed };
}
