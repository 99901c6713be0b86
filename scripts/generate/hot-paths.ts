/**
 * The source of src/core/compiled.generated.ts: the registry's hot paths written out field by
 * field, as a person would write them for these fields, so that no loop reads a field with a
 * computed key or dispatches on its kind while it runs. Each value check is a call to the function
 * value-kinds.ts chooses for the field's kind, found here by its name, so a rule of a kind is
 * written once. The text is formatted by the caller (targets.ts).
 */
import { FIELD_LIST, FIELDS, type FieldSpec, type ListedAs } from '../../src/core/fields.ts';
import * as stringMaps from '../../src/core/string-maps.ts';
import * as stringSets from '../../src/core/string-sets.ts';
import * as valueKinds from '../../src/core/value-kinds.ts';
import { listedCheck, manifestCheck } from '../../src/core/value-kinds.ts';

/** The words JavaScript reserves. */
const RESERVED = (
  'await break case catch class const continue debugger default delete do else enum export ' +
  'extends false finally for function if implements import in instanceof interface let new null ' +
  'package private protected public return static super switch this throw true try typeof var ' +
  'void while with yield'
).split(' ');

/**
 * Names a field's local variable must not take: the generated functions' parameters and locals,
 * the module's imports, and the reserved words.
 */
const TAKEN = new Set([
  ...'name value entry source read convert desired observed applied known'.split(' '),
  ...'FIELDS Object Set undefined'.split(' '),
  ...Object.keys(stringSets),
  ...Object.keys(stringMaps),
  ...Object.keys(valueKinds),
  ...RESERVED,
]);

