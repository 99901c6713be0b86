/**
 * What a state file's text is trusted for (pure; state/state-file.ts reads the file). Reading is
 * forgiving: anything envsync cannot be sure of is a warning and an empty state, which costs at
 * most one PUT per environment whose listing hides a field, never a wrong change (docs/state.md).
 */

import { isPlainObject } from '../core/fields.ts';

/** Why a state file is not used, and what happens at load ("starting empty ..."). */
export interface StateRefusal {
  readonly kind: 'bad';
  readonly what: string;
  readonly atLoad: string;
  /** For the warning's structured fields. */
  readonly fields: Record<string, unknown>;
}

export type StateVerdict<T> = { readonly kind: 'ok'; readonly orgs: T } | StateRefusal;

/** The state file's format as the judge needs it (state/codec.ts gives the real one). */
export interface StateFormat<T> {
  /** The versions it reads, the one it writes last. */
  readonly versions: readonly number[];
  /**
   * The `orgs` of a file of one of those versions; undefined at the first thing that is not a
   * record, after naming it to `malformed` when it is a record's content that is wrong.
   */
  readOrgs(
    version: number,
    entries: Record<string, unknown>,
    malformed: (org: string, env: string) => void,
  ): T | undefined;
}

function refuse(what: string, atLoad: string, fields: Record<string, unknown> = {}): StateRefusal {
  return { kind: 'bad', what, atLoad, fields };
}

/** A state file that exists and cannot be read (EACCES, EISDIR, ...): `code` is the system's. */
export function unreadableState(code: string | undefined): StateRefusal {
  return refuse(
    'state file cannot be read',
    'starting empty (one extra PUT per environment whose listing hides include_scaling/policies)',
    { code },
  );
}

/**
 * Judges a state file's text: its orgs when it is whole, of a version this envsync reads, and
 * written for `api` (or for no address in particular); otherwise why it is not used.
 */
export function judgeStateText<T>(
  text: string,
  api: string | undefined,
  format: StateFormat<T>,
): StateVerdict<T> {
  const rewritten = 'starting empty (it will be rewritten)';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return refuse('state file is not valid JSON', rewritten);
  }
  const newest = format.versions.at(-1) ?? 0;
  const version = (json as { version?: unknown } | null)?.version;
  if (typeof version === 'number' && version > newest) {
    return refuse(
      `state file has version ${version}, newer than this envsync understands (${newest})`,
      'starting empty',
      { version },
    );
  }
  const shapeIsWrong = refuse('state file has an unexpected shape', rewritten);
  if (!isPlainObject(json)) return shapeIsWrong;
  const { api: recordedFor, orgs: entries } = json;
  if (
    typeof version !== 'number' ||
    !format.versions.includes(version) ||
    (recordedFor !== undefined && typeof recordedFor !== 'string') ||
    !isPlainObject(entries)
  ) {
    return shapeIsWrong;
  }
  if (api !== undefined && recordedFor !== undefined && recordedFor !== api) {
    return refuse('state file was written for another API address', 'starting empty', {
      recordedFor,
      api,
    });
  }
  let malformed: StateRefusal | undefined;
  const orgs = format.readOrgs(version, entries, (org, env) => {
    malformed = refuse('state file has a malformed record', rewritten, { org, env });
  });
  if (orgs === undefined) return malformed ?? shapeIsWrong;
  return { kind: 'ok', orgs };
}
