/**
 * A plain mapping, as JSON and YAML parsers build them: an object whose prototype is
 * Object.prototype or null. Arrays, dates and class instances are not.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
