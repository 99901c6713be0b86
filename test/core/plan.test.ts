import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  AppliedRecord,
  DesiredEnvironment,
  ObservedEnvironment,
} from '../../src/core/model.ts';
import { compareNames } from '../../src/core/names.ts';
import { fingerprint, planOrg } from '../../src/core/plan.ts';
import { verifyChange } from '../../src/core/outcome.ts';
import { desired, observedFull, observedSpec } from '../helpers/builders.ts';

describe('planOrg', () => {
  it('reports environments only in the listing as unmanaged, sorted, once, and never changes them', () => {
    const plan = planOrg(
      'acme',
      [desired('b'), desired('b')],
      ['z', 'b', 'a', 'z'].map((n) => observedFull(n)),
    );
    expect(plan.unmanaged).toEqual(['a', 'z']);
    expect(plan.changes).toEqual([]);
  });

  it('flags a change that was applied before and did not take, until the manifest moves', () => {
    const want = desired('prod', { description: '' });
    const have = observedFull('prod', { description: 'kept' });
    const notConverged = { desired: fingerprint(want), observed: fingerprint(have) };
    const applied = { prod: { include_scaling: false, policies: [], notConverged } };
    const plan = planOrg('acme', [want], [have], applied);
    expect(plan.changes[0]).toMatchObject({ action: 'update', knownNotConverged: true });
    const moved = planOrg('acme', [desired('prod', { description: 'new' })], [have], applied);
    expect(moved.changes[0]).toMatchObject({ action: 'update', knownNotConverged: false });
  });

  it('does not trip on names that are Object.prototype keys', () => {
    const plan = planOrg(
      'acme',
      [desired('constructor'), desired('toString')],
      [observedSpec('constructor')],
    );
    expect(plan.changes.map((c) => `${c.name} ${c.action}`)).toEqual([
      'constructor unverified',
      'toString create',
    ]);
  });
});

const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,8}$/);
const policyList = fc.uniqueArray(fc.constantFrom('pci', 'sox', 'baseline', 'soc2', 'gdpr'), {
  maxLength: 4,
});
const desiredEnv = (n: string) =>
  fc.record({
    name: fc.constant(n),
    type: fc.constantFrom('K8S', 'S3', 'logical'),
    description: fc.string({ maxLength: 12 }),
    include_scaling: fc.boolean(),
    policies: policyList.map((p) => [...p].sort()),
  });
const desiredSet = fc
  .uniqueArray(name, { maxLength: 12 })
  .chain((names) => fc.tuple(...names.map(desiredEnv)));
const observedEnv = (carries: boolean) =>
  fc.record({
    name,
    type: fc.constantFrom('K8S', 'S3', 'logical', 'ECS', 'lambda'),
    description: fc.string({ maxLength: 12 }),
    include_scaling: carries ? fc.boolean() : fc.constant(undefined),
    policies: carries ? policyList : fc.constant(undefined),
  });
const observedSet = (carries: boolean) =>
  fc.uniqueArray(observedEnv(carries), { selector: (e) => e.name, maxLength: 12 });

/** A model of the service: a PUT sets every field; the listing shows what `carries` says. */
function applyToModel(
  plan: ReturnType<typeof planOrg>,
  observed: readonly ObservedEnvironment[],
  carries: boolean,
): { observed: ObservedEnvironment[]; applied: Record<string, AppliedRecord> } {
  const byName = new Map(observed.map((e) => [e.name, e]));
  const applied: Record<string, AppliedRecord> = {};
  for (const change of plan.changes) {
    const d: DesiredEnvironment = change.desired;
    byName.set(d.name, {
      name: d.name,
      type: d.type,
      description: d.description,
      include_scaling: carries ? d.include_scaling : undefined,
      policies: carries ? d.policies : undefined,
    });
    applied[d.name] = { include_scaling: d.include_scaling, policies: d.policies };
  }
  return { observed: [...byName.values()], applied };
}

describe('planOrg properties', () => {
  it('plan, apply to a model, plan again is empty (both listing shapes)', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        desiredSet,
        fc.boolean().chain((c) => observedSet(c)),
        (carries, want, have0) => {
          const have = have0.map((e) =>
            carries
              ? { ...e, include_scaling: e.include_scaling ?? false, policies: e.policies ?? [] }
              : { name: e.name, type: e.type, description: e.description },
          );
          const first = planOrg('acme', want, have, {});
          const after = applyToModel(first, have, carries);
          const second = planOrg('acme', want, after.observed, after.applied);
          expect(second.changes).toEqual([]);
          expect(second.unchanged).toHaveLength(want.length);
        },
      ),
    );
  });

  it('every desired environment gets exactly one outcome; unmanaged are exactly the others', () => {
    fc.assert(
      fc.property(desiredSet, observedSet(false), (want, have) => {
        const plan = planOrg('acme', want, have, {});
        const outcomes = [...plan.changes.map((c) => c.name), ...plan.unchanged].sort();
        expect(outcomes).toEqual(want.map((w) => w.name).sort());
        const wanted = new Set(want.map((w) => w.name));
        const others = have.map((h) => h.name).filter((n) => !wanted.has(n));
        expect(plan.unmanaged).toEqual(others.sort(compareNames));
      }),
    );
  });

  it('the plan never depends on input order', () => {
    const inAnyOrder = <T>(list: readonly T[]) =>
      fc.shuffledSubarray([...list], { minLength: list.length });
    const lists = fc.tuple(desiredSet, observedSet(true));
    fc.assert(
      fc.property(
        lists.chain(([want, have]) =>
          fc.tuple(fc.constant([want, have]), inAnyOrder(want), inAnyOrder(have)),
        ),
        ([[want, have], shuffledWant, shuffledHave]) => {
          expect(planOrg('acme', shuffledWant, shuffledHave)).toEqual(planOrg('acme', want, have));
        },
      ),
    );
  });

  it('an applied change verifies as converged against a faithful model', () => {
    fc.assert(
      fc.property(desiredSet, observedSet(true), (want, have) => {
        const plan = planOrg('acme', want, have, {});
        const after = new Map(applyToModel(plan, have, true).observed.map((e) => [e.name, e]));
        for (const change of plan.changes)
          expect(verifyChange(change, after.get(change.name))).toBeUndefined();
      }),
    );
  });
});

it('verifyChange names each field the service did not take, ignores what the listing does not carry', () => {
  const want = desired('prod', { description: '', include_scaling: true });
  const [change] = planOrg('acme', [want], [observedFull('prod', { description: 'old' })]).changes;
  if (change === undefined) throw new Error('expected a change');
  expect(verifyChange(change, observedFull('prod', { description: 'old' }))).toBe(
    'the service did not take description (sent "", it keeps "old"), include_scaling (sent true, it keeps false); ' +
      'it ignores some values on existing environments: make the manifest say what the service keeps',
  );
  expect(verifyChange(change, observedSpec('prod', { description: '' }))).toBeUndefined();
  expect(verifyChange(change, undefined)).toBe(
    'the environment is not in the listing after a successful PUT',
  );
});
