/**
 * A plain mapping, as JSON and YAML parsers build them: an object whose prototype is
 * Object.prototype or null. Arrays, dates and class instances are not.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** A map with no prototype: a key named like an Object method (an environment's name) is just a key. */
export function emptyMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
