/** The words of manifest problems, with a did-you-mean when a value or a key is close. */
import type * as z from 'zod';
import { NAME_RULE } from '../core/names.ts';
import { suggest } from '../core/suggest.ts';
import { FIELD_LIST } from '../core/fields.ts';
import type { PathSegment } from './yaml-document.ts';

/** The keys a document may hold at its root, in an environment and in a policy entry. */
export const MANIFEST_KEYS = {
  root: ['org', 'prune', 'suspend', 'policies', 'environments'],
  environment: ['name', 'renamed_from', ...FIELD_LIST.map((spec) => spec.manifestKey)],
  policy: ['name', 'description', 'file'],
} as const;

/** Renders a YAML path as `environments[0].type`. */
export function formatPath(path: readonly PathSegment[]): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment))
      text += text === '' ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}

/** A value as a message names it: `null`, `a list`, `the string "x"`, `number 1`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  const text = JSON.stringify(value) ?? typeof value;
  const shown = text.length > 60 ? `${text.slice(0, 57)}...` : text;
  return typeof value === 'string' ? `the string ${shown}` : `${typeof value} ${shown}`;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  number: 'a number',
};

/** The value at `path`, or `found: false` where the path leads nowhere. */
function valueAt(root: unknown, path: readonly PathSegment[]): { found: boolean; value: unknown } {
  let current: unknown = root;
  for (const segment of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) {
      return { found: false, value: undefined };
    }
    current = (current as Record<PathSegment, unknown>)[segment];
  }
  return { found: true, value: current };
}

/** The message of one schema issue about `value` (the document as parsed). */
export function issueMessage(issue: z.core.$ZodIssue, value: unknown): string {
  const here = valueAt(value, issue.path as PathSegment[]);
  const missing = ['invalid_type', 'invalid_value', 'invalid_format'].includes(issue.code);
  if (missing && !here.found) return 'is required but missing';
  const got = describeValue(here.value);
  const bare = got.replace(/^the string /, '');
  switch (issue.code) {
    case 'invalid_type':
      if (issue.expected === 'boolean' && typeof here.value === 'string')
        return `expected true or false, got ${got} (booleans are lowercase true or false; True, yes, on are strings)`;
      if (issue.path.length === 0)
        return `expected a mapping with "org" and "environments", got ${got}`;
      return `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${got}`;
    case 'invalid_value': {
      const allowed = issue.values.map(String);
      const hint = typeof here.value === 'string' ? suggest(here.value, allowed) : undefined;
      const meant = hint === undefined ? '' : ` (did you mean "${hint}"?)`;
      return `${bare} is not one of ${allowed.join(', ')}${meant}`;
    }
    case 'invalid_format':
      return `${bare} is not a valid name: ${NAME_RULE}`;
    default:
      return issue.message;
  }
}

/** Where a key unknown where it stands belongs, when it is the other level's: not a typo. */
export function misplacedKey(key: string, atRoot: boolean): string | undefined {
  const elsewhere: readonly string[] = atRoot ? MANIFEST_KEYS.environment : MANIFEST_KEYS.root;
  if (!elsewhere.includes(key)) return undefined;
  return atRoot
    ? 'it is a key of an environment, under environments'
    : 'it is a key of the document itself, next to org';
}

/** The message for a key the schema does not know: where it `belongs`, else a did-you-mean. */
export function unknownKeyMessage(key: string, known: readonly string[], belongs?: string): string {
  if (belongs !== undefined) return `unknown key "${key}" here: ${belongs}`;
  const hint = suggest(key, known);
  const more = hint === undefined ? `allowed: ${known.join(', ')}` : `did you mean "${hint}"?`;
  return `unknown key "${key}" (${more})`;
}

/**
 * A YAML syntax error as a problem says it: the parser's first line, with a hint for the errors a
 * key or list item at the wrong indentation causes (the parser names the symptom, not the cause).
 */
export function yamlSyntaxMessage(code: string, message: string): string {
  const text = `YAML syntax: ${message.split('\n')[0] ?? ''}`;
  const indentation =
    code === 'BAD_INDENT' || code === 'BLOCK_AS_IMPLICIT_KEY'
      ? !/flow/i.test(message)
      : code === 'MISSING_CHAR' && /without - indicator/.test(message);
  return indentation
    ? `${text} (check the indentation: each key lines up with the keys beside it, an environment's keys with the first one after its "- ")`
    : text;
}
