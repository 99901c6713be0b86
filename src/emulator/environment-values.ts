/** Small pure helpers over stored environments: order, copies and comparisons. */
import type { EnvironmentInput, StoredEnvironment } from './store-types.ts';

/** Compares by UTF-16 code units, so the order never depends on the machine's locale. */
export function byName(a: StoredEnvironment, b: StoredEnvironment): number {
  if (a.name < b.name) return -1;
  if (a.name > b.name) return 1;
  return 0;
}

export function copyEnvironment(env: StoredEnvironment): StoredEnvironment {
  return {
    ...env,
    policies: env.policies === null ? null : [...env.policies],
    tags: { ...env.tags },
    included_environments:
      env.included_environments === null ? null : [...env.included_environments],
  };
}

/** Null and [] count as the same list: both mean "none". */
export function sameList(a: readonly string[] | null, b: readonly string[] | null): boolean {
  const left = a ?? [];
  const right = b ?? [];
  return left.length === right.length && left.every((item, i) => item === right[i]);
}

/** The same keys with the same values, in any order. */
export function sameTags(
  a: Readonly<Record<string, string>>,
  b: Readonly<Record<string, string>>,
): boolean {
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => Object.hasOwn(b, key) && a[key] === b[key])
  );
}

/** The members an environment ends up with after an update to `input.type`. */
export function membersAfter(
  existing: StoredEnvironment,
  input: EnvironmentInput,
): string[] | null {
  if (input.type !== 'logical') return null;
  if (input.included_environments !== undefined) return [...input.included_environments];
  return existing.type === 'logical' ? [...(existing.included_environments ?? [])] : [];
}
