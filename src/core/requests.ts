import { API_DIALECTS, type ApiDialect, dialectWords, type ResolvedDialect } from './dialect.ts';
import {
  FIELD_LIST,
  FIELDS,
  type FieldSpec,
  mapChanges,
  sendRoute,
  type StringMap,
} from './fields.ts';
import type {
  ChangeAction,
  ChangeRequests,
  DesiredEnvironment,
  FieldDiff,
  FieldDiffs,
  PolicyRequests,
  TagRequests,
} from './model.ts';
import { compareNames } from './names.ts';
import type { ChangeReport } from './report.ts';

/**
 * What a change sends, by API dialect: the environment PUT, and the operations of their own that
 * some fields are sent through in the `kosli` dialect (fields.ts, `sentBy`): attaching and
 * detaching policies, setting and removing tags. Pure: the planner decides them once, a saved
 * plan carries them, and the applier sends exactly them.
 */

/** The fields sent by an operation of their own in some dialect. */
export const ENDPOINT_FIELDS: readonly FieldSpec[] = FIELD_LIST.filter(
  (spec) => spec.sentBy !== undefined && Object.values(spec.sentBy).some((r) => r !== 'put'),
);

function setDifference(a: readonly string[], b: readonly string[]): string[] {
  const other = new Set(b);
  return [...new Set(a)].filter((item) => !other.has(item)).sort(compareNames);
}

/**
 * The requests of a change with these field differences (for a create: every field it sends,
 * from null). A field that differs goes by its route in `dialect`: the PUT, or its operation,
 * which sends only the difference (from null: everything declared, nothing to take away).
 */
export function changeRequests(
  action: ChangeAction,
  fields: FieldDiffs,
  dialect: ApiDialect,
  extra: RequestExtras = {},
): ChangeRequests {
  let put = action === 'create';
  let policies: PolicyRequests | undefined;
  let tags: TagRequests | undefined;
  for (const spec of FIELD_LIST) {
    const diff = fields[spec.name];
    if (diff === undefined) continue;
    const route = sendRoute(spec, dialect);
    if (route === 'policies-endpoint') {
      const to = diff.to as readonly string[];
      const from = (diff.from ?? []) as readonly string[];
      const attach = setDifference(to, from);
      const detach = setDifference(from, to);
      if (attach.length > 0 || detach.length > 0) policies = { attach, detach };
    } else if (route === 'tags-endpoint') {
      const { set, remove } = mapChanges((diff.from ?? {}) as StringMap, diff.to as StringMap);
      if (remove.length > 0 || Object.keys(set).length > 0) tags = { set, remove };
    } else if (route === 'put') put = true;
    // A field the dialect cannot send is refused before planning (unsendableFields).
  }
  if (extra.ownerTag !== undefined) tags = withOwnerTag(tags, extra.ownerTag);
  return {
    ...(extra.renameFrom === undefined ? {} : { rename: extra.renameFrom }),
    put,
    ...(policies === undefined ? {} : { policies }),
    ...(tags === undefined ? {} : { tags }),
  };
}

/** What a change sends beside what its fields call for. */
export interface RequestExtras {
  /** Rename the environment from this name first (a `rename` change). */
  readonly renameFrom?: string | undefined;
  /** Set this ownership tag (`prune`, ownership.ts) in the tags' PATCH: the listing lacks it. */
  readonly ownerTag?: { readonly key: string; readonly value: string } | undefined;
}

/** The tags' requests with the ownership tag set, and never removed. */
function withOwnerTag(
  tags: TagRequests | undefined,
  owner: { readonly key: string; readonly value: string },
): TagRequests {
  const entries = Object.entries(tags?.set ?? {}).filter(([key]) => key !== owner.key);
  entries.push([owner.key, owner.value]);
  entries.sort(([a], [b]) => compareNames(a, b));
  return {
    set: Object.fromEntries(entries),
    remove: (tags?.remove ?? []).filter((key) => key !== owner.key),
  };
}

/** Whether two sets of requests are the same (a saved plan's, against its fields'). */
export function sameRequests(a: ChangeRequests, b: ChangeRequests): boolean {
  const text = (r: ChangeRequests) =>
    JSON.stringify([
      r.rename,
      r.put,
      r.policies?.attach,
      r.policies?.detach,
      r.tags?.set,
      r.tags?.remove,
    ]);
  return text(a) === text(b);
}

/** A field a manifest declares that the dialect cannot send. */
export interface UnsendableField {
  readonly env: DesiredEnvironment;
  readonly spec: FieldSpec;
}

/** The declared fields of `desired` that `dialect` has no way to send (tags in `contract`). */
export function unsendableFields(
  desired: readonly DesiredEnvironment[],
  dialect: ApiDialect,
): UnsendableField[] {
  const refused = FIELD_LIST.filter((spec) => sendRoute(spec, dialect) === undefined);
  if (refused.length === 0) return [];
  const found: UnsendableField[] = [];
  for (const env of desired) {
    for (const spec of refused) if (env[spec.name] !== undefined) found.push({ env, spec });
  }
  return found;
}

/** The message for a field the dialect cannot send (the problem's path names the key). */
export function unsendableMessage(spec: FieldSpec, dialect: ResolvedDialect): string {
  const able = API_DIALECTS.filter((d) => sendRoute(spec, d) !== undefined);
  const need =
    able.length === 0
      ? 'no dialect envsync speaks can send it'
      : `it needs the ${able.join(' or ')} dialect (${able.map((d) => `--api-dialect ${d}`).join(' or ')}, or auto against a service whose listing has that shape)`;
  return (
    `"${spec.manifestKey}" cannot be sent in the API dialect ${dialectWords(dialect)}, which has no operation for it: ` +
    `${need}. Remove the key or change the dialect; nothing is sent to this org`
  );
}

/**
 * How a plan shows the requests a change sends through operations of their own (requests.ts):
 * one line per policy attached or detached and per tag set, changed or removed, in place of the
 * field's `from -> to` line. Every output format renders these lines its own way and escapes
 * them its own way; this module only decides what they say. Pure.
 */

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
