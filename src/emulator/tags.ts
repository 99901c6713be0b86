/**
 * Tags of an environment (kosli profile; docs/api-behaviour.md#tags):
 * `PATCH /api/v2/tags/{org}/environment/{name}`, body
 * `{"set_tags": {"key": "value"}, "remove_tags": ["key"]}`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiDeps } from './access.ts';
import { sendJson } from './http.ts';
import { liveEnvironmentName } from './one-environment.ts';
import { noteUnknownKeys, readValidBody, sendInvalid } from './request-body.ts';
import type { Validated } from './validation.ts';
import { describe, isRecord, isStringArray, toErrors } from './validation.ts';

/** The emulator's limits (production publishes none). */
export const MAX_TAG_KEY_LENGTH = 128;
export const MAX_TAG_VALUE_LENGTH = 1024;
export const MAX_TAGS = 100;

export interface TagChange {
  /** In the order given; a key never in both. */
  readonly set: readonly (readonly [string, string])[];
  readonly remove: readonly string[];
}

function keyProblem(key: string): string | undefined {
  if (key === '') return 'a tag key must not be empty';
  if (key.length > MAX_TAG_KEY_LENGTH) {
    return `the key '${key.slice(0, 40)}...' is longer than ${MAX_TAG_KEY_LENGTH} characters`;
  }
  return undefined;
}

function setTagsProblem(raw: unknown): string | undefined {
  if (!isRecord(raw)) return `must be an object of key -> value strings, got ${describe(raw)}`;
  for (const [key, value] of Object.entries(raw)) {
    const problem = keyProblem(key);
    if (problem !== undefined) return problem;
    if (typeof value !== 'string') {
      return `the value of '${key}' must be a string, got ${describe(value)}`;
    }
    if (value.length > MAX_TAG_VALUE_LENGTH) {
      return `the value of '${key}' is longer than ${MAX_TAG_VALUE_LENGTH} characters`;
    }
  }
  return undefined;
}

/** Validates a PATCH body, listing every problem at once. */
export function validateTagChange(body: Readonly<Record<string, unknown>>): Validated<TagChange> {
  const errors = new Map<string, string>();
  noteUnknownKeys(body, ['set_tags', 'remove_tags'], errors);
  const hasSet = Object.hasOwn(body, 'set_tags');
  const hasRemove = Object.hasOwn(body, 'remove_tags');
  if (!hasSet && !hasRemove) errors.set('payload', 'give set_tags, remove_tags or both');
  const setProblem = hasSet ? setTagsProblem(body.set_tags) : undefined;
  if (setProblem !== undefined) errors.set('set_tags', setProblem);
  const set: [string, string][] = isRecord(body.set_tags)
    ? Object.entries(body.set_tags).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string',
      )
    : [];
  const remove = hasRemove ? body.remove_tags : [];
  if (!isStringArray(remove)) {
    errors.set('remove_tags', `must be a list of tag keys, got ${describe(remove)}`);
  } else {
    const both = remove.find((key) => set.some(([setKey]) => setKey === key));
    const problem = remove.map(keyProblem).find((text) => text !== undefined);
    if (problem !== undefined) errors.set('remove_tags', problem);
    else if (both !== undefined) {
      errors.set('remove_tags', `'${both}' is also in set_tags; a key is set or removed, not both`);
    }
  }
  if (errors.size > 0 || !isStringArray(remove)) return { ok: false, errors: toErrors(errors) };
  return { ok: true, value: { set, remove } };
}

/**
 * The tags after `change`: a key set again keeps its place, new keys follow in the order given,
 * removed keys (present or not) are gone. Built from entries, so a key such as `__proto__` stays
 * an ordinary key.
 */
export function applyTagChange(
  tags: Readonly<Record<string, string>>,
  change: TagChange,
): Record<string, string> {
  const next = new Map(Object.entries(tags));
  for (const [key, value] of change.set) next.set(key, value);
  for (const key of change.remove) next.delete(key);
  return Object.fromEntries(next);
}

/** PATCH the tags of a live environment: 200 "OK", whether or not anything changed. */
export async function patchTags(
  req: IncomingMessage,
  res: ServerResponse,
  org: string,
  rawName: string,
  deps: ApiDeps,
): Promise<void> {
  const requested = await readValidBody(req, res, validateTagChange);
  if (requested === undefined) return;
  const name = liveEnvironmentName(res, org, rawName, deps);
  if (name === undefined) return;
  const env = deps.store.get(org, name);
  const tags = applyTagChange(env?.tags ?? {}, requested);
  const count = Object.keys(tags).length;
  if (count > MAX_TAGS) {
    sendInvalid(res, {
      set_tags: `an environment holds at most ${MAX_TAGS} tags; this change would leave ${count}`,
    });
    return;
  }
  deps.store.update(org, name, () => ({ tags }), deps.nowSeconds());
  sendJson(res, 200, 'OK');
}
