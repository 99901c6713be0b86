import { describe, expect, it } from 'vitest';
import { environmentOf } from '../../src/core/compiled.generated.ts';
import { FIELD_LIST, FIELDS, RECORDED_FIELDS } from '../../src/core/fields.ts';
import { normalizeSet, repeatedIndexes } from '../../src/core/string-sets.ts';
import {
  acceptsListedValue,
  acceptsManifestValue,
  emptyValue,
  normalizeValue,
  sameValue,
  showValue,
} from '../../src/core/value-kinds.ts';

describe('the field registry', () => {
  it('names each field once, by its key, with distinct manifest keys and wire names', () => {
    for (const [key, spec] of Object.entries(FIELDS)) expect(spec.name).toBe(key);
    const manifestKeys = FIELD_LIST.map((spec) => spec.manifestKey);
    const wireNames = FIELD_LIST.map((spec) => spec.wireName);
    expect(new Set(manifestKeys).size).toBe(FIELD_LIST.length);
    expect(new Set(wireNames).size).toBe(FIELD_LIST.length);
    expect(manifestKeys).not.toContain('name');
    expect(wireNames).not.toContain('name');
  });

  it('gives every field a default its own kind accepts, or none when it is required', () => {
    const withDefault = FIELD_LIST.filter((spec) => spec.default !== undefined);
    expect(withDefault.map((spec) => acceptsManifestValue(spec, spec.default))).toEqual(
      withDefault.map(() => true),
    );
    const enums = FIELD_LIST.filter((spec) => spec.kind === 'enum');
    expect(enums.every((spec) => (spec.values?.length ?? 0) > 0)).toBe(true);
    // A field a manifest must give is one every listing carries: nothing to record for it.
    const required = FIELD_LIST.filter(
      (spec) => spec.default === undefined && spec.managed === 'always',
    );
    expect(required.map((spec) => spec.listing.absent)).not.toContain('omitted');
  });

  it('records exactly the fields a listing may leave out', () => {
    expect(RECORDED_FIELDS.map((spec) => spec.name)).toEqual(
      FIELD_LIST.filter((spec) => spec.listing.absent === 'omitted').map((spec) => spec.name),
    );
    expect(RECORDED_FIELDS.map((spec) => spec.name)).toEqual([
      'include_scaling',
      'policies',
      'require_provenance',
      'included_environments',
    ]);
  });

  it('builds every environment object with the name and every field of the registry, in order', () => {
    const env = environmentOf('prod', undefined, () => undefined);
    expect(Object.keys(env)).toEqual(['name', ...FIELD_LIST.map((spec) => spec.name)]);
    const seen: string[] = [];
    environmentOf('prod', 'source', (source, spec) => {
      expect(source).toBe('source');
      seen.push(spec.name);
      return undefined;
    });
    expect(seen).toEqual(FIELD_LIST.map((spec) => spec.name));
  });
});

describe('values by kind', () => {
  it.each([
    ['type', 'K8S', true],
    ['type', 'k8s', false],
    ['type', 'ECS', true],
    ['type', 'docker', true],
    ['type', 'Docker', false],
    ['type', 'mainframe', false],
    ['included_environments', ['a', 'b~1'], true],
    ['included_environments', ['a', 'a'], false],
    ['included_environments', ['a b'], false],
    ['require_provenance', true, true],
    ['require_provenance', null, false],
    ['type', 1, false],
    ['description', '', true],
    ['description', null, false],
    ['include_scaling', false, true],
    ['include_scaling', 'yes', false],
    ['policies', [], true],
    ['policies', ['a', 'b'], true],
    ['policies', ['a', 'a'], false],
    ['policies', ['a', 1], false],
    ['policies', 'a', false],
  ] as const)('a manifest %s of %j is accepted: %s', (field, value, expected) => {
    expect(acceptsManifestValue(FIELDS[field], value)).toBe(expected);
  });

  it.each([
    ['type', 'ECS', true],
    ['type', 'anything', true],
    ['type', false, false],
    ['policies', ['a', 'a'], true],
    ['policies', [null], false],
    ['include_scaling', true, true],
    ['include_scaling', 'true', false],
  ] as const)('a listed %s of %j is accepted: %s', (field, value, expected) => {
    expect(acceptsListedValue(FIELDS[field], value)).toBe(expected);
  });

  it('reads empty values by kind', () => {
    expect(emptyValue(FIELDS.description)).toBe('');
    expect(emptyValue(FIELDS.include_scaling)).toBe(false);
    expect(emptyValue(FIELDS.policies)).toEqual([]);
  });

  it.each([
    [[], []],
    [['a'], []],
    [['a', 'b', 'a'], [2]],
    [
      ['a', 'a', 'a'],
      [1, 2],
    ],
    [Array.from({ length: 20 }, (_, i) => `p${i % 18}`), [18, 19]],
  ])('repeatedIndexes(%j) is %j', (list, expected) => {
    expect(repeatedIndexes(list)).toEqual(expected);
  });

  it('compares sets as sets, and normalizes them sorted by code unit without duplicates', () => {
    expect(normalizeSet(['b', 'a', 'b', 'B'])).toEqual(['B', 'a', 'b']);
    expect(sameValue(FIELDS.policies, ['b', 'a'], ['a', 'b'])).toBe(true);
    expect(sameValue(FIELDS.policies, ['a', 'a'], ['a'])).toBe(true);
    expect(sameValue(FIELDS.policies, ['a'], ['a', 'b'])).toBe(false);
    expect(sameValue(FIELDS.description, 'a', 'a')).toBe(true);
    expect(sameValue(FIELDS.include_scaling, true, false)).toBe(false);
    expect(normalizeValue(FIELDS.policies, ['z', 'a'])).toEqual(['a', 'z']);
    expect(normalizeValue(FIELDS.description, 'z a')).toBe('z a');
  });

  it('shows values as JSON', () => {
    expect(showValue('a "b"')).toBe('"a \\"b\\""');
    expect(showValue(['a'])).toBe('["a"]');
    expect(showValue(null)).toBe('null');
  });
});
