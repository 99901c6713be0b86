/**
 * What a change sends, by API dialect: the PUT, and the operations of fields sent otherwise
 * (`sentBy`). The planner decides them, a saved plan carries them, the applier sends exactly them.
 */
import { API_DIALECTS, type ApiDialect, dialectWords, type ResolvedDialect } from './dialect.ts';
import {
  FIELD_LIST,
  type FieldName,
  type FieldSpec,
  fieldWarning,
  mapChanges,
  normalizeMap,
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

/** The items of `a` not in `b`, sorted. */
function setDifference(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set(a)].filter((item) => !b.includes(item)).sort(compareNames);
}

/**
 * The requests of a change: each field by its route in `dialect`, an operation sending only the
 * difference (from null: all, nothing taken away); first the rename from `renameFrom`, and under
 * `prune` the ownership tag the listing lacks.
 */
export function changeRequests(
  action: ChangeAction,
  fields: FieldDiffs,
  dialect: ApiDialect,
  extra: {
    readonly renameFrom?: string | undefined;
    readonly ownerTag?: { readonly key: string; readonly value: string } | undefined;
  } = {},
): ChangeRequests {
  let put = action === 'create';
  const patch: FieldName[] = [];
  let policies: PolicyRequests | undefined;
  let tags: TagRequests | undefined;
  for (const spec of FIELD_LIST) {
    const diff = fields[spec.name];
    const route = diff === undefined ? undefined : sendRoute(spec, dialect);
    if (diff === undefined || route === undefined) continue;
    if (route === 'put') put = true;
    else if (route === 'patch') {
      if (action !== 'create') patch.push(spec.name);
    } else if (route === 'policies-endpoint') {
      const to = diff.to as readonly string[];
      const from = (diff.from ?? []) as readonly string[];
      const [attach, detach] = [setDifference(to, from), setDifference(from, to)];
      if (attach.length > 0 || detach.length > 0) policies = { attach, detach };
    } else {
      const { set, remove } = mapChanges((diff.from ?? {}) as StringMap, diff.to as StringMap);
      if (remove.length > 0 || Object.keys(set).length > 0) tags = { set, remove };
    }
  }
  const owner = extra.ownerTag;
  if (owner !== undefined) {
    // The ownership tag is set, and never removed.
    tags = {
      set: normalizeMap({ ...tags?.set, [owner.key]: owner.value }),
      remove: (tags?.remove ?? []).filter((key) => key !== owner.key),
    };
  }
  return {
    ...(extra.renameFrom === undefined ? {} : { rename: extra.renameFrom }),
    put,
    ...(patch.length === 0 ? {} : { patch }),
    ...(policies === undefined ? {} : { policies }),
    ...(tags === undefined ? {} : { tags }),
  };
}

/** A saved plan's requests against those its fields call for. */
export function sameRequests(a: ChangeRequests, b: ChangeRequests): boolean {
  const text = (r: ChangeRequests) =>
    JSON.stringify([
      r.rename,
      r.put,
      r.patch,
      r.policies?.attach,
      r.policies?.detach,
      r.tags?.set,
      r.tags?.remove,
    ]);
  return text(a) === text(b);
}

/** `desired` without the fields `dialect`'s service retired: never sent, compared or recorded. */
export function withoutRetired(desired: readonly DesiredEnvironment[], dialect: ApiDialect) {
  const retired = FIELD_LIST.filter((spec) => spec.retired && !sendRoute(spec, dialect));
  const kept = ([key]: [string, unknown]) => !retired.some((spec) => spec.name === key);
  return desired.map((env) => Object.fromEntries(Object.entries(env).filter(kept)) as typeof env);
}

/** Declared fields `dialect` cannot send (tags in `contract`; a retired one if `strict`). */
export function unsendableFields(
  desired: readonly DesiredEnvironment[],
  dialect: ApiDialect,
  strict = false,
): { readonly env: DesiredEnvironment; readonly spec: FieldSpec }[] {
  const refused = FIELD_LIST.filter(
    (spec) => !sendRoute(spec, dialect) && (strict || !spec.retired),
  );
  return desired.flatMap((env) =>
    refused.filter((spec) => env[spec.name] !== undefined).map((spec) => ({ env, spec })),
  );
}

/** The problem's path names the key. */
export function unsendableMessage(spec: FieldSpec, dialect: ResolvedDialect): string {
  const retired = fieldWarning(spec, dialect.dialect);
  if (retired !== undefined) return `${retired}; --strict refuses it: nothing is sent to this org`;
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
 * A plan's line for a policy attached (`+`) or detached (`-`), a tag set (`+`, `key=value`),
 * changed (`~`, with `from` and `to`) or removed (`-`), in place of the field's `from -> to`.
 */
interface RequestLine {
  readonly sign: '+' | '~' | '-';
  readonly what: 'policy' | 'tag';
  readonly subject: string;
  readonly from?: string;
  readonly to?: string;
}

/** A name, key or value as a plan shows it: bare, or as a JSON string when it could mislead. */
function token(text: string, separators = /(?!)/): string {
  return text !== '' && !/[\s"'\\\p{C}\p{Z}]/u.test(text) && !separators.test(text)
    ? text
    : JSON.stringify(text);
}
const key = (text: string) => token(text, /[=:]/);

/** A change's field differences but those its operations cover, and the lines of those. */
export function requestLines(change: Pick<ChangeReport, 'fields' | 'policies' | 'tags'>): {
  readonly fields: readonly [string, FieldDiff][];
  readonly lines: readonly RequestLine[];
  readonly covered: ReadonlySet<string>;
} {
  const lines: RequestLine[] = [];
  const covered = new Set<string>();
  const { policies, tags } = change;
  if (policies !== undefined) {
    covered.add('policies');
    for (const name of policies.attach)
      lines.push({ sign: '+', what: 'policy', subject: token(name) });
    for (const name of policies.detach)
      lines.push({ sign: '-', what: 'policy', subject: token(name) });
  }
  if (tags !== undefined) {
    covered.add('tags');
    const diff = change.fields.tags;
    const before = ((diff?.notShown === true ? null : diff?.from) ?? {}) as StringMap;
    for (const [k, v] of Object.entries(tags.set)) {
      const old = Object.hasOwn(before, k) ? before[k] : undefined;
      lines.push(
        old === undefined
          ? { sign: '+', what: 'tag', subject: `${key(k)}=${token(v)}` }
          : { sign: '~', what: 'tag', subject: key(k), from: token(old), to: token(v) },
      );
    }
    for (const k of tags.remove) lines.push({ sign: '-', what: 'tag', subject: key(k) });
  }
  const fields = Object.entries(change.fields).filter(
    (entry): entry is [string, FieldDiff] => entry[1] !== undefined && !covered.has(entry[0]),
  );
  return { fields, lines, covered };
}

/** After a field's line: ` (PATCH)` when the change's PATCH sends it. */
export const patched = (change: Pick<ChangeReport, 'patch'>, field: string) =>
  change.patch?.some((name) => name === field) === true ? ' (PATCH)' : '';

/** Before any escaping of the output format. */
export function requestLineText(line: RequestLine, arrow = '->'): string {
  const head = `${line.sign} ${line.what} ${line.subject}`;
  return line.from === undefined ? head : `${head}: ${line.from} ${arrow} ${line.to ?? ''}`;
}
