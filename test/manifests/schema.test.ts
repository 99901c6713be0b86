import { readFile } from 'node:fs/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { manifestJsonSchema, manifestSchema } from '../../src/manifests/schema.ts';
import { envsync } from '../helpers/cli.ts';

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validate = ajv.compile(manifestJsonSchema());
const zodSays = (value: unknown) => manifestSchema.safeParse(value).success;

const env = { name: 'prod', type: 'K8S', description: 'Production' };
const withEnv = (extra: object) => ({ org: 'acme', environments: [{ ...env, ...extra }] });
/** What the random documents below never hold: tags, keys out of place, documents of other shapes. */
const CORPUS: [string, unknown][] = [
  ['tags', withEnv({ tags: { team: 'web', env: '' } })],
  ['no tags', withEnv({ tags: {} })],
  ['number tag', withEnv({ tags: { port: 8080 } })],
  ['null tag', withEnv({ tags: { team: null } })],
  ['nested tag', withEnv({ tags: { team: { a: 'b' } } })],
  ['empty tag key', withEnv({ tags: { '': 'x' } })],
  ['long tag key', withEnv({ tags: { ['k'.repeat(257)]: 'x' } })],
  ['long tag value', withEnv({ tags: { k: 'v'.repeat(257) } })],
  ['tags as a list', withEnv({ tags: ['team'] })],
  ['tags null', withEnv({ tags: null })],
  ['slash in name', withEnv({ name: 'a/b' })],
  ['leading dot', { org: '.acme', environments: [] }],
  ['map environments', { org: 'acme', environments: { prod: env } }],
  ['prune in an environment', withEnv({ prune: true })],
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
    const own = withEnv({ renamed_from: env.name });
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
    const good = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,5}$/);
    // Longer than any name, so never the environment's own (see above).
    const renamedFrom = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{6,9}$/);
    const name = fc.oneof(good, fc.string({ maxLength: 4 }));
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
                renamed_from: fc.oneof(renamedFrom, fc.constantFrom('', 'a b x y z', 12)),
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
    const mostlyValid = fc.record(
      {
        org: good,
        prune: fc.boolean(),
        environments: fc.array(
          fc.record(
            {
              name: good,
              renamed_from: renamedFrom,
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
