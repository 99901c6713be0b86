import {
  acceptsSavedValue,
  emptyMap,
  type FieldValue,
  isPlainObject,
  RECORDED_FIELDS,
} from '../core/fields.ts';
import type { AppliedRecord, Records } from '../core/model.ts';
import { escapeJson } from '../core/escape.ts';
import type { Masker } from '../core/mask.ts';
import { compareNames } from '../core/names.ts';
import type { StateFormat } from './read.ts';

/**
 * The state file's format. Per org, environments are grouped by their record: the last applied
 * value of each field a listing may not carry (core/fields.ts, RECORDED_FIELDS), and any change
 * that did not take. A fleet has few distinct records, so 100,000 environments take about
 * 1.4 MB in version 2 instead of the 5.8 MB of version 1 (one object per environment), and load
 * in a third of the time. Version 3 adds, beside a group's `environments`, each one's
 * fingerprint at its last successful apply (core/drift.ts: a 53-bit number), or null where
 * unknown; a version 2 or 1 record has none. Every earlier version is still read.
 */
export const STATE_VERSION = 3;

/** Environments sharing one record: the state's form in memory and in the file. */
export interface Group {
  /** Never with a `fingerprint`: those are per environment, in `fingerprints`. */
  readonly record: AppliedRecord;
  /** Sorted by code unit. */
  readonly names: readonly string[];
  /**
   * Each name's fingerprint at its last successful apply, NaN where unknown; absent when none is
   * known. Numbers in a typed array: 8 bytes per environment, not an object each.
   */
  readonly fingerprints?: Float64Array | undefined;
}

/** The record of the `index`th environment of a group, with its fingerprint when known. */
export function recordAt(group: Group, index: number): AppliedRecord {
  const known = group.fingerprints?.[index];
  return known === undefined || Number.isNaN(known)
    ? group.record
    : { ...group.record, fingerprint: known };
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

/** The key a record is grouped by when written (its fingerprint aside). */
function groupKey(record: AppliedRecord): string {
  return JSON.stringify([
    ...RECORDED_FIELDS.map((spec) => record[spec.name] ?? null),
    record.notConverged?.desired ?? null,
    record.notConverged?.observed ?? null,
  ]);
}

/** A record as a group holds it: without a fingerprint. */
function shared(record: AppliedRecord): AppliedRecord {
  if (!Object.hasOwn(record, 'fingerprint')) return record;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (key !== 'fingerprint') copy[key] = value;
  return copy;
}

/** One org's records grouped, in a stable order (by record, names sorted). */
export function toGroups(records: Readonly<Records>): Group[] {
  const groups = new Map<
    string,
    { record: AppliedRecord; names: string[]; fingerprints: number[]; known: boolean }
  >();
  for (const name of Object.keys(records).sort(compareNames)) {
    const record = records[name] as AppliedRecord;
    const key = groupKey(record);
    let group = groups.get(key);
    if (group === undefined) {
      group = { record: shared(record), names: [], fingerprints: [], known: false };
      groups.set(key, group);
    }
    group.names.push(name);
    group.fingerprints.push(record.fingerprint ?? Number.NaN);
    group.known ||= record.fingerprint !== undefined;
  }
  return [...groups.keys()].sort().map((key) => {
    const { record, names, fingerprints, known } = groups.get(key) as Exclude<
      ReturnType<typeof groups.get>,
      undefined
    >;
    return known
      ? { record, names, fingerprints: Float64Array.from(fingerprints) }
      : { record, names };
  });
}

/**
 * One group as the file spells it, its names masked. A value or a `not_converged` mark that holds
 * a secret is left out, as not known (a value the next run sends again, a change it sends again):
 * masked, it would read as the truth.
 */
export function groupJson(
  { record, names, fingerprints }: Group,
  secrets: Masker,
): Record<string, unknown> {
  const json: Record<string, unknown> = {};
  for (const spec of RECORDED_FIELDS) {
    const value = record[spec.name];
    if (value !== undefined && !secrets.holds(JSON.stringify(value)))
      json[spec.name] = Array.isArray(value) ? [...value] : value;
  }
  const stuck = record.notConverged;
  if (stuck && !secrets.holds(`${stuck.desired}\n${stuck.observed}`))
    json['not_converged'] = { ...stuck };
  json['environments'] = names.map(secrets.mask);
  if (fingerprints !== undefined) {
    json['fingerprints'] = Array.from(fingerprints, (value) =>
      Number.isNaN(value) ? null : value,
    );
  }
  return json;
}

/** The records of groups, by name (a new object each time). */
export function recordsOf(groups: readonly Group[]): Records {
  const records = emptyMap<AppliedRecord>();
  for (const group of groups) {
    for (let i = 0; i < group.names.length; i++) {
      records[group.names[i] as string] = recordAt(group, i);
    }
  }
  return records;
}

/**
 * A version 3 group's fingerprints, by position in `environments` (of `count` names): undefined
 * when it has none, null when they are not `count` fingerprints (53-bit numbers) or nulls.
 */
function readFingerprints(raw: unknown, count: number): Float64Array | undefined | null {
  if (raw === undefined) return undefined;
  if (!Array.isArray(raw) || raw.length !== count) return null;
  const values = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const value: unknown = raw[i];
    if (value === null) values[i] = Number.NaN;
    else if (Number.isSafeInteger(value) && (value as number) >= 0) values[i] = value as number;
    else return null;
  }
  return values;
}

/**
 * Reads the `orgs` of a version 1, 2 or 3 file into groups. Undefined (and `bad` called) at the
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
      const fingerprints =
        version >= 3
          ? readFingerprints((group as { fingerprints?: unknown }).fingerprints, names.length)
          : undefined;
      if (fingerprints === null) return (bad(org, '(group)'), undefined);
      groups.push(sortedGroup(record, names as string[], fingerprints));
    }
    orgs.set(org, groups);
  }
  return orgs;
}

/** A group read from a file: sorted, as envsync writes them (a file written otherwise, here once). */
function sortedGroup(
  record: AppliedRecord,
  names: string[],
  fingerprints: Float64Array | undefined,
): Group {
  const sorted = names.every(
    (name, i, all) => i === 0 || compareNames(all[i - 1] as string, name) <= 0,
  );
  if (sorted) return { record, names, fingerprints };
  const order = names
    .map((_, i) => i)
    .sort((a, b) => compareNames(names[a] as string, names[b] as string));
  return {
    record,
    names: order.map((i) => names[i] as string),
    fingerprints:
      fingerprints === undefined
        ? undefined
        : Float64Array.from(order, (i) => fingerprints[i] as number),
  };
}

/**
 * The whole file's text, from each org's serialized part (see StateStore: parts are cached). Like
 * every JSON envsync writes, the unsafe characters are \u-escaped (core/escape.ts), in each part.
 */
export function stateText(api: string | undefined, parts: readonly string[]): string {
  const head = JSON.stringify({ version: STATE_VERSION, ...(api === undefined ? {} : { api }) });
  return `${escapeJson(head).slice(0, -1)},"orgs":{${parts.join(',')}}}\n`;
}

/** One org's part of the file. */
export function orgPart(org: string, groups: readonly Group[], secrets: Masker): string {
  const json = groups.map((group) => groupJson(group, secrets));
  return escapeJson(`${JSON.stringify(secrets.mask(org))}:${JSON.stringify(json)}`);
}

/** The format as the judge of a state file's text takes it (state/read.ts). */
export const STATE_FORMAT: StateFormat<Map<string, readonly Group[]>> = {
  versions: [1, 2, STATE_VERSION],
  readOrgs,
};
