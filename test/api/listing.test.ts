import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acceptEntries, checkEntries, readListing, toObserved } from '../../src/api/listing.ts';
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
    org: fc.oneof(
      { weight: 10, arbitrary: fc.constant('acme') },
      { weight: 2, arbitrary: fc.constantFrom('beta', 'Acme', '') },
      { weight: 1, arbitrary: odd },
    ),
    state: fc.oneof(fc.boolean(), fc.constant(null)),
    tags: sometimes(
      fc.oneof(
        fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 })),
        fc.dictionary(fc.constantFrom('a', '__proto__'), someOdd(fc.string({ maxLength: 3 }))),
        fc.constant(null),
      ),
    ),
    last_modified_at: fc.double(),
  },
  { requiredKeys: ['name', 'type'] },
);

describe('acceptEntries (the listing fast path)', () => {
  it('accepts exactly the lists the schema accepts whose entries are named and of the org asked, and reads them the same way', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.oneof(fc.array(sometimes(entry), { maxLength: 4 }), odd), (value) => {
        const fast = acceptEntries(value, 'acme');
        const schema = entries.safeParse(value);
        const belongs =
          schema.success &&
          schema.data.every((e) => e.name !== '' && (e.org === undefined || e.org === 'acme'));
        if (fast !== undefined) accepted++;
        expect(fast !== undefined, JSON.stringify(value)).toBe(belongs);
        const read = schema.success && belongs ? schema.data : undefined;
        expect(fast).toEqual(read?.map(toObserved));
        expect(read && checkEntries(read, 'acme')).toEqual(
          read && { environments: fast, unnamed: 0 },
        );
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(300);
  });
});

describe('a listing is checked before it is believed, in every shape', () => {
  const env = (extra: Record<string, unknown>) => ({
    name: 'web',
    type: 'K8S',
    description: 'Web',
    ...extra,
  });
  const shapes: [string, (list: unknown[]) => unknown][] = [
    ['a bare array', (list) => list],
    ['{"env": [...]}', (list) => ({ env: list })],
    [
      'a paginated envelope',
      (list) => ({
        page: 1,
        per_page: 50,
        total_pages: 1,
        total_count: list.length,
        environments: list,
      }),
    ],
  ];

  it.each(shapes)(
    '%s: an entry of another org refuses the listing, naming both orgs and the entry, escaped',
    async (_shape, wrap) => {
      const body = wrap([env({ org: 'acme' }), env({ org: 'beta\u202e', name: 'in\ntruder' })]);
      await expect(readListing(body, 'acme')).rejects.toThrow(
        'the listing of org "acme" holds environment "in\\ntruder" of org "beta\\u202e": an entry of another org',
      );
    },
  );

  it.each(shapes)(
    '%s: entries with an empty name are set aside and counted',
    async (_shape, wrap) => {
      const page = await readListing(
        wrap([env({ org: 'acme', name: '' }), env({ org: 'acme' }), env({ name: '' })]),
        'acme',
      );
      expect(page.environments.map((e) => e.name)).toEqual(['web']);
      expect(page.unnamed).toBe(2);
    },
  );

  it.each(shapes)(
    "%s: an entry without org is the asked org's; a null or non-string org is malformed",
    async (_shape, wrap) => {
      const page = await readListing(wrap([env({}), env({ name: 'api', org: 'acme' })]), 'acme');
      expect(page.environments.map((e) => e.name)).toEqual(['web', 'api']);
      expect(page.unnamed).toBe(0);
      await expect(readListing(wrap([env({ org: null })]), 'acme')).rejects.toThrow(
        /malformed.*org/,
      );
      await expect(readListing(wrap([env({ org: 7 })]), 'acme')).rejects.toThrow(/malformed.*org/);
    },
  );
});
