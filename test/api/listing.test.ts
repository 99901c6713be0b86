import { describe, expect, it } from 'vitest';
import { readListing } from '../../src/api/listing.ts';

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

describe('the three listing shapes', () => {
  it('reads the spec shape: the fields it does not carry are not shown', () => {
    const page = readListing({ env: [env({ org: 'a' })] }, 'a');
    expect(page).toMatchObject({ unnamed: 0, shape: 'env' });
    expect(page.environments).toEqual([
      {
        name: 'web',
        type: 'K8S',
        description: 'Web',
        include_scaling: undefined,
        policies: undefined,
        tags: undefined,
      },
    ]);
  });

  it('reads a bare array with extra fields, unknown types, and null as "none" for lists, "not shown" for flags', () => {
    const page = readListing(
      [
        env({
          type: 'mainframe',
          include_scaling: true,
          policies: null,
          included_environments: null,
          require_provenance: null,
          tags: { team: 'a' },
          last_modified_at: 1.5,
          state: null,
        }),
      ],
      'a',
    );
    expect(page.shape).toBe('array');
    expect(page.environments).toStrictEqual([
      {
        name: 'web',
        type: 'mainframe',
        description: 'Web',
        include_scaling: true,
        policies: [],
        require_provenance: undefined,
        included_environments: [],
        tags: { team: 'a' },
        compliance: 'unknown',
      },
    ]);
    // include_scaling: null is "not shown", as a missing key is (unlike a list's null).
    const silent = readListing([env({ include_scaling: null })], 'a').environments[0];
    expect(silent).toMatchObject({ include_scaling: undefined, policies: undefined });
  });

  it('reads policies given as objects with a name as those names, and lists as sets', () => {
    const page = readListing(
      [
        env({
          type: 'logical',
          policies: [{ name: 'sox', id: 7 }, 'pci', { name: 'baseline' }],
          included_environments: ['b', 'a'],
        }),
      ],
      'a',
    );
    expect(page.environments[0]).toMatchObject({
      policies: ['baseline', 'pci', 'sox'],
      included_environments: ['a', 'b'],
    });
  });

  it('reads the paginated envelope and says what to fetch next', () => {
    const page = readListing(
      { page: 1, per_page: 2, total_pages: 3, total_count: 5, environments: [env({})], _links: {} },
      'a',
    );
    expect(page.shape).toBe('envelope');
    expect(page.paging).toEqual({ page: 1, perPage: 2, totalPages: 3, totalCount: 5 });
  });

  it.each([
    ['null', null, /unexpected shape \(null\)/],
    ['a string', 'OK', /unexpected shape \(string\)/],
    ['an object of the wrong shape', { environment: [] }, /shape \(object with keys environment\)/],
    ['an entry without a name', [{ type: 'K8S' }], /malformed: .* at 0\.name/],
    ['env that is not a list', { env: {} }, /malformed: .* at env/],
  ])('refuses %s', (_title, body, message) => {
    expect(() => readListing(body, 'a')).toThrow(message);
  });
});

describe('a listing is checked before it is believed, in every shape', () => {
  it.each(shapes)(
    '%s: an entry of another org refuses the listing, naming both orgs and the entry, escaped',
    (_shape, wrap) => {
      const body = wrap([env({ org: 'acme' }), env({ org: 'beta\u202e', name: 'in\ntruder' })]);
      expect(() => readListing(body, 'acme')).toThrow(
        'the listing of org "acme" holds environment "in\\ntruder" of org "beta\\u202e": an entry of another org',
      );
    },
  );

  it.each(shapes)('%s: entries with an empty name are set aside and counted', (_shape, wrap) => {
    const page = readListing(
      wrap([env({ org: 'acme', name: '' }), env({ org: 'acme' }), env({ name: '' })]),
      'acme',
    );
    expect(page.environments.map((e) => e.name)).toEqual(['web']);
    expect(page.unnamed).toBe(2);
  });

  it.each(shapes)(
    '%s: an entry that names an environment but is not one is a placeholder; state is compliance',
    (_shape, wrap) => {
      const placeholder = { org: 'acme', name: 'db', placeholder: true, error: 'not rendered' };
      const entries = [env({ state: true }), placeholder, env({ name: 'pay', policies: [{}] })];
      const page = readListing(wrap([...entries, env({ name: 'api', state: false })]), 'acme');
      expect(page.placeholders).toEqual(['db', 'pay']);
      expect(page.environments.map((e) => [e.name, e.compliance])).toEqual([
        ['web', 'compliant'],
        ['api', 'non-compliant'],
      ]);
      expect(readListing(wrap([env({})]), 'acme').environments[0]).not.toHaveProperty('compliance');
    },
  );

  it.each(shapes)(
    "%s: an entry without org is the asked org's; a null or non-string org is malformed",
    (_shape, wrap) => {
      const page = readListing(wrap([env({}), env({ name: 'api', org: 'acme' })]), 'acme');
      expect(page.environments.map((e) => e.name)).toEqual(['web', 'api']);
      expect(() => readListing(wrap([env({ org: null })]), 'acme')).toThrow(/malformed.*org/);
      expect(() => readListing(wrap([env({ org: 7 })]), 'acme')).toThrow(/malformed.*org/);
    },
  );
});
