import { describe, expect, it } from 'vitest';
import { appliedFingerprint, fingerprint, planOrg } from '../../src/core/plan.ts';
import type { AppliedRecord, OrgPlan } from '../../src/core/model.ts';
import {
  type ChangeOutcome,
  isTransientRound,
  KNOWN_NOT_CONVERGED,
  recordsInDoubt,
  sameRecords,
  settleApply,
} from '../../src/core/outcome.ts';
import { desired, observedFull, observedSpec } from '../helpers/builders.ts';

const plain: AppliedRecord = { include_scaling: false, policies: [] };
const pci: AppliedRecord = { include_scaling: false, policies: ['pci'] };

/** What a plan of `planFor` sends, as the state file records it once applied. */
const SENT = appliedFingerprint(desired('a', { description: 'new', policies: ['pci'] }));

/** A plan with one update per name given, wanting policies [pci] (and nothing else changed). */
function planFor(...names: string[]): OrgPlan {
  return planOrg(
    'acme',
    names.map((name) => desired(name, { description: 'new', policies: ['pci'] })),
    names.map((name) => observedSpec(name)),
    Object.fromEntries(names.map((name) => [name, plain])),
  );
}

describe('recordsInDoubt (write ahead)', () => {
  it('cuts down only records that differ from what is about to be sent, to the values it keeps', () => {
    const plan = planFor('a', 'b');
    const records = { a: plain, b: pci, c: plain };
    // a: policies [] is about to become [pci], landed or not: not known any more.
    expect(recordsInDoubt(plan, records)).toEqual({
      a: { include_scaling: false },
      b: pci,
      c: plain,
    });
  });

  it('drops nothing when every record already says what is sent', () => {
    expect(recordsInDoubt(planFor('a'), { a: pci })).toBeUndefined();
  });

  it('keeps the record of a change known not to take (it is not sent)', () => {
    const plan = planFor('a');
    const stuck = {
      ...plan,
      changes: plan.changes.map((c) => ({ ...c, knownNotConverged: true })),
    };
    expect(recordsInDoubt(stuck, { a: plain })).toBeUndefined();
  });

  it("keeps a matching record's values but not another apply's fingerprint; the same one stays", () => {
    const plan = planFor('a', 'b');
    const records = { a: { ...pci, fingerprint: 12345 }, b: { ...pci, fingerprint: SENT } };
    expect(recordsInDoubt(plan, records)).toEqual({ a: pci, b: { ...pci, fingerprint: SENT } });
    expect(recordsInDoubt(planFor('b'), { b: { ...pci, fingerprint: SENT } })).toBeUndefined();
  });

  it('drops the mark of a change that did not take, even if its values match', () => {
    const marked = { ...pci, notConverged: { desired: 'x', observed: 'y' } };
    expect(recordsInDoubt(planFor('a'), { a: marked })).toEqual({ a: pci });
  });

  it('keeps the values of fields the manifest leaves out (never sent), and the record itself', () => {
    const plan = planOrg(
      'acme',
      [{ name: 'a', type: 'K8S', description: 'new', include_scaling: true }],
      [observedSpec('a')],
      { a: { ...plain, require_provenance: true, fingerprint: 777 } },
    );
    expect(
      recordsInDoubt(plan, { a: { ...plain, require_provenance: true, fingerprint: 777 } }),
    ).toEqual({
      a: { policies: [], require_provenance: true },
    });
  });
});

