/**
 * The hot paths of the field registry, compiled: for each of them, the code a person would write
 * by hand for these fields, generated once at load from `FIELD_LIST` instead.
 *
 * A loop over the registry reads each field with a computed key and dispatches on its kind, and at
 * 100,000 environments that cost a tenth of a no-op plan more than code written out field by field
 * (measured with `npm run bench`). Generating that code keeps the registry the one declaration of
 * the fields and the speed of the hand-written version. Only the registry's own constants go into
 * the generated source (keys through JSON.stringify, values as arguments), and a property test
 * (test/core/compiled.test.ts) holds each compiled function to a plain loop over the registry.
 */
import {
  FIELD_LIST,
  FIELDS,
  type FieldSlots,
  type FieldSpec,
  type FieldValue,
  type ListedAs,
} from './fields.ts';
import {
  isDistinctNameList,
  isDistinctStringList,
  isListedSet,
  normalizeListedSet,
  sameSet,
} from './string-sets.ts';
import { emptyValue, type ManifestValueConverters } from './value-kinds.ts';

/**
 * Builds a function from generated source; `helpers` are the only names it can reach. The caller
 * states the function's type.
 */
function compile(helpers: Record<string, unknown>, body: string): never {
  const names = Object.keys(helpers);
  // oxlint-disable-next-line typescript/no-implied-eval -- the source holds only registry constants
  const factory = new Function(...names, body) as (...args: unknown[]) => never;
  return factory(...names.map((name) => helpers[name]));
}

const key = (text: string): string => JSON.stringify(text);
const fields = FIELD_LIST.map((spec, index) => ({ spec, index, key: key(spec.name) }));

/** The helpers every generated function may use, by the names the sources call them. */
const HELPERS = {
  F: FIELD_LIST,
  E: FIELD_LIST.map((spec) => new Set(spec.values ?? [])),
  EMPTY: FIELD_LIST.map((spec) => emptyValue(spec)),
  D: FIELD_LIST.map((spec) => spec.default),
  T: FIELD_LIST.map((spec) => new Set(spec.onlyForTypes ?? [])),
  hasOwn: Object.hasOwn,
  isDistinctStringList,
  isDistinctNameList,
  isListedSet,
  normalizeListedSet,
  sameSet,
};

/**
 * An environment object: its name and every field of the registry, in order and in one shape
 * (an object built key by key would take a third more memory).
 */
export const environmentOf: <S>(
  name: string,
  source: S,
  read: (source: S, spec: FieldSpec) => FieldValue | undefined,
) => { readonly name: string } & FieldSlots = compile(
  HELPERS,
  `return function environmentOf(name, source, read) {
    return { name: name, ${fields.map((f) => `${f.key}: read(source, F[${f.index}])`).join(', ')} };
  };`,
);

/**
 * True when every field the desired environment manages is known remotely (the listing's value,
 * else the last applied one) and equal: the planner's question for every environment.
 */
export const isUnchanged: (
  desired: Partial<FieldSlots>,
  observed: Partial<FieldSlots>,
  applied: Partial<FieldSlots> | undefined,
) => boolean = compile(
  HELPERS,
  `return function isUnchanged(d, o, a) {
    let w, k;
    ${fields
      .map(
        ({ spec, key: k }) => `w = d[${k}];
    if (w !== undefined) {
      k = o[${k}];
      if (k === undefined && a !== undefined) k = a[${k}];
      if (k === undefined || ${spec.kind === 'set' ? '!sameSet(k, w)' : 'k !== w'}) return false;
    }`,
      )
      .join('\n    ')}
    return true;
  };`,
);

/** The check of one manifest value of a field's kind, as source, on `x`. */
function manifestCheck(spec: FieldSpec, index: number): string {
  switch (spec.kind) {
    case 'enum':
      return `typeof x === "string" && E[${index}].has(x)`;
    case 'text':
      return 'typeof x === "string"';
    case 'flag':
      return 'typeof x === "boolean"';
    default:
      return spec.items === 'environments' ? 'isDistinctNameList(x)' : 'isDistinctStringList(x)';
  }
}

/** A field allowed only on some types, given on another: as source, the check that refuses it. */
function typeCheck(spec: FieldSpec, index: number): string {
  if (spec.onlyForTypes === undefined) return '';
  return `if (v[${key(spec.manifestKey)}] !== undefined && !T[${index}].has(v[${key(FIELDS.type.manifestKey)}])) return -1;`;
}

