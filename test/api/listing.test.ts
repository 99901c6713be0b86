import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptEntries, toObserved } from '../../src/api/listing.ts';
import { entries } from '../../src/api/listing-schema.ts';
import { odd, sometimes as someOdd } from '../helpers/arbitraries.ts';

// Listing entries around the schema: mostly well-formed, each field now and then of another kind
// or null, with the extra fields the production service adds.
const sometimes = <T>(usual: fc.Arbitrary<T>) => someOdd(usual, 12);
const entry = fc.record(
  {
    name: sometimes(fc.oneof(fc.string({ minLength: 1, maxLength: 8 }), fc.constant(''))),
    type: sometimes(fc.constantFrom('K8S', 'S3', 'ECS', 'logical')),
    description: sometimes(fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null))),
    include_scaling: sometimes(fc.oneof(fc.boolean(), fc.constant(null))),
    policies: sometimes(
      fc.oneof(
        fc.array(
          fc.oneof(
            { weight: 20, arbitrary: fc.constantFrom('pci', 'sox', 'b', 'a') },
            {
              weight: 5,
              arbitrary: fc.record({ name: fc.constantFrom('pci', 'x'), id: fc.nat() }),
            },
            odd,
          ),
          { maxLength: 3 },
        ),
        fc.constant(null),
      ),
    ),
    included_environments: sometimes(
      fc.oneof(fc.array(fc.constantFrom('db', 'web'), { maxLength: 2 }), fc.constant(null)),
    ),
    require_provenance: sometimes(fc.oneof(fc.boolean(), fc.constant(null))),
    state: fc.oneof(fc.boolean(), fc.constant(null)),
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
        expect(fast).toEqual(schema.success ? schema.data.map(toObserved) : undefined);
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(300);
  });
});
