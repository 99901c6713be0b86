import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  appliedFingerprint,
  changeCause,
  confirmedRecords,
  type DriftSeen,
  fingerprint,
  MAX_RECENT_DRIFTS,
  planOrg,
  recentDrifts,
} from '../../src/core/plan.ts';
import type { AppliedRecord, DesiredEnvironment } from '../../src/core/model.ts';
import type { ChangeReport } from '../../src/core/report.ts';
import { desired, observedFull, observedSpec } from '../helpers/builders.ts';

/** What the manifest said when envsync last applied `prod`. */
const BEFORE = desired('prod', { description: 'Production', policies: ['pci'] });
/** The record envsync kept of that apply. */
const APPLIED: AppliedRecord = {
  include_scaling: false,
  policies: ['pci'],
  fingerprint: appliedFingerprint(BEFORE),
};

describe('drift or change: what planOrg names each change', () => {
  it.each([
    {
      title: 'a create is never drift, even with a record of the same manifest',
      want: BEFORE,
      listed: [],
      record: APPLIED,
      action: 'create',
      cause: 'change',
    },
    {
      title: 'an environment envsync never applied (no record) is a change',
      want: BEFORE,
      listed: [observedFull('prod', { description: 'edited', policies: ['pci'] })],
      record: undefined,
      action: 'update',
      cause: 'change',
    },
    {
      title: 'the manifest changed, the service did not: a change',
      want: { ...BEFORE, description: 'Production, new' },
      listed: [observedFull('prod', { description: 'Production', policies: ['pci'] })],
      record: APPLIED,
      action: 'update',
      cause: 'change',
    },
    {
      title: 'the service changed, the manifest did not: drift',
      want: BEFORE,
      listed: [observedFull('prod', { description: 'edited', policies: ['pci'] })],
      record: APPLIED,
      action: 'update',
      cause: 'drift',
    },
    {
      title: 'the service changed in several fields, the manifest in none: drift',
      want: BEFORE,
      listed: [observedFull('prod', { type: 'S3', description: 'edited', policies: [] })],
      record: APPLIED,
      action: 'update',
      cause: 'drift',
    },
    {
      title: 'drift seen through a listing that hides policies (the spec profile): drift',
      want: BEFORE,
      listed: [observedSpec('prod', { description: 'edited' })],
      record: APPLIED,
      action: 'update',
      cause: 'drift',
    },
    {
      title: 'both changed, in the same field: a change',
      want: { ...BEFORE, description: 'Production, new' },
      listed: [observedFull('prod', { description: 'edited', policies: ['pci'] })],
      record: APPLIED,
      action: 'update',
      cause: 'change',
    },
    {
      title: 'both changed, in different fields (partly drifted): a change',
      want: { ...BEFORE, policies: ['pci', 'sox'] },
      listed: [observedFull('prod', { description: 'edited', policies: ['pci'] })],
      record: APPLIED,
      action: 'update',
      cause: 'change',
    },
    {
      title: 'a record from a state file without fingerprints: unknown, a change',
      want: BEFORE,
      listed: [observedFull('prod', { description: 'edited', policies: ['pci'] })],
      record: { include_scaling: false, policies: ['pci'] },
      action: 'update',
      cause: 'change',
    },
    {
      title: 'an unverified change is never drift (nothing was seen to differ)',
      want: { ...BEFORE, require_provenance: true },
      listed: [observedSpec('prod', { description: 'Production' })],
      record: {
        ...APPLIED,
        fingerprint: appliedFingerprint({ ...BEFORE, require_provenance: true }),
      },
      action: 'unverified',
      cause: 'change',
    },
  ] as const)('$title', ({ want, listed, record, action, cause }) => {
    const plan = planOrg('acme', [want], listed, record === undefined ? {} : { prod: record });
    expect(plan.changes).toHaveLength(1);
    expect(plan.changes[0]).toMatchObject({ action, cause });
    // The same decision, asked directly.
    expect(changeCause(action, want, record)).toBe(cause);
  });

  it('an unchanged environment is no change at all, whatever its record says', () => {
    const plan = planOrg(
      'acme',
      [BEFORE],
      [observedFull('prod', { description: 'Production', policies: ['pci'] })],
      { prod: APPLIED },
    );
    expect(plan).toMatchObject({ changes: [], unchanged: ['prod'] });
  });
});

