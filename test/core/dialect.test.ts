import { describe, expect, it } from 'vitest';
import {
  describeDialect,
  dialectOfShape,
  dialectWords,
  resolveDialect,
} from '../../src/core/dialect.ts';

describe('the API dialect', () => {
  it.each([
    ['env', 'contract'],
    ['array', 'kosli'],
    ['envelope', 'kosli'],
  ] as const)('a listing shaped as %s says %s', (shape, dialect) => {
    expect(dialectOfShape(shape)).toBe(dialect);
  });

  it.each([
    ['auto', undefined, undefined],
    ['auto', 'env', { dialect: 'contract', from: 'listing' }],
    ['auto', 'array', { dialect: 'kosli', from: 'listing' }],
    ['auto', 'envelope', { dialect: 'kosli', from: 'listing' }],
    ['contract', undefined, { dialect: 'contract', from: 'setting' }],
    ['contract', 'array', { dialect: 'contract', from: 'setting' }],
    ['kosli', 'env', { dialect: 'kosli', from: 'setting' }],
  ] as const)('--api-dialect %s, first listing %s: %o', (setting, shape, resolved) => {
    expect(resolveDialect(setting, shape)).toEqual(resolved);
  });

  it('says why, and says when the setting disagrees with the listing', () => {
    expect(describeDialect({ dialect: 'kosli', from: 'listing' }, 'envelope')).toBe(
      'API dialect kosli (auto: the listing is a paged envelope)',
    );
    expect(describeDialect({ dialect: 'kosli', from: 'setting' }, 'array')).toBe(
      'API dialect kosli (--api-dialect)',
    );
    expect(describeDialect({ dialect: 'contract', from: 'setting' }, 'array')).toBe(
      "API dialect contract (--api-dialect, although the listing is a bare array, which is kosli's shape)",
    );
    expect(dialectWords({ dialect: 'contract', from: 'listing' })).toBe(
      "contract (auto: read from the listing's shape)",
    );
  });
});
