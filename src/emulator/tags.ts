/** The kosli profile's tags of an environment (docs/emulator.md; docs/api-behaviour.md#tags). */
import type { Call } from './access.ts';
import { liveEnvironment } from './environments.ts';
import { sendJson } from './http.ts';
import { jsonObject, readChecked, sendInvalid, stringList, stringMap } from './validation.ts';

/** The emulator's limits (production publishes none). */
const MAX_KEY = 128;
const MAX_VALUE = 1024;
const MAX_TAGS = 100;

function keyProblem(key: string): string | undefined {
  if (key === '') return 'a tag key must not be empty';
  if (key.length <= MAX_KEY) return undefined;
  return `the key '${key.slice(0, 40)}...' is longer than ${MAX_KEY} characters`;
}

const TAG_CHANGE = jsonObject({
  set_tags: stringMap('must be an object of key -> value strings').superRefine((tags, ctx) => {
    for (const [key, value] of Object.entries(tags)) {
      const problem =
        keyProblem(key) ??
        (value.length > MAX_VALUE
          ? `the value of '${key}' is longer than ${MAX_VALUE} characters`
          : undefined);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }
  }),
  remove_tags: stringList('a list of tag keys').superRefine((keys, ctx) => {
    const problem = keys.map(keyProblem).find((text) => text !== undefined);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  }),
})
  .partial()
  .superRefine(({ set_tags: set, remove_tags: remove }, ctx) => {
    if (set === undefined && remove === undefined)
      ctx.addIssue({ code: 'custom', message: 'give set_tags, remove_tags or both' });
    const both = remove?.find((key) => set !== undefined && Object.hasOwn(set, key));
    if (both !== undefined) {
      const message = `'${both}' is also in set_tags; a key is set or removed, not both`;
      ctx.addIssue({ code: 'custom', path: ['remove_tags'], message });
    }
  });

/** PATCH /api/v2/tags/{org}/environment/{name}: a key set again keeps its place. */
export async function patchTags(call: Call): Promise<void> {
  const { req, res, org, deps } = call;
  const change = await readChecked(req, res, TAG_CHANGE);
  if (change === undefined) return;
  const env = liveEnvironment(call);
  if (env === undefined) return;
  // From entries, so a key such as `__proto__` stays an ordinary key.
  const next = new Map(Object.entries(env.tags));
  for (const [key, value] of Object.entries(change.set_tags ?? {})) next.set(key, value);
  for (const key of change.remove_tags ?? []) next.delete(key);
  if (next.size > MAX_TAGS) {
    const message = `an environment holds at most ${MAX_TAGS} tags; this change would leave ${next.size}`;
    return sendInvalid(res, { set_tags: message });
  }
  deps.store.update(org, env.name, { tags: Object.fromEntries(next) });
  sendJson(res, 200, 'OK');
}