describe('confirmedRecords: the fingerprint back when the service is seen as declared', () => {
  /** A manifest that leaves include_scaling out. */
  const LEFT_OUT: DesiredEnvironment = {
    name: 'prod',
    type: 'K8S',
    description: 'Production',
    policies: [],
  };
  const NOW = BEFORE;
  const FP = appliedFingerprint(NOW);
  const declared = observedFull('prod', { description: 'Production', policies: ['pci'] });
  const stuck = { desired: 'sent', observed: 'kept' };
  it.each([
    {
      title: 'a record a crash left without its fingerprint (the PUT landed): restored',
      want: NOW,
      listed: declared,
      record: { include_scaling: false, policies: ['pci'] } as AppliedRecord,
      confirmed: { include_scaling: false, policies: ['pci'], fingerprint: FP },
    },
    {
      title:
        "a record with another manifest's fingerprint (the service was set as declared): replaced",
      want: NOW,
      listed: declared,
      record: { ...APPLIED, fingerprint: 12345 },
      confirmed: { ...APPLIED, fingerprint: FP },
    },
    {
      title: 'a record that already has it: nothing to do',
      want: NOW,
      listed: declared,
      record: APPLIED,
      confirmed: undefined,
    },
    {
      title: 'no record: none is made (the records are the inventory prune reads)',
      want: NOW,
      listed: declared,
      record: undefined,
      confirmed: undefined,
    },
    {
      title: 'a record cut down to what it knew (no values): restored, its values as they were',
      want: NOW,
      listed: declared,
      record: {},
      confirmed: { fingerprint: FP },
    },
    {
      title: 'a field the listing does not show (spec), held by the record as declared: restored',
      want: NOW,
      listed: observedSpec('prod', { description: 'Production' }),
      record: { include_scaling: false, policies: ['pci'] } as AppliedRecord,
      confirmed: { include_scaling: false, policies: ['pci'], fingerprint: FP },
    },
    {
      title: 'a field the listing does not show, and the record does not hold: unverified, nothing',
      want: NOW,
      listed: observedSpec('prod', { description: 'Production' }),
      record: { include_scaling: false } as AppliedRecord,
      confirmed: undefined,
    },
    {
      title: 'the service differs (a change is planned): nothing',
      want: NOW,
      listed: observedFull('prod', { description: 'edited', policies: ['pci'] }),
      record: { include_scaling: false, policies: ['pci'] } as AppliedRecord,
      confirmed: undefined,
    },
    {
      title: 'a value of a field the manifest leaves out stays in the record, untouched',
      want: LEFT_OUT,
      listed: observedFull('prod', { description: 'Production', include_scaling: true }),
      record: { include_scaling: false, policies: [], require_provenance: true } as AppliedRecord,
      confirmed: {
        include_scaling: false,
        policies: [],
        require_provenance: true,
        fingerprint: appliedFingerprint(LEFT_OUT),
      },
    },
    {
      title: 'a mark of a change that did not take goes: the service is seen holding it',
      want: NOW,
      listed: declared,
      record: { ...APPLIED, notConverged: stuck },
      confirmed: APPLIED,
    },
  ])('$title', ({ want, listed, record, confirmed }) => {
    const records = record === undefined ? {} : { prod: record };
    const plan = planOrg('acme', [want], [listed], records);
    const lookup = (name: string) => (Object.hasOwn(records, name) ? records.prod : undefined);
    const restored = confirmedRecords([want], plan.unchanged, lookup);
    expect(restored === undefined ? undefined : { ...restored }).toEqual(
      confirmed === undefined ? undefined : { prod: confirmed },
    );
  });

  it('after a crash left the record without it, a hand edit is drift once a pass has seen the service as declared', () => {
    const inDoubt: AppliedRecord = { include_scaling: false, policies: ['pci'] };
    const asDeclared = observedSpec('prod', { description: 'Production' });
    const edited = observedSpec('prod', { description: 'edited by hand' });
    // Without the pass that confirms it: a change.
    expect(planOrg('acme', [NOW], [edited], { prod: inDoubt }).changes[0]?.cause).toBe('change');
    // The pass that finds the service as declared, then the edit: drift.
    const pass = planOrg('acme', [NOW], [asDeclared], { prod: inDoubt });
    expect(pass.changes).toEqual([]);
    const confirmed = confirmedRecords([NOW], pass.unchanged, () => inDoubt);
    expect(confirmed?.['prod']?.fingerprint).toBe(FP);
    const after = planOrg('acme', [NOW], [edited], { ...confirmed });
    expect(after.changes.map((c) => [c.name, c.action, c.cause])).toEqual([
      ['prod', 'update', 'drift'],
    ]);
  });

  it("walks the plan's unchanged names in the order planOrg gives them, whatever the order given", () => {
    const envs = ['c', 'a', 'b'].map((name) => desired(name));
    const plan = planOrg(
      'acme',
      envs,
      envs.map((env) => observedFull(env.name, { description: env.description })),
      { a: {}, b: {}, c: {} },
    );
    expect(plan.unchanged).toEqual(['a', 'b', 'c']);
    const confirmed = confirmedRecords(envs, plan.unchanged, () => ({}));
    expect(Object.keys(confirmed ?? {}).sort()).toEqual(['a', 'b', 'c']);
  });
});

