/**
 * Fields whose items are other environments of the same org (a logical environment's members):
 * each must be one the manifests declare or the listing shows, and members are sent before the
 * environments that name them.
 */
import { FIELD_LIST, type FieldSpec } from './fields.ts';
import type { Change, DesiredEnvironment, ObservedEnvironment } from './model.ts';

/** The fields whose items name environments of the same org. */
export const MEMBER_FIELDS: readonly FieldSpec[] = FIELD_LIST.filter(
  (spec) => spec.items === 'environments',
);

/** A member that names no environment of the org. */
export interface UnknownMember {
  readonly env: DesiredEnvironment;
  readonly spec: FieldSpec;
  readonly member: string;
}

function membersOf(env: DesiredEnvironment, spec: FieldSpec): readonly string[] {
  return (env[spec.name] as readonly string[] | undefined) ?? [];
}

/** The members that are neither declared in the manifests nor shown by the listing. */
export function unknownMembers(
  desired: readonly DesiredEnvironment[],
  observed: readonly ObservedEnvironment[],
): UnknownMember[] {
  const naming = desired.filter((env) =>
    MEMBER_FIELDS.some((spec) => env[spec.name] !== undefined),
  );
  if (naming.length === 0) return [];
  const known = new Set([...desired.map((env) => env.name), ...observed.map((env) => env.name)]);
  const unknown: UnknownMember[] = [];
  for (const env of naming) {
    for (const spec of MEMBER_FIELDS) {
      for (const member of membersOf(env, spec)) {
        if (!known.has(member)) unknown.push({ env, spec, member });
      }
    }
  }
  return unknown;
}

/**
 * The changes in waves to send one after another: a change that names another change's
 * environment as a member waits for it (a service may refuse a member that does not exist yet).
 * Within a wave, order does not matter. A cycle of members cannot be ordered: its changes go
 * in the last wave, together.
 */
export function changeWaves<T extends Pick<Change, 'name' | 'desired'>>(
  changes: readonly T[],
): T[][] {
  let pending = [...changes];
  const waves: T[][] = [];
  while (pending.length > 0) {
    const waiting = new Set(pending.map((change) => change.name));
    const ready = pending.filter((change) =>
      MEMBER_FIELDS.every((spec) =>
        membersOf(change.desired, spec).every(
          (member) => member === change.name || !waiting.has(member),
        ),
      ),
    );
    if (ready.length === 0) {
      waves.push(pending);
      break;
    }
    waves.push(ready);
    const sent = new Set(ready);
    pending = pending.filter((change) => !sent.has(change));
  }
  return waves;
}
