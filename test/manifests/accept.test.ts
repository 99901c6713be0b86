import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIELD_LIST } from '../../src/core/fields.ts';
import { isPlainObject } from '../../src/core/plain-object.ts';
import { acceptDocument, manifestValue } from '../../src/manifests/accept.ts';
import { manifestSchema } from '../../src/manifests/schema.ts';
import { odd, sometimes } from '../helpers/arbitraries.ts';

/**
 * Builds the schema's output shape, so the two can be compared as they are: `renamed_from` is
 * what the fast path hands the builder, so a wrong one shows.
 */
const asSchemaOutput = (
  name: string,
  raw: Record<string, unknown>,
  renamedFrom: string | undefined,
): Record<string, unknown> => ({
  name,
  ...(renamedFrom === undefined ? {} : { renamed_from: renamedFrom }),
  ...Object.fromEntries(FIELD_LIST.map((spec) => [spec.manifestKey, manifestValue(raw, spec)])),
});

// Values around the schema: mostly valid, each field now and then of the wrong kind, with
// unknown keys, nulls, repeated policies, odd names and non-plain objects; renamed_from now and
// then, as another name, the environment's own (refused) or left undefined.
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
    fc.oneof(
      { weight: 10, arbitrary: fc.constant({ renamed: 'no' }) },
      { weight: 6, arbitrary: fc.record({ renamed: fc.constant('from'), from: sometimes(name) }) },
      { weight: 1, arbitrary: fc.constant({ renamed: 'own name' }) },
      { weight: 1, arbitrary: fc.constant({ renamed: 'undefined' }) },
    ),
  )
  .map(([env, extra, missing, renamed]) => {
    const value: Record<string, unknown> = { ...env, ...extra };
    if ('name' in missing) delete value['name'];
    if (renamed.renamed === 'from') value['renamed_from'] = renamed.from;
    if (renamed.renamed === 'own name') value['renamed_from'] = value['name'];
    if (renamed.renamed === 'undefined') value['renamed_from'] = undefined;
    return value;
  });
const document = fc
  .tuple(
    fc.record({
      org: sometimes(name),
      environments: sometimes(fc.array(sometimes(environment), { maxLength: 4 })),
    }),
    fc.oneof({ weight: 12, arbitrary: fc.constant({}) }, fc.record({ environment: fc.anything() })),
    fc.oneof(
      { weight: 4, arbitrary: fc.constant({}) },
      fc.record({ prune: sometimes(fc.boolean()) }),
    ),
  )
  .map(([doc, extra, prune]) => ({ ...doc, ...extra, ...prune }));

describe('acceptDocument (the fast path check)', () => {
  it('accepts exactly what the schema accepts, with the same result', () => {
    let accepted = 0;
    let pruned = 0;
    fc.assert(
      fc.property(fc.oneof(document, odd), (value) => {
        const fast = acceptDocument(value, asSchemaOutput);
        const schema = manifestSchema.safeParse(value);
        // A document that declares prune is left to the schema, valid or not, so that the
        // located path records where the key is.
        const leftToSchema = isPlainObject(value) && Object.hasOwn(value, 'prune');
        const certain = schema.success && !leftToSchema;
        if (leftToSchema && schema.success) pruned++;
        if (fast !== undefined) accepted++;
        expect(fast !== undefined, JSON.stringify(value)).toBe(certain);
        expect(fast).toEqual(certain ? schema.data : undefined);
      }),
      // More runs than the share of valid documents alone would need: those with prune, and
      // renamed environments with a bad renamed_from, are not counted as accepted.
      { numRuns: 4000 },
    );
    // The property means something only if a good share of the inputs were valid, and
    // documents the schema accepts with prune were seen.
    expect(accepted).toBeGreaterThan(150);
    expect(pruned).toBeGreaterThan(20);
  });

  it('accepts exactly the environments the schema accepts, renamed ones among them', () => {
    // Few whole documents above are valid and hold an environment: one environment at a time,
    // the valid ones, and the renamed among them, are many.
    let accepted = 0;
    let renamed = 0;
    fc.assert(
      fc.property(environment, (env) => {
        const value = { org: 'acme', environments: [env] };
        const fast = acceptDocument(value, asSchemaOutput);
        const schema = manifestSchema.safeParse(value);
        if (fast !== undefined) accepted++;
        if (fast?.environments[0]?.['renamed_from'] !== undefined) renamed++;
        expect(fast !== undefined, JSON.stringify(value)).toBe(schema.success);
        expect(fast).toEqual(schema.success ? schema.data : undefined);
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(120);
    expect(renamed).toBeGreaterThan(25);
  });

  it('accepts a renamed environment, and leaves its own name or a bad name to the schema', () => {
    const env = { name: 'web', type: 'K8S', description: '' };
    const doc = (extra: Record<string, unknown>) => ({
      org: 'acme',
      environments: [{ ...env, ...extra }],
    });
    expect(acceptDocument(doc({ renamed_from: 'api' }), asSchemaOutput)).toEqual({
      org: 'acme',
      environments: [{ ...env, renamed_from: 'api' }],
    });
    for (const bad of ['web', 'a b', 12, null, ['api']]) {
      expect(acceptDocument(doc({ renamed_from: bad }), asSchemaOutput)).toBeUndefined();
      expect(manifestSchema.safeParse(doc({ renamed_from: bad })).success).toBe(false);
    }
    // One unknown key beside it is still an unknown key.
    expect(
      acceptDocument(doc({ renamed_from: 'api', renamed: 'api' }), asSchemaOutput),
    ).toBeUndefined();
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
