import { describe, expect, it } from 'vitest';
import {
  createdFields,
  diffEnvironment,
  fingerprint,
  keptValues,
  sentEnvironment,
} from '../../src/core/plan.ts';
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
      { name: 'a', type: 'K8S', description: 'a environment' },
      observedFull('a', { include_scaling: true, policies: ['pci'] }),
      undefined,
      undefined,
    ],
    [
      'fields a manifest leaves out, not shown and never recorded: nothing unknown',
      { name: 'a', type: 'K8S', description: 'new' },
      observedSpec('a'),
      undefined,
      { fields: { description: { from: 'a environment', to: 'new' } }, unknownFields: [] },
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

  it('a create sends only the declared fields', () => {
    expect(createdFields({ name: 'a', type: 'S3', description: '' })).toEqual({
      type: { from: null, to: 'S3' },
      description: { from: null, to: '' },
    });
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
    // Fields a manifest leaves out keep their place, as null.
    expect(fingerprint({ type: 'K8S', description: '' })).toBe('["K8S","",null,null]');
  });
});

describe('what a PUT carries for the fields a manifest leaves out', () => {
  const declared = { name: 'a', type: 'K8S', description: 'new' };
  it.each([
    [
      'the listing shows them: their values, unchanged',
      observedFull('a', { include_scaling: true, policies: ['pci'] }),
      { include_scaling: true, policies: ['pci'] },
    ],
    ['the listing does not show them: nothing', observedSpec('a'), {}],
    [
      'a declared field is never replaced',
      observedFull('a', { description: 'old' }),
      { include_scaling: false, policies: [] },
    ],
  ])('%s', (_title, listed, kept) => {
    expect(keptValues(declared, listed)).toEqual(kept);
  });

  it('never carries a field the type may not hold, though the listing shows it', () => {
    expect(keptValues(declared, observedFull('a', { included_environments: [] }))).toEqual({
      include_scaling: false,
      policies: [],
    });
    expect(
      keptValues(
        { ...declared, type: 'logical' },
        observedFull('a', { type: 'logical', included_environments: ['b'] }),
      ),
    ).toEqual({ include_scaling: false, policies: [], included_environments: ['b'] });
  });

  it('the PUT sends the declared values, and the kept ones for the rest', () => {
    const kept = keptValues(
      { ...declared, include_scaling: false },
      observedFull('a', { include_scaling: true, policies: ['pci'] }),
    );
    expect(
      sentEnvironment({ desired: { ...declared, include_scaling: false }, kept }, 'contract'),
    ).toEqual({
      ...declared,
      include_scaling: false,
      policies: ['pci'],
    });
  });

  it('in the kosli dialect the PUT never carries policies or tags, declared or kept', () => {
    const want = { ...declared, policies: ['sox'], tags: { team: 'web' } };
    const kept = keptValues(
      { ...declared, include_scaling: false },
      observedFull('a', { include_scaling: true, policies: ['pci'], tags: { a: 'b' } }),
    );
    expect(kept).toEqual({ policies: ['pci'], tags: { a: 'b' } });
    expect(sentEnvironment({ desired: want, kept: {} }, 'kosli')).toEqual(declared);
    expect(
      sentEnvironment({ desired: { ...declared, include_scaling: false }, kept }, 'kosli'),
    ).toEqual({ ...declared, include_scaling: false });
    // The contract sends policies by the PUT; tags never go in a PUT body.
    expect(sentEnvironment({ desired: want, kept: {} }, 'contract')).toEqual({
      ...declared,
      policies: ['sox'],
    });
  });
});
