import { describe, expect, it } from 'vitest';
import { diffEnvironment, fingerprint, keptValues, sentEnvironment } from '../../src/core/plan.ts';
import { desired, observedFull, observedSpec } from '../helpers/builders.ts';

describe('diffEnvironment', () => {
  const record = { include_scaling: false, policies: [] };
  const declared = { name: 'a', type: 'K8S', description: 'new' };
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
        fields: {
          type: { from: 'K8S', to: 'S3' },
          include_scaling: { from: null, to: false, notShown: true },
          policies: { from: null, to: [], notShown: true },
        },
        unknownFields: ['include_scaling', 'policies'],
      },
    ],
    [
      'fields a manifest leaves out: never compared, whatever the service holds',
      { ...declared, description: 'a environment' },
      observedFull('a', { include_scaling: true, policies: ['pci'] }),
      undefined,
      undefined,
    ],
    [
      'fields a manifest leaves out, not shown and never recorded: nothing unknown',
      declared,
      observedSpec('a'),
      undefined,
      { fields: { description: { from: 'a environment', to: 'new' } }, unknownFields: [] },
    ],
    [
      'the listing wins over the record',
      desired('a', { include_scaling: true }),
      observedFull('a', { include_scaling: true }),
      record,
      undefined,
    ],
    [
      'not listed: a create sends the declared fields from null, sets normalized',
      { ...declared, policies: ['b', 'a'] },
      undefined,
      record,
      {
        fields: {
          type: { from: null, to: 'K8S' },
          description: { from: null, to: 'new' },
          policies: { from: null, to: ['a', 'b'] },
        },
        unknownFields: [],
      },
    ],
  ])('%s', (_title, want, have, applied, expected) => {
    expect(diffEnvironment(want, have, applied)).toEqual(expected);
  });
});

// State files hold these strings (not_converged): their form must not change.
it('fingerprints keep the form state files hold; left-out fields keep their place as null', () => {
  expect(fingerprint(desired('a', { policies: ['b', 'a'] }))).toBe(
    '["K8S","a environment",false,["a","b"]]',
  );
  expect(fingerprint(observedSpec('a'))).toBe('["K8S","a environment",null,null]');
  expect(fingerprint({ type: 'K8S', description: '', require_provenance: true })).toBe(
    '["K8S","",null,null,["require_provenance",true]]',
  );
});

describe('what a PUT carries for the fields a manifest leaves out', () => {
  const declared = { name: 'a', type: 'K8S', description: 'new' };
  it.each([
    [
      'the listing shows them: their values, unchanged',
      declared,
      observedFull('a', { include_scaling: true, policies: ['pci'] }),
      { include_scaling: true, policies: ['pci'] },
    ],
    ['the listing does not show them: nothing', declared, observedSpec('a'), {}],
    [
      'a declared field is never replaced',
      { ...declared, include_scaling: true },
      observedFull('a', { description: 'old' }),
      { policies: [] },
    ],
    [
      'a field the type may not hold, though the listing shows it: never',
      declared,
      observedFull('a', { included_environments: [] }),
      { include_scaling: false, policies: [] },
    ],
    [
      'a field the type may hold: kept',
      { ...declared, type: 'logical' },
      observedFull('a', { type: 'logical', included_environments: ['b'] }),
      { include_scaling: false, policies: [], included_environments: ['b'] },
    ],
  ])('%s', (_title, want, listed, kept) => {
    expect(keptValues(want, listed)).toEqual(kept);
  });

  it('the PUT sends the declared values and the kept ones, only those its dialect sends by it', () => {
    const want = { ...declared, include_scaling: false };
    const listed = observedFull('a', {
      include_scaling: true,
      policies: ['pci'],
      tags: { a: 'b' },
    });
    const kept = keptValues(want, listed);
    expect(sentEnvironment({ desired: want, kept }, 'contract')).toEqual({
      ...want,
      policies: ['pci'],
    });
    // In the kosli dialect policies and tags go by their own operations, declared or kept, and
    // include_scaling, retired, by none.
    expect(sentEnvironment({ desired: want, kept }, 'kosli')).toEqual(declared);
    const tagged = { ...declared, policies: ['sox'], tags: { team: 'web' } };
    expect(sentEnvironment({ desired: tagged, kept: {} }, 'kosli')).toEqual(declared);
    expect(sentEnvironment({ desired: tagged, kept: {} }, 'contract')).toEqual({
      ...declared,
      policies: ['sox'],
    });
  });
});
