import { describe, expect, it } from 'vitest';
import {
  emptyValue,
  environmentOf,
  FIELD_LIST,
  FIELDS,
  normalizeSet,
  normalizeValue,
  RECORDED_FIELDS,
  repeatedIndexes,
  sameValue,
  showValue,
} from '../../src/core/fields.ts';
import { readListing } from '../../src/api/listing.ts';
import { manifestSchema } from '../../src/manifests/schema.ts';

describe('the field registry', () => {
  it('names each field once, with distinct manifest keys and wire names, never `name`', () => {
    for (const [key, spec] of Object.entries(FIELDS)) expect(spec.name).toBe(key);
    for (const keys of [FIELD_LIST.map((f) => f.manifestKey), FIELD_LIST.map((f) => f.wireName)]) {
      expect(new Set(keys).size).toBe(FIELD_LIST.length);
      expect(keys).not.toContain('name');
    }
  });

  it('gives every enum its values; what a manifest must give, every listing carries', () => {
    const enums = FIELD_LIST.filter((spec) => spec.kind === 'enum');
    expect(enums.every((spec) => (spec.values?.length ?? 0) > 0)).toBe(true);
    const required = FIELD_LIST.filter((spec) => spec.managed === 'always');
    expect(required.map((spec) => spec.listing.absent)).not.toContain('omitted');
    expect(RECORDED_FIELDS.map((spec) => spec.name).join(' ')).toBe(
      'include_scaling policies require_provenance included_environments tags',
    );
  });

  it('builds every environment object with the name and every field of the registry, in order', () => {
    const seen: string[] = [];
    const env = environmentOf('prod', 'source', (source, spec) => {
      expect(source).toBe('source');
      seen.push(spec.name);
      return undefined;
    });
    expect(Object.keys(env)).toEqual(['name', ...seen]);
    expect(seen).toEqual(FIELD_LIST.map((spec) => spec.name));
  });
});

describe('values by kind', () => {
  it.each([
    ['type', 'K8S', true],
    ['type', 'k8s', false],
    ['type', 'Docker', false],
    ['included_environments', ['a', 'b.1'], true],
    ['included_environments', ['b~1'], false],
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
    ['policies', ['a', 'a'], false],
    ['policies', ['a', 1], false],
    ['policies', 'a', false],
    ['tags', {}, true],
    ['tags', { team: 'platform', env: '' }, true],
    ['tags', { team: 1 }, false],
    ['tags', { ['k'.repeat(256)]: 'v'.repeat(256) }, true],
    ['tags', { ['k'.repeat(257)]: 'v' }, false],
    ['tags', ['a'], false],
    ['tags', null, false],
  ] as const)('a manifest %s of %j is accepted: %s', (field, value, expected) => {
    const env: Record<string, unknown> = {
      name: 'x',
      type: field === 'included_environments' ? 'logical' : 'K8S',
      description: 'd',
      [FIELDS[field].manifestKey]: value,
    };
    const result = manifestSchema.safeParse({ org: 'acme', environments: [env] });
    expect(result.success).toBe(expected);
  });

  it.each([
    ['type', 'ECS', true],
    ['type', 'anything', true],
    ['type', false, false],
    ['policies', ['a', 'a'], true],
    ['policies', [null], false],
    ['include_scaling', true, true],
    ['include_scaling', 'true', false],
    ['tags', {}, true],
    ['tags', { ['k'.repeat(300)]: '' }, true],
    ['tags', { a: 1 }, false],
    ['tags', [], false],
  ] as const)('a listed %s of %j is accepted: %s', (field, value, expected) => {
    const entry = { name: 'x', type: 'K8S', description: '', [FIELDS[field].wireName]: value };
    // An entry that names an environment but is not one is the service's placeholder.
    const { environments, placeholders } = readListing([entry], 'acme');
    expect([environments.length, placeholders]).toEqual(expected ? [1, []] : [0, ['x']]);
  });

  it('reads empty values by kind', () => {
    expect(
      [FIELDS.description, FIELDS.include_scaling, FIELDS.policies, FIELDS.tags].map(emptyValue),
    ).toEqual(['', false, [], {}]);
  });

  it.each([
    [FIELDS.tags, { a: '1', b: '2' }, { b: '2', a: '1' }, true],
    [FIELDS.tags, { a: '1' }, { a: '1', b: '2' }, false],
    [FIELDS.tags, { a: '1', b: '2' }, { a: '1' }, false],
    [FIELDS.tags, { a: '1' }, { a: '2' }, false],
    [FIELDS.tags, { a: '' }, { b: '' }, false],
    [FIELDS.policies, ['b', 'a'], ['a', 'b'], true],
    [FIELDS.policies, ['a', 'a'], ['a'], true],
    [FIELDS.policies, ['a'], ['a', 'b'], false],
    [FIELDS.description, 'a', 'a', true],
    [FIELDS.include_scaling, true, false, false],
  ] as const)('a %s of %j and one of %j mean the same: %s', (spec, a, b, same) => {
    expect(sameValue(spec, a, b)).toBe(same);
  });

  it('normalizes sets sorted by code unit without duplicates, and maps with sorted keys', () => {
    expect(normalizeSet(['b', 'a', 'b', 'B'])).toEqual(['B', 'a', 'b']);
    expect(normalizeValue(FIELDS.policies, ['z', 'a'])).toEqual(['a', 'z']);
    expect(normalizeValue(FIELDS.description, 'z a')).toBe('z a');
    const map = normalizeValue(FIELDS.tags, { z: '1', a: '2', B: '3' });
    expect(Object.keys(map)).toEqual(['B', 'a', 'z']);
    // A key named like an Object property stays an ordinary key.
    const odd = JSON.parse('{"__proto__": "x", "a": "y"}') as Record<string, string>;
    expect(showValue(normalizeValue(FIELDS.tags, odd))).toBe('{"__proto__":"x","a":"y"}');
    expect(showValue(null)).toBe('null');
  });

  it.each([
    [[], []],
    [['a', 'b', 'a'], [2]],
    [
      ['a', 'a', 'a'],
      [1, 2],
    ],
    [Array.from({ length: 20 }, (_, i) => `p${i % 18}`), [18, 19]],
  ])('repeatedIndexes(%j) is %j', (list, expected) => {
    expect(repeatedIndexes(list)).toEqual(expected);
  });
});
