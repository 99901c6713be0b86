/** Policy documents and attaching them (docs/emulator.md; docs/api-behaviour.md#policies). */
import { z } from 'zod';
import { shownSegment, type Call } from './access.ts';
import { liveEnvironment } from './environments.ts';
import { decodeSegment, MAX_BODY_BYTES, mediaType, readBody, sendError, sendJson } from './http.ts';
import {
  expected,
  jsonObject,
  NAME_PATTERN,
  NAME_RULE,
  nameSchema,
  readChecked,
  sendInvalid,
  stringList,
  validate,
} from './validation.ts';

const POLICY_NAMES = jsonObject({
  policy_names: stringList('a list of policy names').superRefine((names, ctx) => {
    const bad = names.find((name) => !NAME_PATTERN.test(name));
    const message = names.length === 0 ? 'must name at least one policy' : `'${bad}' ${NAME_RULE}`;
    if (names.length === 0 || bad !== undefined) ctx.addIssue({ code: 'custom', message });
  }),
});

/** Attaches (`POST`, each name once, all or none) or detaches (`DELETE`) policies. */
export async function changeAttachedPolicies(call: Call): Promise<void> {
  const { req, res, org, deps } = call;
  const body = await readChecked(req, res, POLICY_NAMES);
  if (body === undefined) return;
  const env = liveEnvironment(call);
  if (env === undefined) return;
  const names = [...new Set(body.policy_names)];
  const attach = req.method === 'POST';
  const missing = names.filter((name) => attach && deps.store.policy(org, name) === undefined);
  if (missing.length > 0) {
    const problem = (name: string) => `policy '${name}' does not exist in organization '${org}'`;
    return sendInvalid(res, { policy_names: missing.map(problem).join('; ') });
  }
  const attached = env.policies ?? [];
  const policies = attach
    ? [...attached, ...names.filter((name) => !attached.includes(name))]
    : attached.filter((name) => !names.includes(name));
  deps.store.update(org, env.name, { policies });
  sendJson(res, 200, 'OK');
}

export function listPolicies({ res, org, deps }: Call): void {
  sendJson(res, 200, deps.store.policies(org));
}

export function readPolicy(call: Call): void {
  const { res, org, name: rawName, deps } = call;
  const name = decodeSegment(rawName) ?? rawName;
  const document = deps.store.policy(org, name);
  if (document !== undefined) return sendJson(res, 200, document);
  const shown = shownSegment(name, call);
  sendError(res, 404, `Policy named '${shown}' does not exist for organization '${org}'`);
}

const TWICE = Symbol('twice');

/** The error of a form part that is missing, repeated or not `what`. */
const part =
  (what: string) =>
  ({ input }: { input: unknown }) =>
    input === undefined
      ? 'is required'
      : input === TWICE
        ? 'is given more than once'
        : `must be ${what}`;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The upload's form; `comment` is checked and not kept (a version has no place for it). */
const FORM = z.strictObject({
  payload: z
    .string({ error: part('a plain form field holding JSON, not a file') })
    .transform((text, ctx): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object; it is not valid JSON' });
        return z.NEVER;
      }
    })
    .pipe(
      jsonObject({
        name: nameSchema,
        type: z.literal('env', {
          error: ({ input }) => (input === undefined ? 'is required' : 'must be "env"'),
        }),
        description: z.string({ error: expected('a string') }).optional(),
        comment: z.string({ error: expected('a string or null') }).nullish(),
      }),
    ),
  policy_file: z
    .instanceof(Uint8Array, { error: part('a file part (with a filename), not a plain field') })
    .transform((bytes, ctx) => {
      try {
        const yaml = utf8.decode(bytes);
        if (yaml.trim() !== '') return yaml;
        ctx.addIssue({ code: 'custom', message: 'is empty; it must hold the policy YAML' });
      } catch {
        ctx.addIssue({ code: 'custom', message: 'is not valid UTF-8' });
      }
      return z.NEVER;
    }),
});

/** PUT /api/v2/policies/{org}: 201 created or 200; read by the platform's own form parser. */
export async function putPolicy({ req, res, org, deps }: Call): Promise<void> {
  const type = req.headers['content-type'];
  if (type === undefined || mediaType(type) !== 'multipart/form-data')
    return sendError(res, 415, 'Content-Type must be multipart/form-data');
  const body = await readBody(req, res, MAX_BODY_BYTES);
  if (body === undefined) return;
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': type } }).formData();
  } catch {
    const payload = 'not valid multipart/form-data (check the boundary and every part)';
    return sendInvalid(res, { payload });
  }
  const parts = await Promise.all(
    [...new Set(form.keys())].map(async (key) => {
      const [value = '', ...more] = form.getAll(key);
      const read = typeof value === 'string' ? value : new Uint8Array(await value.arrayBuffer());
      return [key, more.length > 0 ? TWICE : read] as const;
    }),
  );
  const upload = validate(FORM, Object.fromEntries(parts));
  if (!upload.ok) return sendInvalid(res, upload.errors);
  const { payload, policy_file: yaml } = upload.value;
  const created = deps.store.savePolicy(org, payload.name, payload.description, yaml);
  sendJson(res, created ? 201 : 200, deps.store.policy(org, payload.name));
}
