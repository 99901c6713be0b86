/**
 * The state file's format (docs/state.md): per org, the environments grouped by their record, each
 * one's fingerprint beside its name. One version, decided by its zod schema.
 */
import * as z from 'zod';
import {
  emptyMap,
  type FieldSpec,
  isStringMap,
  RECORDED_FIELDS,
  type StringMap,
  type ValueKind,
} from '../core/fields.ts';
import type { AppliedRecord, Records } from '../core/model.ts';
import { escapeJson } from '../core/escape.ts';
import type { Masker } from '../core/mask.ts';
import { compareNames } from '../core/names.ts';

export const STATE_VERSION = 3;

/** A map, checked in place: z.record would copy it and drop a key such as `__proto__`. */
export const stringMap = z.custom<StringMap>(isStringMap, 'expected an object of strings');

const VALUE_SCHEMAS: Readonly<Record<ValueKind, () => z.ZodType>> = {
  enum: () => z.string(),
  text: () => z.string(),
  flag: () => z.boolean(),
  set: () => z.array(z.string()),
  map: () => stringMap,
};

/** A field's value as envsync's own files hold it (the state file, saved plans). */
export const fileValue = (spec: FieldSpec): z.ZodType => VALUE_SCHEMAS[spec.kind]();

const groupSchema = z
  .object({
    ...Object.fromEntries(RECORDED_FIELDS.map((spec) => [spec.name, fileValue(spec).optional()])),
    not_converged: z.object({ desired: z.string(), observed: z.string() }).optional(),
    /** Records made only by seeing the service as declared: not envsync's to archive. */
    seen: z.literal(true).optional(),
    environments: z.array(z.string()),
    /** A 53-bit number each, null where unknown; absent when none is known. */
    fingerprints: z.array(z.int().nonnegative().nullable()).optional(),
  })
  .refine(
    (g) => g.fingerprints === undefined || g.fingerprints.length === g.environments.length,
    'expected one fingerprint per environment',
  );

const stateSchema = z.object({
  version: z.literal(STATE_VERSION),
  api: z.string().optional(),
  orgs: z.record(z.string(), z.array(groupSchema)),
});

/** Its records, why not (a warning), or an older version. */
type StateVerdict =
  | { readonly kind: 'ok'; readonly orgs: Map<string, Records> }
  | { readonly kind: 'bad'; readonly what: string; readonly fields: Record<string, unknown> }
  | { readonly kind: 'older'; readonly version: number };

const bad = (what: string, fields = {}): StateVerdict => ({ kind: 'bad', what, fields });

/** Judges a state file's text: whole, of this version, and written for `api` (or for none)? */
export function parseState(text: string, api: string | undefined): StateVerdict {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return bad('state file is not valid JSON');
  }
  const version = (json as { version?: unknown } | null)?.version;
  if (typeof version === 'number' && version < STATE_VERSION) return { kind: 'older', version };
  if (typeof version === 'number' && version > STATE_VERSION) {
    return bad(
      `state file has version ${version}, newer than this envsync understands (${STATE_VERSION})`,
      { version },
    );
  }
  const parsed = stateSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return bad('state file has an unexpected shape', {
      at: issue?.path.join('.'),
      problem: issue?.message,
    });
  }
  const { api: recordedFor, orgs } = parsed.data;
  if (api !== undefined && recordedFor !== undefined && recordedFor !== api) {
    return bad('state file was written for another API address', { recordedFor, api });
  }
  const records = new Map<string, Records>();
  for (const [org, groups] of Object.entries(orgs)) {
    const byName = emptyMap<AppliedRecord>();
    for (const { environments, fingerprints, not_converged: stuck, ...values } of groups) {
      const record: AppliedRecord =
        stuck === undefined ? values : { ...values, notConverged: stuck };
      environments.forEach((name, i) => {
        const fingerprint = fingerprints?.[i] ?? null;
        byName[name] = fingerprint === null ? record : { ...record, fingerprint };
      });
    }
    records.set(org, byName);
  }
  return { kind: 'ok', orgs: records };
}

/**
 * The file's text, names masked, unsafe characters \u-escaped. A value or mark that holds a secret
 * is left out, as not known (the next run sends it again): masked, it would read as the truth.
 */
export function stateText(
  api: string | undefined,
  orgs: ReadonlyMap<string, Records>,
  secrets: Masker,
): string {
  const head = JSON.stringify({ version: STATE_VERSION, ...(api === undefined ? {} : { api }) });
  const parts = [...orgs.keys()].sort().map((org) => orgPart(org, orgs.get(org) ?? {}, secrets));
  return `${escapeJson(head.slice(0, -1))},"orgs":{${parts.join(',')}}}\n`;
}

// An org's part, made again only when its records (a new object at each change) or the secrets
// change: a sync saves the file at each org's step, and most orgs stay as they were.
const orgParts = new WeakMap<object, { secrets: Masker; size: number; text: string }>();

function orgPart(org: string, records: Readonly<Records>, secrets: Masker): string {
  const kept = orgParts.get(records);
  if (kept?.secrets === secrets && kept.size === secrets.size) return kept.text;
  const json = `${JSON.stringify(secrets.mask(org))}:${JSON.stringify(groupsOf(records, secrets))}`;
  const text = escapeJson(json);
  orgParts.set(records, { secrets, size: secrets.size, text });
  return text;
}

type Group = { record: object; names: string[]; prints: (number | null)[] };

/** One org's records grouped, in a stable order. */
function groupsOf(records: Readonly<Records>, secrets: Masker): object[] {
  const groups = new Map<string, Group>();
  for (const name of Object.keys(records).sort(compareNames)) {
    const applied = records[name] as AppliedRecord;
    const { notConverged: stuck, fingerprint } = applied;
    const record: Record<string, unknown> = {};
    for (const spec of RECORDED_FIELDS) {
      const value = applied[spec.name];
      if (value !== undefined && !secrets.holds(JSON.stringify(value))) record[spec.name] = value;
    }
    const known = stuck !== undefined && !secrets.holds(`${stuck.desired}\n${stuck.observed}`);
    if (known) record['not_converged'] = stuck;
    if (applied.seen === true) record['seen'] = true;
    const key = JSON.stringify([
      ...RECORDED_FIELDS.map((spec) => record[spec.name] ?? null),
      known ? stuck.desired : null,
      known ? stuck.observed : null,
      applied.seen === true,
    ]);
    const group = groups.get(key) ?? { record, names: [], prints: [] };
    groups.set(key, group);
    group.names.push(secrets.mask(name));
    group.prints.push(fingerprint ?? null);
  }
  return [...groups.keys()].sort().map((key) => {
    const { record, names, prints } = groups.get(key) as Group;
    const fingerprints = prints.some((print) => print !== null) ? { fingerprints: prints } : {};
    return { ...record, environments: names, ...fingerprints };
  });
}
