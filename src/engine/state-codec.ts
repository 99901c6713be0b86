import { RECORDED_FIELDS, type FieldValue } from '../core/fields.ts';
import { acceptsSavedValue } from '../core/value-kinds.ts';
import type { AppliedRecord, Records } from '../core/model.ts';
import { compareNames } from '../core/names.ts';

import { emptyMap, isPlainObject } from '../core/plain-object.ts';
import type { StateFormat } from '../core/state-read.ts';

/**
 * The state file's format. Per org, environments are grouped by their record: the last applied
 * value of each field a listing may not carry (core/fields.ts, RECORDED_FIELDS), and any change
 * that did not take. A fleet has few distinct records, so 100,000 environments take about
 * 1.4 MB in version 2 instead of the 5.8 MB of version 1 (one object per environment), and load
 * in a third of the time. Every earlier version is still read.
 */
export const STATE_VERSION = 2;

/** Environments sharing one record: the state's form in memory and in the file. */
export interface Group {
  readonly record: AppliedRecord;
  /** Sorted by code unit. */
  readonly names: readonly string[];
}

/**
 * Reads one record (a version 1 entry or a version 2 group) by hand rather than through a
 * schema: a state file can hold 100,000 of them. Records without `not_converged` are shared
 * through `interned`, so the state costs one reference per environment. Undefined when it is
 * not a record: a field managed always must be there, and every field must be of its kind.
 */
function toRecord(entry: unknown, interned: Map<string, AppliedRecord>): AppliedRecord | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const raw = entry as Record<string, unknown>;
  const values: Record<string, FieldValue> = {};
  for (const spec of RECORDED_FIELDS) {
    const value = raw[spec.name];
    if (value === undefined) {
      if (spec.managed === 'always') return undefined;
      continue;
    }
    if (!acceptsSavedValue(spec, value)) return undefined;
    values[spec.name] = Array.isArray(value)
      ? Object.freeze([...(value as string[])])
      : (value as FieldValue);
  }
  const stuck = raw['not_converged'];
  if (stuck === undefined) {
    // JSON, not a join: a list item may hold any character, and ["a,b"] is not ["a", "b"].
    const key = JSON.stringify(RECORDED_FIELDS.map((spec) => values[spec.name] ?? null));
    let record = interned.get(key);
    if (record === undefined) {
      record = Object.freeze(values);
      interned.set(key, record);
    }
    return record;
  }
  const { desired, observed } = (stuck ?? {}) as Record<string, unknown>;
  if (typeof desired !== 'string' || typeof observed !== 'string') return undefined;
  return { ...values, notConverged: { desired, observed } };
}

/** The key a record is grouped by when written. */
function groupKey(record: AppliedRecord): string {
  return JSON.stringify([
    ...RECORDED_FIELDS.map((spec) => record[spec.name] ?? null),
    record.notConverged?.desired ?? null,
    record.notConverged?.observed ?? null,
  ]);
}

/** One org's records grouped, in a stable order (by record, names sorted). */
export function toGroups(records: Readonly<Records>): Group[] {
  const groups = new Map<string, { record: AppliedRecord; names: string[] }>();
  for (const name of Object.keys(records).sort(compareNames)) {
    const record = records[name] as AppliedRecord;
    const key = groupKey(record);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { record, names: [name] });
    else group.names.push(name);
  }
  return [...groups.keys()].sort().map((key) => groups.get(key) as Group);
}

/** One group as the file spells it. */
export function groupJson({ record, names }: Group): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  for (const spec of RECORDED_FIELDS) {
    const value = record[spec.name];
    if (value !== undefined) json[spec.name] = Array.isArray(value) ? [...value] : value;
  }
  if (record.notConverged) json['not_converged'] = { ...record.notConverged };
  json['environments'] = [...names];
  return json;
}

/** The records of groups, by name (a new object each time). */
export function recordsOf(groups: readonly Group[]): Records {
  const records = emptyMap<AppliedRecord>();
  for (const { record, names } of groups) for (const name of names) records[name] = record;
  return records;
}

/**
 * Reads the `orgs` of a version 1 or 2 file into groups. Undefined (and `bad` called) at the
 * first thing that is not a record.
 */
export function readOrgs(
  version: number,
  entries: Record<string, unknown>,
  bad: (org: string, env: string) => void,
): Map<string, readonly Group[]> | undefined {
  const orgs = new Map<string, readonly Group[]>();
  const interned = new Map<string, AppliedRecord>();
  for (const [org, value] of Object.entries(entries)) {
    if (version === 1) {
      if (!isPlainObject(value)) return undefined;
      const records = emptyMap<AppliedRecord>();
      for (const [name, entry] of Object.entries(value)) {
        const record = toRecord(entry, interned);
        if (record === undefined) return (bad(org, name), undefined);
        records[name] = record;
      }
      orgs.set(org, toGroups(records));
      continue;
    }
    if (!Array.isArray(value)) return undefined;
    const groups: Group[] = [];
    for (const group of value as unknown[]) {
      const record = toRecord(group, interned);
      const names = (group as { environments?: unknown } | null)?.environments;
      if (record === undefined || !Array.isArray(names)) return (bad(org, '(group)'), undefined);
      for (const name of names as unknown[]) {
        if (typeof name !== 'string') return (bad(org, String(name)), undefined);
      }
      // Sorted, as envsync writes them; a file written otherwise is sorted here, once.
      const sorted = (names as string[]).every(
        (name, i, all) => i === 0 || compareNames(all[i - 1] as string, name) <= 0,
      );
      groups.push({ record, names: sorted ? names : [...names].sort(compareNames) });
    }
    orgs.set(org, groups);
  }
  return orgs;
}

/** The whole file's text, from each org's serialized part (see StateStore: parts are cached). */
export function stateText(api: string | undefined, parts: readonly string[]): string {
  const head = JSON.stringify({ version: STATE_VERSION, ...(api === undefined ? {} : { api }) });
  return `${head.slice(0, -1)},"orgs":{${parts.join(',')}}}\n`;
}

/** One org's part of the file. */
export function orgPart(org: string, groups: readonly Group[]): string {
  return `${JSON.stringify(org)}:${JSON.stringify(groups.map(groupJson))}`;
}

/** The format as the judge of a state file's text takes it (core/state-read.ts). */
export const STATE_FORMAT: StateFormat<Map<string, readonly Group[]>> = {
  versions: [1, STATE_VERSION],
  readOrgs,
};