describe('appliedFingerprint', () => {
  const env: fc.Arbitrary<DesiredEnvironment> = fc.record(
    {
      name: fc.constant('prod'),
      type: fc.constantFrom('K8S', 'S3', 'logical'),
      description: fc.string({ maxLength: 20 }),
      include_scaling: fc.boolean(),
      policies: fc
        .uniqueArray(fc.constantFrom('pci', 'sox', 'baseline'), { maxLength: 3 })
        .map((p) => p.sort()),
      require_provenance: fc.boolean(),
    },
    { requiredKeys: ['name', 'type', 'description', 'include_scaling', 'policies'] },
  );

  it('is a safe integer, the same for the same environment, another for another', () => {
    fc.assert(
      fc.property(env, env, (a, b) => {
        const x = appliedFingerprint(a);
        expect(Number.isSafeInteger(x) && x >= 0).toBe(true);
        expect(appliedFingerprint({ ...a })).toBe(x);
        expect(appliedFingerprint(b) === x).toBe(fingerprint(a) === fingerprint(b));
      }),
    );
  });

  it('does not depend on the order of a set', () => {
    expect(appliedFingerprint({ ...BEFORE, policies: ['sox', 'pci'] })).toBe(
      appliedFingerprint({ ...BEFORE, policies: ['pci', 'sox'] }),
    );
  });
});

describe('recentDrifts: what the daemon remembers for the status page', () => {
  const T1 = '2026-11-25T10:00:00.000Z';
  const T2 = '2026-11-25T10:01:00.000Z';
  const update = (
    name: string,
    cause: ChangeReport['cause'],
    fields: ChangeReport['fields'],
    result: ChangeReport['result'] = 'applied',
  ): ChangeReport => ({ action: 'update', cause, name, fields, result });
  const edited = (name: string, found: string, result?: ChangeReport['result']) =>
    update(name, 'drift', { description: { from: found, to: 'declared' } }, result);
  const seen = (environment: string, found: string, at: string): DriftSeen => ({
    environment,
    field: 'description',
    found,
    declared: 'declared',
    at,
  });

  it('lists each drifted field of a pass, newest first; changes that are not drift are not listed', () => {
    const first = recentDrifts([], [], { changes: [edited('web', 'by hand')] }, T1);
    expect(first).toEqual([seen('web', 'by hand', T1)]);
    const second = recentDrifts(
      first,
      [],
      {
        changes: [
          update('db', 'drift', {
            type: { from: 'S3', to: 'K8S' },
            include_scaling: { from: true, to: false },
          }),
          update('api', 'change', { description: { from: 'a', to: 'b' } }),
        ],
      },
      T2,
    );
    expect(second).toEqual([
      { environment: 'db', field: 'type', found: 'S3', declared: 'K8S', at: T2 },
      { environment: 'db', field: 'include_scaling', found: true, declared: false, at: T2 },
      seen('web', 'by hand', T1),
    ]);
  });

  it(`keeps at most ${MAX_RECENT_DRIFTS}, dropping the oldest`, () => {
    let list: DriftSeen[] = [];
    for (let i = 0; i < MAX_RECENT_DRIFTS + 3; i++) {
      list = recentDrifts(list, [], { changes: [edited(`env-${i}`, `v${i}`)] }, T1);
    }
    expect(list.map((d) => d.environment)).toEqual(['env-7', 'env-6', 'env-5', 'env-4', 'env-3']);
  });

  it('a drift still pending from the last pass is the same drift; one that comes back is new', () => {
    const failedOnce = edited('web', 'by hand', 'failed');
    const first = recentDrifts([], [], { changes: [failedOnce] }, T1);
    // Retried: still the same drift (it was pending), set back now.
    const retried = recentDrifts(first, [failedOnce], { changes: [edited('web', 'by hand')] }, T2);
    expect(retried).toEqual([seen('web', 'by hand', T1)]);
    // Nothing pending any more: the same value by hand again is a new drift.
    const again = recentDrifts(retried, [], { changes: [edited('web', 'by hand')] }, T2);
    expect(again).toEqual([seen('web', 'by hand', T2), seen('web', 'by hand', T1)]);
    // Pending with another value found: a new drift.
    const other = recentDrifts([], [failedOnce], { changes: [edited('web', 'other')] }, T2);
    expect(other).toEqual([seen('web', 'other', T2)]);
  });
});
