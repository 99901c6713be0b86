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

describe('recordsInDoubt (write ahead): what a record still says for sure, whatever the PUT did', () => {
  const keptOut = { ...plain, require_provenance: true, fingerprint: 777 };
  const want = { name: 'a', type: 'K8S', description: 'new', include_scaling: true };
  const leftOut = planOrg('acme', [want], [observedSpec('a')], { a: keptOut });
  const stuck = { ...pci, notConverged: { desired: 'x', observed: 'y' } };
  const known = planFor('a').changes.map((c) => ({ ...c, knownNotConverged: true }));
  it.each([
    // a: policies [] is about to become [pci], landed or not: not known any more.
    [
      'cuts down only what differs from what is sent',
      planFor('a', 'b'),
      { a: plain, b: pci, c: plain },
      { a: { include_scaling: false }, b: pci, c: plain },
    ],
    ['nothing when every record already says what is sent', planFor('a'), { a: pci }, undefined],
    [
      'nothing for a change known not to take (not sent)',
      { ...planFor('a'), changes: known },
      { a: plain },
      undefined,
    ],
    [
      "keeps the values but not another apply's fingerprint",
      planFor('a'),
      { a: { ...pci, fingerprint: 12345 } },
      { a: pci },
    ],
    [
      'keeps the fingerprint of what is sent',
      planFor('b'),
      { b: { ...pci, fingerprint: SENT } },
      undefined,
    ],
    ['drops the mark of a change that did not take', planFor('a'), { a: stuck }, { a: pci }],
    [
      'keeps the values of fields left out (never sent), and the record',
      leftOut,
      { a: keptOut },
      { a: { policies: [], require_provenance: true } },
    ],
  ] as const)('%s', (_title, plan, records, expected) => {
    const kept = recordsInDoubt(plan, records);
    expect(kept === undefined ? undefined : { ...kept }).toEqual(expected);
  });
});

describe('settleApply', () => {
  const applied: ChangeOutcome = { result: 'applied' };
  const failed: ChangeOutcome = { result: 'failed', error: 'boom', transient: true };
  /** Settles `planFor(names)` with each name's outcome, over these records and this listing. */
  const settle = (
    records: Record<string, AppliedRecord>,
    outcomes: Record<string, ChangeOutcome>,
    after?: object,
  ) =>
    settleApply(
      planFor(...Object.keys(outcomes)),
      records,
      new Map(Object.entries(outcomes)),
      after && new Map(Object.entries(after)),
    );
  const kept = (name: string) => observedFull(name, { description: 'old', policies: ['pci'] });

  it('records what was sent for applied changes that took, or when the listing could not be taken', () => {
    const settled = settle(
      { a: plain },
      { a: applied },
      { a: observedSpec('a', { description: 'new' }) },
    );
    expect(settled.records).toEqual({ a: { ...pci, fingerprint: SENT } });
    expect(settled.notConverged).toEqual([]);
    expect(settled.outcomes.get('a')).toEqual(applied);
    expect(settle({}, { a: applied }).records).toEqual({ a: { ...pci, fingerprint: SENT } });
  });

  it('turns an applied change the listing shows did not take, or lacks, into not-converged, and remembers it', () => {
    const settled = settle({}, { a: applied }, { a: kept('a') });
    expect(settled.outcomes.get('a')).toMatchObject({ result: 'not-converged' });
    expect(settled.notConverged[0]?.reason).toContain('description (sent "new", it keeps "old")');
    expect(settled.records['a']?.notConverged).toEqual({
      desired: fingerprint(planFor('a').changes[0]!.desired),
      observed: fingerprint(kept('a')),
    });
    expect(settle({}, { a: applied }, {}).outcomes.get('a')).toMatchObject({
      result: 'not-converged',
      error: 'the environment is not in the listing after a successful PUT',
    });
  });

  it('keeps the fingerprint of the last apply that took: a change that did not take keeps only its own', () => {
    // a: drift set back that did not take (the same manifest); b: a new manifest that did not.
    const records = { a: { ...pci, fingerprint: SENT }, b: { ...pci, fingerprint: 777 } };
    const settled = settle(records, { a: applied, b: applied }, { a: kept('a'), b: kept('b') });
    expect(settled.records['a']?.fingerprint).toBe(SENT);
    expect(settled.records['b']?.fingerprint).toBeUndefined();
    expect(settled.records['b']?.notConverged).toBeDefined();
  });

  it('a failed change keeps a record that says the truth whatever its PUT did, and only that', () => {
    const records = { a: { ...pci, fingerprint: SENT }, b: { ...pci, fingerprint: 777 }, c: plain };
    // a: what it sent, and the same manifest (drift being set back): still drift next time.
    // b: its values are what it sent, its fingerprint another manifest's: the values stay.
    // c: policies [] may have become [pci]: not known any more; the record stays.
    expect(settle(records, { a: failed, b: failed, c: failed }).records).toEqual({
      a: { ...pci, fingerprint: SENT },
      b: pci,
      c: { include_scaling: false },
    });
  });

  it('keeps the old record of unchanged environments and of changes never sent, cuts down failed ones', () => {
    const plan = { ...planFor('a', 'b'), unchanged: ['u'] };
    const outcomes = new Map([
      ['a', KNOWN_NOT_CONVERGED],
      ['b', failed],
    ]);
    const settled = settleApply(
      plan,
      { a: plain, b: plain, u: pci, gone: pci },
      outcomes,
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
