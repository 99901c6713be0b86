import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptEntries } from '../../src/api/listing.ts';
import { entries } from '../../src/api/listing-schema.ts';

// Listing entries around the schema: mostly well-formed, each field now and then of another kind
// or null, with the extra fields the production service adds.
const odd = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.boolean(),
  fc.string({ maxLength: 4 }),
  fc.constant([]),
  fc.constant({}),
);
const sometimes = <T>(usual: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 12, arbitrary: usual }, { weight: 1, arbitrary: odd });
const entry = fc.record(
  {
    name: sometimes(fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constant(''))),
    type: sometimes(fc.constantFrom('K8S', 'S3', 'ECS', 'logical')),
    description: sometimes(fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null))),
    include_scaling: sometimes(fc.oneof(fc.boolean(), fc.constant(null))),
    policies: sometimes(
      fc.oneof(
        fc.array(
          fc.oneof({ weight: 20, arbitrary: fc.constantFrom('pci', 'sox', 'b', 'a') }, odd),
          { maxLength: 3 },
        ),
        fc.constant(null),
      ),
    ),
    tags: fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 })),
    last_modified_at: fc.double(),
  },
  { requiredKeys: ['name', 'type'] },
);

describe('acceptEntries (the listing fast path)', () => {
  it('accepts exactly the lists the schema accepts, and reads them the same way', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(fc.array(sometimes(entry), { maxLength: 4 }), odd), (value) => {
        const fast = acceptEntries(value);
        const schema = entries.safeParse(value);
        if (fast !== undefined) accepted++;
        expect(fast !== undefined, JSON.stringify(value)).toBe(schema.success);
        expect(fast).toEqual(
          schema.success
            ? schema.data.map((e) => ({
                name: e.name,
                type: e.type,
                description: e.description ?? '',
                includeScaling: e.include_scaling ?? undefined,
                policies:
                  e.policies === undefined
                    ? undefined
                    : [...new Set(e.policies ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
              }))
            : undefined,
        );
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(300);
  });
});
