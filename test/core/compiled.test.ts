import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkListedFields,
  checkManifestFields,
  desiredOf,
  environmentOf,
  isUnchanged,
  observedOf,
} from '../../src/core/compiled.generated.ts';
import { FIELD_LIST, FIELDS, type FieldValue } from '../../src/core/fields.ts';
import { normalizeListedSet } from '../../src/core/string-sets.ts';
import {
  acceptsListedValue,
  acceptsManifestValue,
  emptyValue,
  normalizeValue,
  sameValue,
} from '../../src/core/value-kinds.ts';
import { odd } from '../helpers/arbitraries.ts';

// Each compiled function against a plain loop over the registry: the code it stands for.

const value = fc.oneof(
  fc.constantFrom('K8S', 'S3', 'logical', 'k8s', '', 'x'),
  fc.boolean(),
  fc.array(fc.constantFrom('a', 'b', 'c', 'a b'), { maxLength: 3 }),
  fc.array(fc.oneof(fc.constantFrom('a', 'b'), fc.record({ name: fc.constantFrom('a', 'c') })), {
    maxLength: 3,
  }),
  fc.dictionary(fc.constantFrom('a', 'b', '', '__proto__'), fc.constantFrom('x', 'y', ''), {
    maxKeys: 2,
  }),
  fc.dictionary(fc.constantFrom('a', 'b'), fc.oneof(fc.constantFrom('x'), odd), { maxKeys: 2 }),
  fc.constant({ long: 'v'.repeat(257) }),
  fc.constant(null),
  odd,
);
const record = fc.dictionary(
  fc.constantFrom(
    ...FIELD_LIST.flatMap((spec) => [spec.manifestKey, spec.wireName]),
    'name',
    'extra',
  ),
  value,
);

/** A valid value of each field's kind, as a manifest gives it. */
function validValue(spec: (typeof FIELD_LIST)[number]): fc.Arbitrary<FieldValue> {
  if (spec.kind === 'enum') return fc.constantFrom(...(spec.values ?? []));
  if (spec.kind === 'flag') return fc.boolean();
  if (spec.kind === 'set') return fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 });
  if (spec.kind === 'map')
    return fc.dictionary(fc.constantFrom('team', 'env', 'b'), fc.string({ maxLength: 3 }), {
      maxKeys: 3,
    });
  return fc.string({ maxLength: 5 });
}

/** Manifest environments desiredOf may be given: checked, each optional field now and then left out. */
const validEnvironment = fc.record(
  Object.fromEntries(FIELD_LIST.map((spec) => [spec.manifestKey, validValue(spec)])),
  {
    requiredKeys: FIELD_LIST.filter(
      (spec) => spec.default === undefined && spec.managed === 'always',
    ).map((spec) => spec.manifestKey),
  },
) as fc.Arbitrary<Record<string, unknown>>;

function referenceManifestCheck(v: Record<string, unknown>): number {
  let known = 0;
  for (const spec of FIELD_LIST) {
    const given = v[spec.manifestKey];
    if (given === undefined) {
      if (spec.default === undefined && spec.managed === 'always') return -1;
      if (Object.hasOwn(v, spec.manifestKey)) known++;
    } else if (acceptsManifestValue(spec, given)) known++;
    else return -1;
  }
  for (const spec of FIELD_LIST) {
    const type = v[FIELDS.type.manifestKey] as string;
    if (spec.onlyForTypes !== undefined && v[spec.manifestKey] !== undefined)
      if (!spec.onlyForTypes.includes(type)) return -1;
  }
  return known;
}

function referenceListedCheck(e: Record<string, unknown>): boolean {
  return FIELD_LIST.every((spec) => {
    const given = e[spec.wireName];
    if (given === undefined) return spec.listing.absent !== 'error';
    if (given === null) return spec.listing.null !== 'error';
    return acceptsListedValue(spec, given);
  });
}

describe('the compiled hot paths agree with a loop over the registry', () => {
  it('checkManifestFields', () => {
    fc.assert(
      fc.property(record, (v) => {
        expect(checkManifestFields(v)).toBe(referenceManifestCheck(v));
      }),
      { numRuns: 3000 },
    );
  });

  it('checkListedFields and observedOf', () => {
    fc.assert(
      fc.property(record, (e) => {
        const accepted = referenceListedCheck(e);
        expect(checkListedFields(e)).toBe(accepted);
        if (!accepted) return;
        const expected: Record<string, unknown> = { name: 'n' };
        for (const spec of FIELD_LIST) {
          const given = e[spec.wireName] as FieldValue | null | undefined;
          const rule =
            given === undefined
              ? spec.listing.absent
              : given === null
                ? spec.listing.null
                : 'value';
          expected[spec.name] =
            rule === 'value'
              ? spec.kind === 'set'
                ? normalizeListedSet(given as readonly unknown[])
                : normalizeValue(spec, given as FieldValue)
              : rule === 'empty'
                ? emptyValue(spec)
                : undefined;
        }
        expect(observedOf({ ...e, name: 'n' })).toStrictEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('desiredOf and environmentOf', () => {
    const tag = {
      enum: (v: string) => `enum:${v}`,
      text: (v: string) => `text:${v}`,
      flag: (v: boolean) => !v,
      set: (v: readonly string[]) => [...v, 'set'],
      map: (v: Readonly<Record<string, string>>) => ({ ...v, map: 'map' }),
    };
    fc.assert(
      fc.property(validEnvironment, (v) => {
        const expected: Record<string, unknown> = { name: 'n' };
        for (const spec of FIELD_LIST) {
          const given = (v[spec.manifestKey] as FieldValue | undefined) ?? spec.default;
          expected[spec.name] =
            given === undefined ? undefined : (tag[spec.kind] as (x: unknown) => unknown)(given);
        }
        expect(desiredOf('n', v, tag)).toStrictEqual(expected);
        const read = environmentOf('n', v, (source, spec) =>
          source[spec.wireName] === undefined ? undefined : spec.name,
        );
        expect(Object.keys(read)).toEqual(['name', ...FIELD_LIST.map((spec) => spec.name)]);
      }),
      { numRuns: 2000 },
    );
  });

  it('isUnchanged', () => {
    const slots = fc.record(
      Object.fromEntries(
        FIELD_LIST.map((spec) => [
          spec.name,
          fc.option(
            (spec.kind === 'set'
              ? fc.array(fc.constantFrom('a', 'b'), { maxLength: 2 })
              : spec.kind === 'map'
                ? fc.dictionary(fc.constantFrom('a', 'b'), fc.constantFrom('x', 'y'), {
                    maxKeys: 2,
                  })
                : spec.kind === 'flag'
                  ? fc.boolean()
                  : fc.constantFrom('K8S', 'S3')) as fc.Arbitrary<FieldValue>,
            { nil: undefined },
          ),
        ]),
      ),
    );
    fc.assert(
      fc.property(slots, slots, fc.option(slots, { nil: undefined }), (d, o, a) => {
        const expected = FIELD_LIST.every((spec) => {
          const wanted = d[spec.name];
          if (wanted === undefined) return true;
          const known = o[spec.name] ?? a?.[spec.name];
          return known !== undefined && sameValue(spec, known, wanted);
        });
        expect(isUnchanged(d, o, a)).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });
});
