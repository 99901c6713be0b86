import { describe, expect, it } from 'vitest';
import { readListing } from '../../src/api/listing.ts';

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
    "%s: an entry without org is the asked org's; a null or non-string org is malformed",
    (_shape, wrap) => {
      const page = readListing(wrap([env({}), env({ name: 'api', org: 'acme' })]), 'acme');
      expect(page.environments.map((e) => e.name)).toEqual(['web', 'api']);
      expect(page.unnamed).toBe(0);
      expect(() => readListing(wrap([env({ org: null })]), 'acme')).toThrow(/malformed.*org/);
      expect(() => readListing(wrap([env({ org: 7 })]), 'acme')).toThrow(/malformed.*org/);
    },
  );
});
