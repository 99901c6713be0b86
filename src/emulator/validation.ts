/**
 * The result type and the small guards every validator of the emulator shares. None of this is
 * shared with envsync's client: one misreading of the contract must not be able to hide itself on
 * both sides.
 */

/** Field (or `payload`) -> what is wrong with it, as sent in a 400's `errors`. */
export type FieldErrors = Record<string, string>;

export type Validated<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly errors: FieldErrors };

/** True for a JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for an array holding strings only. */
export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** Names the JSON kind of `value` for an error message ("a number", "null", "an array"). */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Builds an errors object from a Map, so a key like "__proto__" stays an ordinary key. */
export function toErrors(errors: Map<string, string>): FieldErrors {
  return Object.fromEntries(errors);
}

/** The failure for a body that is not a JSON object at all. */
export function notAnObject(value: unknown): Validated<never> {
  return {
    ok: false,
    errors: toErrors(new Map([['payload', `must be a JSON object, got ${describe(value)}`]])),
  };
}
