/**
 * How a plan shows the requests a change sends through operations of their own (requests.ts):
 * one line per policy attached or detached and per tag set, changed or removed, in place of the
 * field's `from -> to` line. Every output format renders these lines its own way and escapes
 * them its own way; this module only decides what they say. Pure.
 */
import { FIELDS, type StringMap } from './fields.ts';
import type { FieldDiff } from './model.ts';
import type { ChangeReport } from './report.ts';

/** One line: what is added (`+`), changed (`~`) or taken away (`-`). */
export interface RequestLine {
  readonly sign: '+' | '~' | '-';
  readonly what: 'policy' | 'tag';
  /** The policy's name; the tag's key, or for a tag set `key=value`. */
  readonly subject: string;
  /** For a changed tag: its old and new values. */
  readonly from?: string;
  readonly to?: string;
}

/** A name, key or value as a plan shows it: bare, or as a JSON string when it could mislead. */
function token(text: string, separators: RegExp): string {
  return text !== '' && !/[\s"'\\\p{C}\p{Z}]/u.test(text) && !separators.test(text)
    ? text
    : JSON.stringify(text);
}
const key = (text: string) => token(text, /[=:]/);
const value = (text: string) => token(text, /(?!)/);

/**
 * The lines of a change's requests beside the PUT, and the fields they stand for (whose
 * `from -> to` line they replace).
 */
export function requestLines(change: Pick<ChangeReport, 'fields' | 'policies' | 'tags'>): {
  readonly lines: readonly RequestLine[];
  readonly covered: ReadonlySet<string>;
} {
  const lines: RequestLine[] = [];
  const covered = new Set<string>();
  if (change.policies !== undefined) {
    covered.add(FIELDS.policies.name);
    for (const name of change.policies.attach)
      lines.push({ sign: '+', what: 'policy', subject: value(name) });
    for (const name of change.policies.detach)
      lines.push({ sign: '-', what: 'policy', subject: value(name) });
  }
  if (change.tags !== undefined) {
    covered.add(FIELDS.tags.name);
    const diff: FieldDiff | undefined = change.fields.tags;
    const before = (diff?.notShown === true ? null : (diff?.from ?? null)) as StringMap | null;
    for (const [k, v] of Object.entries(change.tags.set)) {
      lines.push(
        before !== null && Object.hasOwn(before, k)
          ? {
              sign: '~',
              what: 'tag',
              subject: key(k),
              from: value(before[k] as string),
              to: value(v),
            }
          : { sign: '+', what: 'tag', subject: `${key(k)}=${value(v)}` },
      );
    }
    for (const k of change.tags.remove) lines.push({ sign: '-', what: 'tag', subject: key(k) });
  }
  return { lines, covered };
}

/** A line as plain text (before any escaping of the output format). */
export function requestLineText(line: RequestLine, arrow = '->'): string {
  const head = `${line.sign} ${line.what} ${line.subject}`;
  return line.from === undefined ? head : `${head}: ${line.from} ${arrow} ${line.to ?? ''}`;
}