describe('settleApply', () => {
  const applied: ChangeOutcome = { result: 'applied' };
  const failed: ChangeOutcome = { result: 'failed', error: 'boom', transient: true };

  it('records what was sent for applied changes that took', () => {
    const plan = planFor('a');
    const after = new Map([['a', observedSpec('a', { description: 'new' })]]);
    const settled = settleApply(plan, { a: plain }, new Map([['a', applied]]), after);
    expect(settled.records).toEqual({ a: { ...pci, fingerprint: SENT } });
    expect(settled.notConverged).toEqual([]);
    expect(settled.outcomes.get('a')).toEqual(applied);
  });

  it('turns an applied change the listing shows did not take into not-converged, and remembers it', () => {
    const plan = planFor('a');
    const kept = observedFull('a', { description: 'old', policies: ['pci'] });
    const settled = settleApply(plan, {}, new Map([['a', applied]]), new Map([['a', kept]]));
    expect(settled.outcomes.get('a')).toMatchObject({ result: 'not-converged' });
    expect(settled.notConverged[0]?.reason).toContain('description (sent "new", it keeps "old")');
    expect(settled.records['a']?.notConverged).toEqual({
      desired: fingerprint(plan.changes[0]!.desired),
      observed: fingerprint(kept),
    });
  });

  it('says an environment missing after a successful PUT did not converge', () => {
    const settled = settleApply(planFor('a'), {}, new Map([['a', applied]]), new Map());
    expect(settled.outcomes.get('a')).toMatchObject({
      result: 'not-converged',
      error: 'the environment is not in the listing after a successful PUT',
    });
  });

  it('records applied changes as sent when the verify listing could not be taken', () => {
    const settled = settleApply(planFor('a'), {}, new Map([['a', applied]]), undefined);
    expect(settled.records).toEqual({ a: { ...pci, fingerprint: SENT } });
  });

  it('keeps the fingerprint of the last apply that took: a change that did not take keeps only its own', () => {
    const plan = planFor('a', 'b');
    const kept = (name: string) => observedFull(name, { description: 'old', policies: ['pci'] });
    const settled = settleApply(
      plan,
      // a: drift set back that did not take (the same manifest); b: a new manifest that did not.
      { a: { ...pci, fingerprint: SENT }, b: { ...pci, fingerprint: 777 } },
      new Map([
        ['a', applied],
        ['b', applied],
      ]),
      new Map([
        ['a', kept('a')],
        ['b', kept('b')],
      ]),
    );
    expect(settled.records['a']?.fingerprint).toBe(SENT);
    expect(settled.records['b']?.fingerprint).toBeUndefined();
    expect(settled.records['b']?.notConverged).toBeDefined();
  });

  it('a failed change keeps a record that says the truth whatever its PUT did, and only that', () => {
    const plan = planFor('a', 'b', 'c');
    const settled = settleApply(
      plan,
      { a: { ...pci, fingerprint: SENT }, b: { ...pci, fingerprint: 777 }, c: plain },
      new Map([
        ['a', failed],
        ['b', failed],
        ['c', failed],
      ]),
      undefined,
    );
    // a: what it sent, and the same manifest (drift being set back): still drift next time.
    // b: its values are what it sent, its fingerprint another manifest's: the values stay.
    // c: policies [] may have become [pci]: not known any more; the record stays.
    expect(settled.records).toEqual({
      a: { ...pci, fingerprint: SENT },
      b: pci,
      c: { include_scaling: false },
    });
  });

  it('keeps the old record of unchanged environments and of changes never sent, cuts down failed ones', () => {
    const plan = planFor('a', 'b');
    const withUnchanged = { ...plan, unchanged: ['u'] };
    const settled = settleApply(
      withUnchanged,
      { a: plain, b: plain, u: pci, gone: pci },
      new Map([
        ['a', KNOWN_NOT_CONVERGED],
        ['b', failed],
      ]),
      new Map(),
    );
    expect(settled.records).toEqual({ a: plain, b: { include_scaling: false }, u: pci });
  });
});

describe('isTransientRound', () => {
  const ok: ChangeOutcome = { result: 'applied' };
  const transient: ChangeOutcome = { result: 'failed', transient: true };
  const final: ChangeOutcome = { result: 'failed', transient: false };
  const stuck: ChangeOutcome = { result: 'not-converged' };
  const verified = { failed: false, transient: false };
  it.each([
    ['nothing failed', [ok, stuck], verified, false],
    ['only transient failures', [ok, transient], verified, true],
    ['a final failure among them', [transient, final], verified, false],
    ['the verify listing failed transiently', [ok], { failed: true, transient: true }, true],
    ['the verify listing failed for good', [ok], { failed: true, transient: false }, false],
    [
      'a transient verify failure beside a final change failure',
      [final],
      { failed: true, transient: true },
      false,
    ],
  ])('%s: %s', (_title, outcomes, verify, expected) => {
    expect(isTransientRound(outcomes, verify)).toBe(expected);
  });
});

describe('sameRecords', () => {
  it.each([
    [{ a: plain }, { a: { include_scaling: false, policies: [] } }, true],
    [{ a: plain }, { a: pci }, false],
    [{ a: plain }, { a: plain, b: plain }, false],
    [{ a: plain }, { b: plain }, false],
    [{ a: { ...plain, notConverged: { desired: 'x', observed: 'y' } } }, { a: plain }, false],
  ])('%j and %j are the same: %s', (a, b, expected) => {
    expect(sameRecords(a, b)).toBe(expected);
  });
});