/** A field as the generated source names it. */
interface Field {
  readonly spec: FieldSpec;
  /** The local variable that holds its value. */
  readonly local: string;
  /** Its prefix in the module's constants (`INCLUDED_ENVIRONMENTS`). */
  readonly constant: string;
  /** `FIELDS.name`: its registry entry. */
  readonly entry: string;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `object.key`, or `object["key"]` where the key is not an identifier. */
function member(object: string, key: string): string {
  return IDENTIFIER.test(key) ? `${object}.${key}` : `${object}[${JSON.stringify(key)}]`;
}

function fieldOf(spec: FieldSpec): Field {
  const words = spec.name.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  let local = words
    .map((word, i) => (i === 0 ? word : `${word[0]?.toUpperCase() ?? ''}${word.slice(1)}`))
    .join('');
  if (!IDENTIFIER.test(local) || TAKEN.has(local)) local = `${local}Field`;
  if (!IDENTIFIER.test(local)) throw new Error(`field ${spec.name}: no identifier for its value`);
  const constant = words.join('_').toUpperCase();
  return { spec, local, constant, entry: member('FIELDS', spec.name) };
}

const fields = FIELD_LIST.map(fieldOf);

/** The `type` field, which decides where the fields allowed only on some types may be. */
function typeField(): Field {
  const found = fields.find((f) => f.spec === FIELDS.type);
  if (found === undefined) throw new Error('the registry has no type field');
  return found;
}

/** The imports the checks need, by module, collected as the source is written. */
const used = {
  stringSets: new Set<string>(),
  stringMaps: new Set<string>(),
  valueKinds: new Set<string>(),
};

/** A check function's name, once it is known to be an export of its module. */
function nameOf(check: (...args: never[]) => unknown): string {
  const modules = { stringSets, stringMaps, valueKinds } as const;
  for (const [module, exports] of Object.entries(modules) as [keyof typeof modules, object][]) {
    if ((exports as Record<string, unknown>)[check.name] === check) {
      used[module].add(check.name);
      return check.name;
    }
  }
  throw new Error(`${check.name || 'an anonymous function'} is not exported by its module`);
}

function use(module: keyof typeof used, name: string): string {
  used[module].add(name);
  return name;
}

const values = (f: Field) => `${f.constant}_VALUES`;
const types = (f: Field) => `${f.constant}_TYPES`;
const empty = (f: Field) => `${f.constant}_EMPTY`;
const slot = (f: Field) => `FieldSlots[${JSON.stringify(f.spec.name)}]`;
const required = (spec: FieldSpec) => spec.default === undefined && spec.managed === 'always';

/** The module's constants: the registry's sets the checks look values up in, its empty values. */
function constants(): string[] {
  const out: string[] = [];
  for (const f of fields) {
    if (f.spec.kind === 'enum') {
      out.push(
        `/** The values \`${f.spec.manifestKey}\` may have in a manifest. */`,
        `const ${values(f)} = ${use('valueKinds', 'enumValues')}(${f.entry});`,
      );
    }
    if (f.spec.onlyForTypes !== undefined) {
      out.push(
        `/** The types \`${f.spec.manifestKey}\` is allowed on. */`,
        `const ${types(f)}: ReadonlySet<unknown> = new Set(${f.entry}.onlyForTypes);`,
      );
    }
    if (f.spec.listing.absent === 'empty' || f.spec.listing.null === 'empty') {
      out.push(
        `/** What a listing's \`${f.spec.wireName}\` reads as when it is ${f.spec.listing.absent === 'empty' ? (f.spec.listing.null === 'empty' ? 'left out or null' : 'left out') : 'null'}. */`,
        `const ${empty(f)} = ${use('valueKinds', 'emptyValue')}(${f.entry});`,
      );
    }
  }
  return out;
}

function environmentOf(): string {
  return `
/**
 * An environment object: its name and every field of the registry, in order and in one shape
 * (an object built key by key would take a third more memory).
 */
export function environmentOf<S>(
  name: string,
  source: S,
  read: (source: S, spec: FieldSpec) => FieldValue | undefined,
): { readonly name: string } & FieldSlots {
  return {
    name,
    ${fields.map((f) => `${f.spec.name}: read(source, ${f.entry}) as ${slot(f)},`).join('\n')}
  };
}`;
}

function isUnchanged(): string {
  const compare = (f: Field) =>
    f.spec.kind === 'set'
      ? `!${use('stringSets', 'sameSet')}(known, ${f.local})`
      : f.spec.kind === 'map'
        ? `!${use('stringMaps', 'sameMap')}(known, ${f.local})`
        : `known !== ${f.local}`;
  return `
/**
 * True when every field the desired environment manages is known remotely (the listing's value,
 * else the last applied one) and equal: the planner's question for every environment.
 */
export function isUnchanged(
  desired: Partial<FieldSlots>,
  observed: Partial<FieldSlots>,
  applied: Partial<FieldSlots> | undefined,
): boolean {
  ${fields
    .map(
      (f) => `const ${f.local} = ${member('desired', f.spec.name)};
  if (${f.local} !== undefined) {
    let known = ${member('observed', f.spec.name)};
    if (known === undefined && applied !== undefined) known = ${member('applied', f.spec.name)};
    if (known === undefined || ${compare(f)}) return false;
  }`,
    )
    .join('\n')}
  return true;
}`;
}

function checkManifestFields(): string {
  const check = (f: Field) => {
    const fn = nameOf(manifestCheck(f.spec));
    return f.spec.kind === 'enum' ? `${fn}(${f.local}, ${values(f)})` : `${fn}(${f.local})`;
  };
  const field = (f: Field) => {
    const read = `const ${f.local} = ${member('value', f.spec.manifestKey)};`;
    if (required(f.spec)) {
      return `${read}
  if (${f.local} === undefined || !${check(f)}) return -1;
  known++;`;
    }
    return `${read}
  if (${f.local} === undefined) {
    if (Object.hasOwn(value, ${JSON.stringify(f.spec.manifestKey)})) known++;
  } else if (${check(f)}) known++;
  else return -1;`;
  };
  const typeBound = fields
    .filter((f) => f.spec.onlyForTypes !== undefined)
    .map(
      (f) => `if (${f.local} !== undefined && !${types(f)}.has(${typeField().local})) return -1;`,
    );
  return `
/**
 * Checks the fields of one manifest environment in place: each given one is of its kind (and on a
 * type it is allowed on), each required one is given. Returns how many of the fields' keys the
 * object has (so that the caller, who counts all its keys, knows whether there is an unknown one),
 * or -1 when a check fails.
 */
export function checkManifestFields(value: Record<string, unknown>): number {
  let known = 0;
  ${fields.map(field).join('\n')}
  ${typeBound.join('\n')}
  return known;
}`;
}

function checkListedFields(): string {
  const field = (f: Field) => {
    const x = f.local;
    const bad = `!${nameOf(listedCheck(f.spec))}(${x})`;
    const absent = f.spec.listing.absent !== 'error';
    const nil = f.spec.listing.null !== 'error';
    const condition =
      absent && nil
        ? `${x} !== undefined && ${x} !== null && ${bad}`
        : absent
          ? `${x} === null || (${x} !== undefined && ${bad})`
          : nil
            ? `${x} === undefined || (${x} !== null && ${bad})`
            : `${x} === undefined || ${x} === null || ${bad}`;
    return `const ${x} = ${member('entry', f.spec.wireName)};
  if (${condition}) return false;`;
  };
  return `
/** True when every field of one listing entry is of its kind, or absent or null where allowed. */
export function checkListedFields(entry: Record<string, unknown>): boolean {
  ${fields.map(field).join('\n')}
  return true;
}`;
}

function desiredOf(): string {
  const field = (f: Field) => {
    const fallback =
      f.spec.default === undefined
        ? 'undefined'
        : `convert.${f.spec.kind}(${member(f.entry, 'default')})`;
    return `${f.spec.name}: ${f.local} === undefined ? ${fallback} : convert.${f.spec.kind}(${f.local}),`;
  };
  return `
/**
 * One manifest environment (already checked) as envsync's model: each field the given value or
 * its default, turned by \`convert\` (the fast path shares names and lists, and copies text out of
 * the file).
 */
export function desiredOf(
  name: string,
  value: Record<string, unknown>,
  convert: ${use('valueKinds', 'ManifestValueConverters')},
): { readonly name: string } & FieldSlots {
  ${fields.map((f) => `const ${f.local} = ${member('value', f.spec.manifestKey)} as ${slot(f)};`).join('\n')}
  return {
    name,
    ${fields.map(field).join('\n')}
  };
}`;
}

function observedOf(): string {
  const field = (f: Field) => {
    const x = f.local;
    const as = (rule: ListedAs) => (rule === 'empty' ? empty(f) : 'undefined');
    const given =
      f.spec.kind === 'set'
        ? `${use('stringSets', 'normalizeListedSet')}(${x} as readonly unknown[])`
        : f.spec.kind === 'map'
          ? `${use('stringMaps', 'normalizeMap')}(${x} as NonNullable<${slot(f)}>)`
          : `(${x} as ${slot(f)})`;
    const { absent, null: nil } = f.spec.listing;
    const value =
      as(absent) === as(nil)
        ? `${x} === undefined || ${x} === null ? ${as(absent)} : ${given}`
        : `${x} === undefined ? ${as(absent)} : ${x} === null ? ${as(nil)} : ${given}`;
    return `${f.spec.name}: ${value},`;
  };
  return `
/**
 * One listing entry (already checked) as envsync compares it: undefined for a field the listing
 * does not carry, the field's empty value where its rule says so.
 */
export function observedOf(
  entry: { readonly name: string } & Record<string, unknown>,
): { readonly name: string } & FieldSlots {
  ${fields.map((f) => `const ${f.local} = ${member('entry', f.spec.wireName)};`).join('\n')}
  return {
    name: entry.name,
    ${fields.map(field).join('\n')}
  };
}`;
}

function importOf(names: ReadonlySet<string>, module: string): string {
  if (names.size === 0) return '';
  const sorted = [...names].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  const typeOnly = new Set(['ManifestValueConverters']);
  const list = sorted.map((n) => (typeOnly.has(n) ? `type ${n}` : n)).join(', ');
  return `import { ${list} } from '${module}';`;
}

/** The whole module, unformatted. */
export function hotPathsSource(): string {
  used.stringSets.clear();
  used.stringMaps.clear();
  used.valueKinds.clear();
  const body = [
    ...constants(),
    environmentOf(),
    isUnchanged(),
    checkManifestFields(),
    checkListedFields(),
    desiredOf(),
    observedOf(),
  ].join('\n');
  return `/**
 * Generated by \`npm run generate\` (scripts/generate/hot-paths.ts) from the field registry in
 * fields.ts: do not edit by hand. A test fails when this file differs from what the generator
 * writes.
 *
 * The registry's hot paths, written out field by field. A loop over the registry reads each field
 * with a computed key and dispatches on its kind, and at 100,000 environments that cost a tenth
 * of a no-op plan more than code written out for these fields. Every value check calls the rule
 * value-kinds.ts gives the field's kind, and property tests (test/core/compiled.test.ts) hold each
 * function to a plain loop over the registry.
 */
import { FIELDS, type FieldSlots, type FieldSpec, type FieldValue } from './fields.ts';
${importOf(used.stringMaps, './string-maps.ts')}
${importOf(used.stringSets, './string-sets.ts')}
${importOf(used.valueKinds, './value-kinds.ts')}

${body}
`;
}
