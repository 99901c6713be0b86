import fc from 'fast-check';

/**
 * Values of every JSON-ish kind but the expected one, for properties that compare a fast check
 * with its schema: null, numbers, booleans, short strings, empty lists and mappings, and an
 * object that is not a plain mapping.
 */
export const odd: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.boolean(),
  fc.string({ maxLength: 6 }),
  fc.constant([]),
  fc.constant({}),
  fc.constant(new Date(0)),
);

/** Mostly `usual`, now and then (1 in `weight + 1`) an odd value in its place. */
export const sometimes = <T>(usual: fc.Arbitrary<T>, weight = 10): fc.Arbitrary<unknown> =>
  fc.oneof({ weight, arbitrary: usual }, { weight: 1, arbitrary: odd });
