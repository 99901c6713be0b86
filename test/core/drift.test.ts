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

/** B: what the manifest said when envsync last applied `prod`; A: the record of that apply. */
const B = desired('prod', { description: 'Production', policies: ['pci'] });
const FP = appliedFingerprint(B);
const A: AppliedRecord = { include_scaling: false, policies: ['pci'], fingerprint: FP };
/** The listing of `prod` as the production service shows it, with this description. */
const listed = (description: string, more = {}) =>
  observedFull('prod', { description, policies: ['pci'], ...more });
const spec = (description: string) => observedSpec('prod', { description });

describe('drift or change: what planOrg names each change', () => {
  const NEW = { ...B, description: 'new' };
  const PROVENANCE = { ...B, require_provenance: true };
  const UNSEEN = { ...A, fingerprint: appliedFingerprint(PROVENANCE) };
  const NONE = { ...B, policies: [] };
  const UNKNOWN = { policies: ['pci'] };
  it.each([
    ['a create, even with a record of the same manifest', B, [], A, 'create change'],
    ['never applied (no record)', B, [listed('x')], undefined, 'update change'],
    ['the manifest changed, the service did not', NEW, [listed('Production')], A, 'update change'],
    ['the service changed, the manifest did not', B, [listed('x')], A, 'update drift'],
    ['the service changed in several fields', B, [listed('x', { type: 'S3' })], A, 'update drift'],
    ['seen through a listing that hides policies', B, [spec('x')], A, 'update drift'],
    ['both changed, in the same field', NEW, [listed('x')], A, 'update change'],
    ['both changed, in different fields', NONE, [listed('x')], A, 'update change'],
    ['a record without a fingerprint: unknown', B, [listed('x')], UNKNOWN, 'update change'],
    [
      'unverified: nothing was seen to differ',
      PROVENANCE,
      [spec('Production')],
      UNSEEN,
      'unverified change',
    ],
    ['unchanged, whatever its record says', B, [listed('Production')], A, ''],
  ] as const)('%s: %j', (_title, want, observed, record, expected) => {
    const plan = planOrg('acme', [want], observed, record === undefined ? {} : { prod: record });
    expect(plan.changes.map((c) => `${c.action} ${c.cause}`).join()).toBe(expected);
    // The same decision, asked directly.
    for (const c of plan.changes) expect(changeCause(c.action, want, record)).toBe(c.cause);
  });
});

describe('confirmedRecords: the fingerprint back when the service is seen as declared', () => {
  /** A manifest that leaves include_scaling and policies out. */
  const OUT: DesiredEnvironment = { name: 'prod', type: 'K8S', description: 'Production' };
  const SEEN = listed('Production');
  const pci: AppliedRecord = { include_scaling: false, policies: ['pci'] };
  const scaled = observedFull('prod', { description: 'Production', include_scaling: true });
  const kept = { include_scaling: false, require_provenance: true };
  const stuck = { ...A, notConverged: { desired: 'sent', observed: 'kept' } };
  const other = { ...pci, fingerprint: 1 };
  const keptFP = { ...kept, fingerprint: appliedFingerprint(OUT) };
  const hidden = spec('Production');
  it.each([
    ['a record a crash left without its fingerprint: restored', B, SEEN, pci, A],
    ["a record with another manifest's fingerprint: replaced", B, SEEN, other, A],
    ['a record that already has it: nothing to do', B, SEEN, A, undefined],
    ['no record: a seen one, not owned', B, SEEN, undefined, { fingerprint: FP, seen: true }],
    ['a record cut down to no values: restored, without values', B, SEEN, {}, { fingerprint: FP }],
    ['a field not listed, held by the record as declared: restored', B, hidden, pci, A],
    ['a field neither listed nor recorded: nothing', B, hidden, {}, undefined],
    ['the service differs (a change is planned): nothing', B, listed('x'), pci, undefined],
    ['a value of a field left out stays', OUT, scaled, kept, keptFP],
    ['a mark of a change that did not take goes: the service holds it', B, SEEN, stuck, A],
  ] as const)('%s', (_title, want, observed, record, confirmed) => {
    const records = record === undefined ? {} : { prod: record };
    const plan = planOrg('acme', [want], [observed], records);
    const restored = confirmedRecords([want], plan.unchanged, (name) => records[name as 'prod']);
    expect(restored === undefined ? undefined : { ...restored }).toEqual(
      confirmed === undefined ? undefined : { prod: confirmed },
    );
  });

  it('after a crash left the record without it, a hand edit is drift once a pass saw the service as declared', () => {
    const inDoubt: AppliedRecord = { include_scaling: false, policies: ['pci'] };
    const edited = [spec('edited by hand')];
    // Without the pass that confirms it: a change.
    expect(planOrg('acme', [B], edited, { prod: inDoubt }).changes[0]?.cause).toBe('change');
    // The pass that finds the service as declared, then the edit: drift.
    const pass = planOrg('acme', [B], [spec('Production')], { prod: inDoubt });
    const confirmed = confirmedRecords([B], pass.unchanged, () => inDoubt);
    const after = planOrg('acme', [B], edited, { ...confirmed });
    expect(after.changes.map((c) => `${c.action} ${c.cause}`)).toEqual(['update drift']);
  });
});

describe('appliedFingerprint', () => {
  const env: fc.Arbitrary<DesiredEnvironment> = fc.record(
    {
      name: fc.constant('prod'),
      type: fc.constantFrom('K8S', 'S3', 'logical'),
      description: fc.string({ maxLength: 20 }),
      include_scaling: fc.boolean(),
      policies: fc.uniqueArray(fc.constantFrom('pci', 'sox', 'baseline'), { maxLength: 3 }),
      require_provenance: fc.boolean(),
    },
    { requiredKeys: ['name', 'type', 'description', 'include_scaling', 'policies'] },
  );

  it('is a safe integer, the same for the same environment (sets in any order), another for another', () => {
    fc.assert(
      fc.property(env, env, (a, b) => {
        const x = appliedFingerprint(a);
        expect(Number.isSafeInteger(x) && x >= 0).toBe(true);
        expect(appliedFingerprint({ ...a, policies: (a.policies ?? []).toReversed() })).toBe(x);
        expect(appliedFingerprint(b) === x).toBe(fingerprint(a) === fingerprint(b));
      }),
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
    const changes = [
      update('db', 'drift', {
        type: { from: 'S3', to: 'K8S' },
        include_scaling: { from: true, to: false },
      }),
      update('api', 'change', { description: { from: 'a', to: 'b' } }),
    ];
    expect(recentDrifts(first, [], { changes }, T2)).toEqual([
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
