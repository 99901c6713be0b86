import { describe, expect, it } from 'vitest';
import { FIELDS, mapChanges } from '../../src/core/fields.ts';
import type { DesiredEnvironment, FieldDiffs } from '../../src/core/model.ts';
import { planOrg } from '../../src/core/plan.ts';
import {
  changeRequests,
  sameRequests,
  unsendableFields,
  unsendableMessage,
} from '../../src/core/requests.ts';
import { verifyChange } from '../../src/core/outcome.ts';
import { observedFull, observedSpec } from '../helpers/builders.ts';

const base: DesiredEnvironment = { name: 'prod', type: 'K8S', description: 'Production' };

describe('changeRequests: how a change is sent, by dialect', () => {
  it.each<{
    title: string;
    action: 'create' | 'update' | 'unverified';
    fields: FieldDiffs;
    contract: object;
    kosli: object;
  }>([
    {
      title: 'a create of plain fields: one PUT',
      action: 'create',
      fields: { type: { from: null, to: 'K8S' }, description: { from: null, to: 'P' } },
      contract: { put: true },
      kosli: { put: true },
    },
    {
      title: 'a create with policies: a PUT; in kosli without them, then one attach of all',
      action: 'create',
      fields: { type: { from: null, to: 'K8S' }, policies: { from: null, to: ['sox', 'pci'] } },
      contract: { put: true },
      kosli: { put: true, policies: { attach: ['pci', 'sox'], detach: [] } },
    },
    {
      title: 'a create with no policies sends no attach',
      action: 'create',
      fields: { type: { from: null, to: 'K8S' }, policies: { from: null, to: [] } },
      contract: { put: true },
      kosli: { put: true },
    },
    {
      title: 'policies alone: in kosli no PUT, one attach and one detach',
      action: 'update',
      fields: { policies: { from: ['legacy', 'pci'], to: ['pci', 'sox', 'baseline'] } },
      contract: { put: true },
      kosli: { put: false, policies: { attach: ['baseline', 'sox'], detach: ['legacy'] } },
    },
    {
      title: 'only detaching',
      action: 'update',
      fields: { policies: { from: ['a', 'b'], to: [] } },
      contract: { put: true },
      kosli: { put: false, policies: { attach: [], detach: ['a', 'b'] } },
    },
    {
      title: 'the description and policies: a PUT, then the attach',
      action: 'update',
      fields: {
        description: { from: 'a', to: 'b' },
        policies: { from: [], to: ['pci'] },
      },
      contract: { put: true },
      kosli: { put: true, policies: { attach: ['pci'], detach: [] } },
    },
    {
      title: 'policies not shown by the service: attach all, nothing known to detach',
      action: 'unverified',
      fields: { policies: { from: null, to: ['pci'], notShown: true } },
      contract: { put: true },
      kosli: { put: false, policies: { attach: ['pci'], detach: [] } },
    },
    {
      title: 'tags: one PATCH that sets new and changed keys and removes the others',
      action: 'update',
      fields: {
        tags: {
          from: { env: 'staging', legacy: 'yes', team: 'web' },
          to: { env: 'production', owner: 'ops', team: 'web' },
        },
      },
      contract: { put: false },
      kosli: {
        put: false,
        tags: { set: { env: 'production', owner: 'ops' }, remove: ['legacy'] },
      },
    },
    {
      title: 'tags: {} removes every tag',
      action: 'update',
      fields: { tags: { from: { a: '1', b: '2' }, to: {} } },
      contract: { put: false },
      kosli: { put: false, tags: { set: {}, remove: ['a', 'b'] } },
    },
    {
      title: 'a create with tags: the PUT, then the PATCH',
      action: 'create',
      fields: { type: { from: null, to: 'S3' }, tags: { from: null, to: { team: 'web' } } },
      contract: { put: true },
      kosli: { put: true, tags: { set: { team: 'web' }, remove: [] } },
    },
  ])('$title', ({ action, fields, contract, kosli }) => {
    expect(changeRequests(action, fields, 'kosli')).toEqual(kosli);
    // The contract sends everything by the PUT (tags never reach a plan there: refused first).
    expect(changeRequests(action, fields, 'contract')).toEqual(contract);
  });

  it('compares requests exactly', () => {
    const one = { put: true, policies: { attach: ['a'], detach: [] } };
    expect(sameRequests(one, { put: true, policies: { attach: ['a'], detach: [] } })).toBe(true);
    expect(sameRequests(one, { put: false, policies: { attach: ['a'], detach: [] } })).toBe(false);
    expect(sameRequests(one, { put: true })).toBe(false);
    expect(
      sameRequests({ put: false, tags: { set: { a: '1' }, remove: [] } }, { put: false }),
    ).toBe(false);
  });

  it('mapChanges: set what is new or changed, remove what is extra, keys sorted', () => {
    expect(mapChanges({ b: '1', a: '2', c: '3' }, { c: '3', b: '9', z: '' })).toEqual({
      set: { b: '9', z: '' },
      remove: ['a'],
    });
    expect(mapChanges({}, {})).toEqual({ set: {}, remove: [] });
  });
});

