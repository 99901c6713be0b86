import { describe, expect, it } from 'vitest';
import { createdFields, diffEnvironment, fingerprint } from '../../src/core/diff.ts';
import { desired, observedFull, observedSpec } from '../helpers/builders.ts';

describe('diffEnvironment', () => {
  const record = { include_scaling: false, policies: [] };
  it.each([
    ['everything known and equal', desired('a'), observedFull('a'), undefined, undefined],
    ['known from the state file', desired('a'), observedSpec('a'), record, undefined],
    [
      'a description that differs',
      desired('a', { description: 'new' }),
      observedFull('a', { description: 'old' }),
      undefined,
      { fields: { description: { from: 'old', to: 'new' } }, unknownFields: [] },
    ],
    [
      'policies differing from the record, listing silent',
      desired('a', { policies: ['x', 'y'] }),
      observedSpec('a'),
      { include_scaling: false, policies: ['y'] },
      { fields: { policies: { from: ['y'], to: ['x', 'y'] } }, unknownFields: [] },
    ],
    [
      'nothing known of the recorded fields',
      desired('a', { type: 'S3' }),
      observedSpec('a'),
      undefined,
      {
        fields: { type: { from: 'K8S', to: 'S3' } },
        unknownFields: ['include_scaling', 'policies'],
      },
    ],
    [
      'the listing wins over the record',
      desired('a', { include_scaling: true }),
      observedFull('a', { include_scaling: true }),
      { include_scaling: false, policies: [] },
      undefined,
    ],
  ])('%s', (_title, want, have, applied, expected) => {
    expect(diffEnvironment(want, have, applied)).toEqual(expected);
  });

  it('creates every field from null, sets normalized', () => {
    expect(createdFields(desired('a', { policies: ['b', 'a'] }))).toEqual({
      type: { from: null, to: 'K8S' },
      description: { from: null, to: 'a environment' },
      include_scaling: { from: null, to: false },
      policies: { from: null, to: ['a', 'b'] },
    });
  });
});

describe('fingerprints', () => {
  // State files hold these strings (not_converged): their form must not change.
  it('keep the form state files hold', () => {
    expect(fingerprint(desired('a', { policies: ['b', 'a'] }))).toBe(
      '["K8S","a environment",false,["a","b"]]',
    );
    expect(fingerprint(observedSpec('a'))).toBe('["K8S","a environment",null,null]');
    expect(fingerprint(observedFull('a', { include_scaling: true }))).toBe(
      '["K8S","a environment",true,[]]',
    );
  });
});
