import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { manifestJsonSchema } from '../../src/manifests/schema.ts';
import { manifestSchema } from '../../src/manifests/schema.ts';
import { envsync } from '../helpers/cli.ts';

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validate = ajv.compile(manifestJsonSchema());
const zodSays = (value: unknown) => manifestSchema.safeParse(value).success;

const env = { name: 'prod', type: 'K8S', description: 'Production' };
const CORPUS: [string, unknown][] = [
  ['minimal', { org: 'acme', environments: [] }],
  [
    'full',
    {
      org: 'acme',
      environments: [{ ...env, include_scaling: true, policies: ['pci', 'baseline'] }],
    },
  ],
  ['empty description', { org: 'acme', environments: [{ ...env, description: '' }] }],
  ['dotted names', { org: 'a.b-c_d', environments: [{ ...env, name: '9.x_y-z' }] }],
  ['missing org', { environments: [] }],
  ['missing environments', { org: 'acme' }],
  ['unknown root key', { org: 'acme', environments: [], extra: 1 }],
  ['unknown env key', { org: 'acme', environments: [{ ...env, polices: [] }] }],
  ['lower-case type', { org: 'acme', environments: [{ ...env, type: 'k8s' }] }],
  ['string boolean', { org: 'acme', environments: [{ ...env, include_scaling: 'yes' }] }],
  ['string policies', { org: 'acme', environments: [{ ...env, policies: 'pci' }] }],
  ['duplicate policies', { org: 'acme', environments: [{ ...env, policies: ['pci', 'pci'] }] }],
  ['number name', { org: 'acme', environments: [{ ...env, name: 12 }] }],
  ['slash in name', { org: 'acme', environments: [{ ...env, name: 'a/b' }] }],
  ['leading dot', { org: '.acme', environments: [] }],
  ['null description', { org: 'acme', environments: [{ ...env, description: null }] }],
  ['map environments', { org: 'acme', environments: { prod: env } }],
  ['tags', { org: 'acme', environments: [{ ...env, tags: { team: 'web', env: '' } }] }],
  ['no tags', { org: 'acme', environments: [{ ...env, tags: {} }] }],
  ['number tag', { org: 'acme', environments: [{ ...env, tags: { port: 8080 } }] }],
  ['null tag', { org: 'acme', environments: [{ ...env, tags: { team: null } }] }],
  ['nested tag', { org: 'acme', environments: [{ ...env, tags: { team: { a: 'b' } } }] }],
  ['empty tag key', { org: 'acme', environments: [{ ...env, tags: { '': 'x' } }] }],
  ['long tag key', { org: 'acme', environments: [{ ...env, tags: { ['k'.repeat(257)]: 'x' } }] }],
  ['long tag value', { org: 'acme', environments: [{ ...env, tags: { k: 'v'.repeat(257) } }] }],
  ['tags as a list', { org: 'acme', environments: [{ ...env, tags: ['team'] }] }],
  ['tags null', { org: 'acme', environments: [{ ...env, tags: null }] }],
  ['renamed', { org: 'acme', environments: [{ ...env, renamed_from: 'production.1' }] }],
  ['renamed from a bad name', { org: 'acme', environments: [{ ...env, renamed_from: 'a b' }] }],
  ['renamed from a number', { org: 'acme', environments: [{ ...env, renamed_from: 1 }] }],
  ['renamed from null', { org: 'acme', environments: [{ ...env, renamed_from: null }] }],
  ['prune', { org: 'acme', prune: true, environments: [env] }],
  ['no prune', { org: 'acme', prune: false, environments: [] }],
  ['prune as a string', { org: 'acme', prune: 'true', environments: [] }],
  ['prune as null', { org: 'acme', prune: null, environments: [] }],
  ['prune in an environment', { org: 'acme', environments: [{ ...env, prune: true }] }],
  ['renamed_from at the root', { org: 'acme', renamed_from: 'x', environments: [] }],
  ['a list at the top', [{ org: 'acme' }]],
  ['a string', 'org: acme'],
  ['null', null],
];

describe('envsync schema', () => {
  it('prints the committed config/manifest.schema.json (regenerate with: npm run generate)', async () => {
    const printed = await envsync(['schema']);
    expect(printed.code).toBe(0);
    expect(JSON.parse(printed.stdout)).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
    });
    expect(printed.stdout).toBe(
      await readFile(new URL('../../config/manifest.schema.json', import.meta.url), 'utf8'),
    );
  });

  it.each(CORPUS)('agrees with the validator on: %s', (_title, value) => {
    expect(validate(value)).toBe(zodSays(value));
  });

  it('describes renamed_from, but cannot compare it with name: the validator refuses its own name', () => {
    const own = { org: 'acme', environments: [{ ...env, renamed_from: env.name }] };
    // JSON Schema has no keyword that compares two values of an instance.
    expect(validate(own)).toBe(true);
    expect(zodSays(own)).toBe(false);
    const properties = (manifestJsonSchema() as { $defs?: unknown; properties: unknown })
      .properties as Record<string, { description?: string; items?: { properties?: object } }>;
    expect(properties['prune']).toMatchObject({ type: 'boolean' });
    expect(properties['environments']?.items?.properties).toHaveProperty('renamed_from', {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
      description: expect.stringContaining('previous name'),
    });
  });

  it('agrees with the validator on random documents', () => {
    const name = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,5}$/),
      fc.string({ maxLength: 4 }),
    );
    const value = fc.record(
      {
        org: fc.oneof(name, fc.integer()),
        environments: fc.oneof(
          fc.array(
            fc.record(
              {
                name,
                type: fc.constantFrom('K8S', 'S3', 'logical', 'ECS', 'k8s'),
                description: fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null)),
                include_scaling: fc.oneof(fc.boolean(), fc.constantFrom('true', 0)),
                policies: fc.oneof(
                  fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }),
                  fc.constant('a'),
                ),
                // Longer than any name above, so never the environment's own (see above).
                renamed_from: fc.oneof(
                  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{6,9}$/),
                  fc.constantFrom('', 'a b x y z', 12),
                ),
                extra: fc.constant(1),
              },
              { requiredKeys: ['name'] },
            ),
            { maxLength: 3 },
          ),
          fc.anything({ maxDepth: 1 }),
        ),
        prune: fc.oneof(fc.boolean(), fc.constantFrom('true', 1, null)),
        other: fc.constant(true),
      },
      { requiredKeys: [] },
    );
    const good = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,5}$/);
    const mostlyValid = fc.record(
      {
        org: good,
        prune: fc.boolean(),
        environments: fc.array(
          fc.record(
            {
              name: good,
              renamed_from: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{6,9}$/),
              type: fc.constantFrom('K8S', 'S3', 'logical'),
              description: fc.string({ maxLength: 4 }),
              include_scaling: fc.boolean(),
              policies: fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 2 }),
            },
            { requiredKeys: ['name', 'type', 'description'] },
          ),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: ['org', 'environments'] },
    );
    let valid = 0;
    fc.assert(
      fc.property(fc.oneof(value, mostlyValid), (v) => {
        const verdict = zodSays(v);
        if (verdict) valid++;
        expect(validate(v), JSON.stringify(v)).toBe(verdict);
      }),
      { numRuns: 2000 },
    );
    expect(valid).toBeGreaterThan(200);
  });
});