describe('planOrg in each dialect', () => {
  const listed = observedFull('prod', {
    description: 'Production',
    policies: ['legacy', 'pci'],
    tags: { env: 'staging', legacy: 'yes' },
  });
  const want = {
    ...base,
    policies: ['pci', 'sox'],
    tags: { env: 'production', team: 'platform' },
  };

  it('kosli: policies and tags through their operations, no PUT when nothing else differs', () => {
    const plan = planOrg('acme', [want], [listed], {}, 'kosli');
    expect(plan.dialect).toBe('kosli');
    expect(plan.changes).toEqual([
      expect.objectContaining({
        action: 'update',
        fields: {
          policies: { from: ['legacy', 'pci'], to: ['pci', 'sox'] },
          tags: {
            from: { env: 'staging', legacy: 'yes' },
            to: { env: 'production', team: 'platform' },
          },
        },
        requests: {
          put: false,
          policies: { attach: ['sox'], detach: ['legacy'] },
          tags: { set: { env: 'production', team: 'platform' }, remove: ['legacy'] },
        },
      }),
    ]);
  });

  it('kosli: unchanged when the listing shows the same sets and maps, in any order', () => {
    const same = observedFull('prod', {
      description: 'Production',
      policies: ['sox', 'pci'],
      tags: { team: 'platform', env: 'production' },
    });
    expect(planOrg('acme', [want], [same], {}, 'kosli')).toMatchObject({
      changes: [],
      unchanged: ['prod'],
    });
  });

  it('a manifest that leaves tags out never compares them', () => {
    const { tags: _left, ...untagged } = want;
    const plan = planOrg('acme', [untagged], [listed], {}, 'kosli');
    expect(plan.changes[0]?.fields).not.toHaveProperty('tags');
    expect(plan.changes[0]?.requests).not.toHaveProperty('tags');
  });

  it('contract: policies stay in the PUT (the default dialect of the planner)', () => {
    const plan = planOrg(
      'acme',
      [{ ...base, policies: ['pci'] }],
      [observedSpec('prod', { description: 'Production' })],
      {
        prod: { policies: ['legacy'] },
      },
    );
    expect(plan.dialect).toBe('contract');
    expect(plan.changes[0]).toMatchObject({
      fields: { policies: { from: ['legacy'], to: ['pci'] } },
      requests: { put: true },
    });
    expect(plan.changes[0]?.requests).not.toHaveProperty('policies');
  });

  it('verify covers policies and tags the listing shows after the requests', () => {
    const change = planOrg('acme', [want], [listed], {}, 'kosli').changes[0];
    if (change === undefined) throw new Error('expected a change');
    expect(
      verifyChange(
        change,
        observedFull('prod', {
          description: 'Production',
          policies: ['pci', 'sox'],
          tags: { team: 'platform', env: 'production' },
        }),
      ),
    ).toEqual({ converged: true });
    expect(
      verifyChange(
        change,
        observedFull('prod', { description: 'Production', policies: ['pci'], tags: {} }),
      ),
    ).toMatchObject({ converged: false, fields: ['policies', 'tags'] });
  });
});

describe('fields a dialect cannot send', () => {
  it('finds declared tags in the contract dialect, and nothing in kosli', () => {
    const tagged = { ...base, name: 'web', tags: {} };
    const plain = { ...base, policies: ['pci'] };
    expect(unsendableFields([plain, tagged], 'contract')).toEqual([
      { env: tagged, spec: FIELDS.tags },
    ]);
    expect(unsendableFields([plain, tagged], 'kosli')).toEqual([]);
  });

  it('names the key, the dialect and where it comes from, and the way out', () => {
    expect(unsendableMessage(FIELDS.tags, { dialect: 'contract', from: 'setting' })).toBe(
      '"tags" cannot be sent in the API dialect contract (set by --api-dialect), which has no operation for it: ' +
        'it needs the kosli dialect (--api-dialect kosli, or auto against a service whose listing has that shape). ' +
        'Remove the key or change the dialect; nothing is sent to this org',
    );
    expect(unsendableMessage(FIELDS.tags, { dialect: 'contract', from: 'listing' })).toContain(
      "API dialect contract (auto: read from the listing's shape)",
    );
  });
});
