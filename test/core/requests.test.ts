import { describe, expect, it } from 'vitest';
import { FIELDS } from '../../src/core/fields.ts';
import type {
  ChangeRequests,
  DesiredEnvironment,
  FieldDiff,
  FieldDiffs,
} from '../../src/core/model.ts';
import { planOrg } from '../../src/core/plan.ts';
import {
  changeRequests,
  sameRequests,
  unsendableFields,
  unsendableMessage,
} from '../../src/core/requests.ts';
import { verifyChange } from '../../src/core/outcome.ts';
import { observedFull } from '../helpers/builders.ts';

const base: DesiredEnvironment = { name: 'prod', type: 'K8S', description: 'Production' };

/** The requests in one line: `put; patch x,y; attach a,b; detach c; set {"k":"v"}; remove d`. */
function said(requests: ChangeRequests): string {
  const { rename, put, patch, policies, tags } = requests;
  return [
    rename === undefined ? '' : `rename ${rename}`,
    put ? 'put' : '',
    patch === undefined ? '' : `patch ${patch.join()}`,
    policies === undefined
      ? ''
      : `attach ${policies.attach.join()}; detach ${policies.detach.join()}`,
    tags === undefined ? '' : `set ${JSON.stringify(tags.set)}; remove ${tags.remove.join()}`,
  ]
    .filter((part) => part !== '')
    .join('; ');
}

describe('changeRequests: how a change is sent, by dialect', () => {
  const diff = (from: unknown, to: unknown) => ({ from, to }) as FieldDiff;
  const create = (more: FieldDiffs): FieldDiffs => ({ type: diff(null, 'K8S'), ...more });
  it.each<[string, 'create' | 'update' | 'unverified', FieldDiffs, string, string]>([
    ['a create of plain fields: one PUT', 'create', create({}), 'put', 'put'],
    [
      'a create with policies: in kosli the PUT without them, then one attach of all',
      'create',
      create({ policies: diff(null, ['sox', 'pci']) }),
      'put',
      'put; attach pci,sox; detach ',
    ],
    [
      'a create with no policies sends no attach',
      'create',
      create({ policies: diff(null, []) }),
      'put',
      'put',
    ],
    [
      'policies alone: in kosli no PUT, one attach and one detach',
      'update',
      { policies: diff(['legacy', 'pci'], ['pci', 'sox', 'baseline']) },
      'put',
      'attach baseline,sox; detach legacy',
    ],
    ['only detaching', 'update', { policies: diff(['a', 'b'], []) }, 'put', 'attach ; detach a,b'],
    [
      'the description and policies: in kosli a PATCH, then the attach',
      'update',
      { description: diff('a', 'b'), policies: diff([], ['pci']) },
      'put',
      'patch description; attach pci; detach ',
    ],
    [
      'the type and the members: a PUT, and in kosli a PATCH of the members; a create, one PUT',
      'update',
      { type: diff('K8S', 'logical'), included_environments: diff([], ['a']) },
      'put',
      'put; patch included_environments',
    ],
    [
      'a create carries the PATCH fields in its PUT',
      'create',
      create({ description: diff(null, ''), included_environments: diff(null, ['a']) }),
      'put',
      'put',
    ],
    [
      'policies not shown by the service: attach all, nothing known to detach',
      'unverified',
      { policies: { from: null, to: ['pci'], notShown: true } },
      'put',
      'attach pci; detach ',
    ],
    [
      'tags: one PATCH that sets new and changed keys and removes the others',
      'update',
      {
        tags: diff(
          { env: 'staging', legacy: 'yes', team: 'web' },
          { env: 'production', owner: 'ops', team: 'web' },
        ),
      },
      '',
      'set {"env":"production","owner":"ops"}; remove legacy',
    ],
    [
      'tags: {} removes every tag',
      'update',
      { tags: diff({ a: '1', b: '2' }, {}) },
      '',
      'set {}; remove a,b',
    ],
    [
      'a create with tags: the PUT, then the PATCH',
      'create',
      create({ tags: diff(null, { team: 'web' }) }),
      'put',
      'put; set {"team":"web"}; remove ',
    ],
  ])('%s', (_title, action, fields, contract, kosli) => {
    expect(said(changeRequests(action, fields, 'kosli'))).toBe(kosli);
    // The contract sends everything by the PUT (tags never reach a plan there: refused first).
    expect(said(changeRequests(action, fields, 'contract'))).toBe(contract);
  });

  it('sets the ownership tag, sorted among the others, and never removes it', () => {
    const owner = { key: 'managed-by', value: 'envsync/acme' };
    const fields = { tags: { from: { 'managed-by': 'x', z: '1' }, to: { a: '1' } } };
    expect(
      said(changeRequests('update', fields, 'kosli', { ownerTag: owner, renameFrom: 'old' })),
    ).toBe('rename old; set {"a":"1","managed-by":"envsync/acme"}; remove z');
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
});

describe('planOrg in each dialect', () => {
  const listed = observedFull('prod', {
    description: 'Production',
    policies: ['legacy', 'pci'],
    tags: { env: 'staging', legacy: 'yes' },
  });
  const want = { ...base, policies: ['pci', 'sox'], tags: { env: 'production', team: 'platform' } };

  it('kosli: policies and tags through their operations, no PUT when nothing else differs', () => {
    const plan = planOrg('acme', [want], [listed], {}, 'kosli');
    expect(plan.dialect).toBe('kosli');
    expect(plan.changes.map((c) => [c.action, c.fields, said(c.requests)])).toEqual([
      [
        'update',
        {
          policies: { from: ['legacy', 'pci'], to: ['pci', 'sox'] },
          tags: { from: { env: 'staging', legacy: 'yes' }, to: want.tags },
        },
        'attach sox; detach legacy; set {"env":"production","team":"platform"}; remove legacy',
      ],
    ]);
    // Unchanged when the listing shows the same sets and maps, in any order.
    const same = { policies: ['sox', 'pci'], tags: { team: 'platform', env: 'production' } };
    const again = planOrg('acme', [want], [{ ...listed, ...same }], {}, 'kosli');
    expect(again.unchanged).toEqual(['prod']);
    // A manifest that leaves tags out never compares them.
    const { tags: _left, ...untagged } = want;
    const left = planOrg('acme', [untagged], [listed], {}, 'kosli').changes[0];
    expect([left?.fields.tags, left?.requests.tags]).toEqual([undefined, undefined]);
  });

  it('verify covers policies and tags the listing shows after the requests', () => {
    const change = planOrg('acme', [want], [listed], {}, 'kosli').changes[0];
    if (change === undefined) throw new Error('expected a change');
    const after = (more: object) => verifyChange(change, { ...listed, ...more });
    expect(
      after({ policies: ['sox', 'pci'], tags: { team: 'platform', env: 'production' } }),
    ).toBeUndefined();
    expect(after({ policies: ['pci'], tags: {} })).toMatch(
      /^the service did not take policies \(sent \["pci","sox"\], it keeps \["pci"\]\), tags \(sent .*, it keeps \{\}\);/,
    );
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