/**
 * Checks the fields of one manifest environment in place: each given one is of its kind (and on a
 * type it is allowed on), each required one is given. Returns how many of the fields' keys the object has (so that the caller,
 * who counts all its keys, knows whether there is an unknown one), or -1 when a check fails.
 */
export const checkManifestFields: (value: Record<string, unknown>) => number = compile(
  HELPERS,
  `return function checkManifestFields(v) {
    let known = 0, x;
    ${fields
      .map(({ spec, index, key: k }) => {
        const required = spec.default === undefined && spec.managed === 'always';
        return `x = v[${spec.manifestKey === spec.name ? k : key(spec.manifestKey)}];
    if (x === undefined) { ${required ? 'return -1;' : `if (hasOwn(v, ${key(spec.manifestKey)})) known++;`} }
    else if (${manifestCheck(spec, index)}) known++;
    else return -1;`;
      })
      .join('\n    ')}
    ${fields
      .map(({ spec, index }) => typeCheck(spec, index))
      .filter((check) => check !== '')
      .join('\n    ')}
    return known;
  };`,
);

/** The check of one listed (non-null) value of a field's kind, as source, on `x`. */
function listedCheck(spec: FieldSpec): string {
  switch (spec.kind) {
    case 'flag':
      return 'typeof x === "boolean"';
    case 'set':
      return 'isListedSet(x)';
    default:
      return 'typeof x === "string"';
  }
}

/** What an absent or null listed value may be, as source: allowed or not. */
const allowed = (rule: ListedAs): boolean => rule !== 'error';

/** True when every field of one listing entry is of its kind, or absent or null where allowed. */
export const checkListedFields: (entry: Record<string, unknown>) => boolean = compile(
  HELPERS,
  `return function checkListedFields(e) {
    let x;
    ${fields
      .map(({ spec }) => {
        const wire = key(spec.wireName);
        return `x = e[${wire}];
    if (x === undefined) { ${allowed(spec.listing.absent) ? '' : 'return false;'} }
    else if (x === null) { ${allowed(spec.listing.null) ? '' : 'return false;'} }
    else if (!(${listedCheck(spec)})) return false;`;
      })
      .join('\n    ')}
    return true;
  };`,
);

/** One manifest field's value, as source: the given one or the default, through its converter. */
function manifestValueSource(spec: FieldSpec, index: number): string {
  const fallback = spec.default === undefined ? 'undefined' : `c.${spec.kind}(D[${index}])`;
  return `((x = v[${key(spec.manifestKey)}]) === undefined ? ${fallback} : c.${spec.kind}(x))`;
}

/**
 * One manifest environment (already checked) as envsync's model: each field the given value or
 * its default, turned by `convert` (the fast path shares names and lists, and copies text out of
 * the file).
 */
export const desiredOf: (
  name: string,
  value: Record<string, unknown>,
  convert: ManifestValueConverters,
) => { readonly name: string } & FieldSlots = compile(
  HELPERS,
  `return function desiredOf(name, v, c) {
    let x;
    return { name: name, ${fields.map((f) => `${f.key}: ${manifestValueSource(f.spec, f.index)}`).join(', ')} };
  };`,
);

/** A listed value as envsync compares it, as source: by the listing's rules, sets normalized. */
function listedValue(spec: FieldSpec, index: number): string {
  const rule = (as: ListedAs) => (as === 'empty' ? `EMPTY[${index}]` : 'undefined');
  const value = spec.kind === 'set' ? 'normalizeListedSet(x)' : 'x';
  return `((x = e[${key(spec.wireName)}]) === undefined ? ${rule(spec.listing.absent)} : x === null ? ${rule(spec.listing.null)} : ${value})`;
}

/**
 * One listing entry (already checked) as envsync compares it: undefined for a field the listing
 * does not carry, the field's empty value where its rule says so.
 */
export const observedOf: (
  entry: { readonly name: string } & Record<string, unknown>,
) => { readonly name: string } & FieldSlots = compile(
  HELPERS,
  `return function observedOf(e) {
    let x;
    return { name: e.name, ${fields.map((f) => `${f.key}: ${listedValue(f.spec, f.index)}`).join(', ')} };
  };`,
);
