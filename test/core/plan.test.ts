import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  AppliedRecord,
  DesiredEnvironment,
  ObservedEnvironment,
} from '../../src/core/model.ts';
import { fingerprint, planOrg } from '../../src/core/plan.ts';
import { verifyChange } from '../../src/core/outcome.ts';
import { desired, observedFull, observedSpec } from '../helpers/builders.ts';

describe('planOrg', () => {
  it.each([
    {
      title: 'create when the listing does not have it',
      want: [desired('prod')],
      have: [],
      applied: {},
      expected: { action: 'create' },
    },
    {
      title: 'update when the description differs',
      want: [desired('prod', { description: 'new' })],
      have: [observedFull('prod', { description: 'old' })],
      applied: {},
      expected: { action: 'update', fields: { description: { from: 'old', to: 'new' } } },
    },
    {
      title: 'update when the type differs',
      want: [desired('prod', { type: 'S3' })],
      have: [observedSpec('prod')],
      applied: { prod: { include_scaling: false, policies: [] } },
      expected: { action: 'update', fields: { type: { from: 'K8S', to: 'S3' } } },
    },
    {
      title: 'update include_scaling from the listing when it carries it',
      want: [desired('prod', { include_scaling: true })],
      have: [observedFull('prod')],
      applied: {},
      expected: { action: 'update', fields: { include_scaling: { from: false, to: true } } },
    },
    {
      title: 'update policies against the state file when the listing does not carry them',
      want: [desired('prod', { policies: ['a', 'b'] })],
      have: [observedSpec('prod')],
      applied: { prod: { include_scaling: false, policies: ['a'] } },
      expected: { action: 'update', fields: { policies: { from: ['a'], to: ['a', 'b'] } } },
    },
    {
      title: 'the listing wins over the state file when it carries the field',
      want: [desired('prod', { policies: ['a'] })],
      have: [observedFull('prod', { policies: ['a'] })],
      applied: { prod: { include_scaling: false, policies: ['zzz'] } },
      expected: undefined,
    },
    {
      title: 'unverified when neither the listing nor the state knows',
      want: [desired('prod')],
      have: [observedSpec('prod')],
      applied: {},
      expected: { action: 'unverified', unknownFields: ['include_scaling', 'policies'] },
    },
    {
      title: 'policies compare as sets',
      want: [desired('prod', { policies: ['b', 'a'] })],
      have: [observedFull('prod', { policies: ['a', 'b'] })],
      applied: {},
      expected: undefined,
    },
  ])('$title', ({ want, have, applied, expected }) => {
    const plan = planOrg('acme', want, have, applied);
    expect(plan.changes).toMatchObject(expected === undefined ? [] : [expected]);
    expect(plan.unchanged).toEqual(expected === undefined ? ['prod'] : []);
  });

  it('reports environments only in the listing as unmanaged, sorted, and never changes them', () => {
    const plan = planOrg(
      'acme',
      [desired('b')],
      [observedFull('z'), observedFull('b'), observedFull('a')],
    );
    expect(plan.unmanaged).toEqual(['a', 'z']);
    expect(plan.changes).toEqual([]);
  });

  it('counts a name the manifests repeat once when looking for unmanaged environments', () => {
    // The loader never passes a repeated name, but the planner must not depend on it.
    const plan = planOrg(
      'acme',
      [desired('a'), desired('a')],
      [observedFull('a'), observedFull('b')],
    );
    expect(plan.unmanaged).toEqual(['b']);
    expect(planOrg('acme', [desired('b'), desired('a')], [observedFull('a')]).unmanaged).toEqual(
      [],
    );
  });

  it('flags a change that was applied before and did not take', () => {
    const want = desired('prod', { description: '' });
    const have = observedFull('prod', { description: 'kept' });
    const applied = {
      prod: {
        include_scaling: false,
        policies: [],
        notConverged: { desired: fingerprint(want), observed: fingerprint(have) },
      },
    };
    const plan = planOrg('acme', [want], [have], applied);
    expect(plan.changes[0]).toMatchObject({ action: 'update', knownNotConverged: true });
    // When the manifest moves, the change is sent again.
    const moved = planOrg('acme', [desired('prod', { description: 'new' })], [have], applied);
    expect(moved.changes[0]).toMatchObject({ action: 'update', knownNotConverged: false });
  });

  it('does not trip on names that are Object.prototype keys', () => {
    const plan = planOrg(
      'acme',
      [desired('constructor'), desired('toString')],
      [observedSpec('constructor')],
      {},
    );
    expect(plan.changes.map((c) => [c.name, c.action])).toEqual([
      ['constructor', 'unverified'],
      ['toString', 'create'],
    ]);
  });
});

// ---- Properties: plan, apply to a model, plan again is empty; order never matters. ----

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
        expect(plan.unmanaged).toEqual(
          have
            .map((h) => h.name)
            .filter((n) => !wanted.has(n))
            .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
        );
      }),
    );
  });

  it('the plan never depends on input order', () => {
    fc.assert(
      fc.property(desiredSet, observedSet(true), fc.integer(), (want, have, seed) => {
        const shuffle = <T>(items: readonly T[]) => {
          const copy = [...items];
          let s = seed;
          for (let i = copy.length - 1; i > 0; i--) {
            s = (s * 1103515245 + 12345) & 0x7fffffff;
            const j = s % (i + 1);
            [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
          }
          return copy;
        };
        expect(planOrg('acme', shuffle(want), shuffle(have), {})).toEqual(
          planOrg('acme', want, have, {}),
        );
      }),
    );
  });

  it('an applied change verifies as converged against a faithful model', () => {
    fc.assert(
      fc.property(desiredSet, observedSet(true), (want, have) => {
        const plan = planOrg('acme', want, have, {});
        const after = new Map(applyToModel(plan, have, true).observed.map((e) => [e.name, e]));
        for (const change of plan.changes)
          expect(verifyChange(change, after.get(change.name))).toEqual({ converged: true });
      }),
    );
  });
});

describe('verifyChange', () => {
  it('names each field the service did not take', () => {
    const plan = planOrg(
      'acme',
      [desired('prod', { description: '', include_scaling: true })],
      [observedFull('prod', { description: 'old' })],
    );
    const change = plan.changes[0];
    if (change === undefined) throw new Error('expected a change');
    const result = verifyChange(
      change,
      observedFull('prod', { description: 'old', include_scaling: false }),
    );
    expect(result).toMatchObject({ converged: false, fields: ['description', 'include_scaling'] });
  });

  it('ignores fields the listing does not carry', () => {
    const plan = planOrg('acme', [desired('prod', { include_scaling: true })], []);
    const change = plan.changes[0];
    if (change === undefined) throw new Error('expected a change');
    expect(verifyChange(change, observedSpec('prod'))).toEqual({ converged: true });
  });

  it('is not converged when the environment is missing after the PUT', () => {
    const change = planOrg('acme', [desired('prod')], []).changes[0];
    if (change === undefined) throw new Error('expected a change');
    expect(verifyChange(change, undefined)).toMatchObject({ converged: false });
  });
});
