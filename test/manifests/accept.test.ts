import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIELD_LIST } from '../../src/core/fields.ts';
import { acceptDocument, manifestValue } from '../../src/manifests/accept.ts';
import { manifestSchema } from '../../src/manifests/schema.ts';
import { odd, sometimes } from '../helpers/arbitraries.ts';

/** Builds the schema's output shape, so the two can be compared as they are. */
const asSchemaOutput = (name: string, raw: Record<string, unknown>): Record<string, unknown> => ({
  name,
  ...Object.fromEntries(FIELD_LIST.map((spec) => [spec.manifestKey, manifestValue(raw, spec)])),
});

// Values around the schema: mostly valid, each field now and then of the wrong kind, with
// unknown keys, nulls, repeated policies, odd names and non-plain objects.
const name = fc.oneof(
  { weight: 8, arbitrary: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,8}$/) },
  { weight: 1, arbitrary: fc.constantFrom('', '-x', 'a b', 'é', '.a', '__proto__') },
);
const policies = fc.array(fc.constantFrom('pci', 'sox', 'baseline', '', 'a b'), { maxLength: 4 });
const environment = fc
  .tuple(
    fc.record(
      {
        name: sometimes(name),
        type: sometimes(
          fc.constantFrom('K8S', 'S3', 'logical', 'logical', 'docker', 'ECS', 'k8s', 'Docker'),
        ),
        description: sometimes(fc.string({ maxLength: 10 })),
        include_scaling: sometimes(fc.boolean()),
        policies: sometimes(policies),
        require_provenance: sometimes(fc.boolean()),
        included_environments: sometimes(
          fc.array(fc.oneof(name, fc.constantFrom('db', 'web~2')), { maxLength: 3 }),
        ),
        tags: sometimes(
          fc.dictionary(
            fc.oneof(
              { weight: 8, arbitrary: fc.constantFrom('team', 'env', 'a b', 'é', '__proto__') },
              { weight: 1, arbitrary: fc.constantFrom('', 'k'.repeat(256), 'k'.repeat(257)) },
            ),
            sometimes(
              fc.oneof(
                { weight: 8, arbitrary: fc.string({ maxLength: 6 }) },
                { weight: 1, arbitrary: fc.constantFrom('v'.repeat(256), 'v'.repeat(257)) },
              ),
            ),
            { maxKeys: 3 },
          ),
        ),
      },
      { requiredKeys: ['name', 'type', 'description'] },
    ),
    fc.oneof({ weight: 12, arbitrary: fc.constant({}) }, fc.record({ extra: fc.anything() })),
    fc.oneof({ weight: 20, arbitrary: fc.constant({}) }, fc.record({ name: odd })),
  )
  .map(([env, extra, missing]) => {
    const value: Record<string, unknown> = { ...env, ...extra };
    if ('name' in missing) delete value['name'];
    return value;
  });
const document = fc
  .tuple(
    fc.record({
      org: sometimes(name),
      environments: sometimes(fc.array(sometimes(environment), { maxLength: 4 })),
    }),
    fc.oneof({ weight: 12, arbitrary: fc.constant({}) }, fc.record({ environment: fc.anything() })),
  )
  .map(([doc, extra]) => ({ ...doc, ...extra }));

describe('acceptDocument (the fast path check)', () => {
  it('accepts exactly what the schema accepts, with the same result', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(document, odd), (value) => {
        const fast = acceptDocument(value, asSchemaOutput);
        const schema = manifestSchema.safeParse(value);
        if (fast !== undefined) accepted++;
        expect(fast !== undefined, JSON.stringify(value)).toBe(schema.success);
        expect(fast).toEqual(schema.success ? schema.data : undefined);
      }),
      { numRuns: 3000 },
    );
    // The property means something only if a good share of the inputs were valid.
    expect(accepted).toBeGreaterThan(150);
  });

  it('leaves an object that is not a plain mapping, and a long repeated list, to the schema', () => {
    const valid = { org: 'acme', environments: [{ name: 'a', type: 'K8S', description: '' }] };
    expect(acceptDocument(valid, asSchemaOutput)).toEqual({
      org: 'acme',
      // Fields left out stay out: no default is filled in.
      environments: [{ name: 'a', type: 'K8S', description: '' }],
    });
    const withPrototype = Object.assign(Object.create({ inherited: true }) as object, valid);
    expect(acceptDocument(withPrototype, asSchemaOutput)).toBeUndefined();
    const many = Array.from({ length: 40 }, (_, i) => `p${i}`);
    const env = { name: 'a', type: 'K8S', description: '' };
    const doc = (list: string[]) => ({ org: 'acme', environments: [{ ...env, policies: list }] });
    expect(acceptDocument(doc(many), asSchemaOutput)?.environments[0]?.['policies']).toEqual(many);
    expect(acceptDocument(doc([...many, 'p3']), asSchemaOutput)).toBeUndefined();
    expect(manifestSchema.safeParse(doc([...many, 'p3'])).success).toBe(false);
  });

  it('leaves every document that declares policy documents to the schema, valid or not', () => {
    const valid = {
      org: 'acme',
      policies: [{ name: 'p', description: 'P', file: 'p.yaml' }],
      environments: [{ name: 'a', type: 'K8S', description: '' }],
    };
    expect(manifestSchema.safeParse(valid).success).toBe(true);
    expect(acceptDocument(valid, asSchemaOutput)).toBeUndefined();
    for (const list of [[], null, [{ name: 'p' }], [{ name: 'p', file: '' }]]) {
      expect(acceptDocument({ ...valid, policies: list }, asSchemaOutput)).toBeUndefined();
    }
    expect(manifestSchema.safeParse({ ...valid, policies: [] }).success).toBe(true);
    for (const list of [null, [{ name: 'p' }], [{ name: 'p', file: '' }]]) {
      expect(manifestSchema.safeParse({ ...valid, policies: list }).success).toBe(false);
    }
  });
});
