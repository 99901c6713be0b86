/**
 * Policies (kosli profile; docs/api-behaviour.md#policies): the documents of an org
 * (`GET /api/v2/policies/{org}[/{name}]`, and `PUT /api/v2/policies/{org}` as multipart/form-data
 * with a `payload` field and a `policy_file` file part), and attaching and detaching them
 * (`POST`/`DELETE /api/v2/environments/{org}/{name}/policies`, `{"policy_names": [...]}`).
 */
import { z } from 'zod';
import { shownSegment, type Call } from './access.ts';
import { liveName } from './environments.ts';
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
    if (names.length === 0)
      ctx.addIssue({ code: 'custom', message: 'must name at least one policy' });
    else if (bad !== undefined) ctx.addIssue({ code: 'custom', message: `'${bad}' ${NAME_RULE}` });
  }),
});

/**
 * Attaches (`POST`) or detaches (`DELETE`) policies. Attaching needs a document of each name in
 * the org (else a 400 naming each missing one, and nothing is attached); an attached name stays
 * once. Detaching a name that is not attached is not an error; detaching the last one makes the
 * environment's compliance unknown (the store's rule).
 */
export async function changeAttachedPolicies(call: Call): Promise<void> {
  const { req, res, org, deps } = call;
  const body = await readChecked(req, res, POLICY_NAMES);
  if (body === undefined) return;
  const name = liveName(call);
  if (name === undefined) return;
  const names = [...new Set(body.policy_names)];
  const attach = req.method === 'POST';
  const missing = attach
    ? names.filter((policy) => deps.store.policy(org, policy) === undefined)
    : [];
  if (missing.length > 0) {
    const problems = missing.map(
      (policy) => `policy '${policy}' does not exist in organization '${org}'`,
    );
    sendInvalid(res, { policy_names: problems.join('; ') });
    return;
  }
  const attached = deps.store.get(org, name)?.policies ?? [];
  const policies = attach
    ? [...attached, ...names.filter((policy) => !attached.includes(policy))]
    : attached.filter((policy) => !names.includes(policy));
  deps.store.update(org, name, { policies });
  sendJson(res, 200, 'OK');
}

/** GET every policy document of the org, sorted by name. */
export function listPolicies({ res, org, deps }: Call): void {
  sendJson(res, 200, deps.store.policies(org));
}

/** GET one policy document, or 404. */
export function readPolicy(call: Call): void {
  const { res, org, name: rawName, deps } = call;
  const name = decodeSegment(rawName) ?? rawName;
  const document = deps.store.policy(org, name);
  if (document !== undefined) sendJson(res, 200, document);
  else {
    const shown = shownSegment(name, call);
    sendError(res, 404, `Policy named '${shown}' does not exist for organization '${org}'`);
  }
}

/** A form part given more than once. */
const TWICE = Symbol('twice');

/** What a form part must be, for the error of one that is missing, repeated or of another kind. */
const part =
  (what: string) =>
  ({ input }: { input: unknown }) =>
    input === undefined
      ? 'is required'
      : input === TWICE
        ? 'is given more than once'
        : `must be ${what}`;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The upload's form: a `payload` field holding JSON `{name, type: "env", description, comment}`
 * (`comment` is checked and not kept: the published version has no place for it) and a
 * `policy_file` file part holding the YAML, non-empty UTF-8, not parsed.
 */
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

/**
 * PUT a policy document: 201 when it is created, 200 when it existed (whether or not the upload
 * changed it); the body is the document as now held. Parsed by the platform's own form parser.
 */
export async function putPolicy({ req, res, org, deps }: Call): Promise<void> {
  const type = req.headers['content-type'];
  if (type === undefined || mediaType(type) !== 'multipart/form-data') {
    sendError(res, 415, 'Content-Type must be multipart/form-data');
    return;
  }
  const body = await readBody(req, res, MAX_BODY_BYTES);
  if (body === undefined) return;
  let form: FormData;
  try {
    form = await new Response(body, { headers: { 'content-type': type } }).formData();
  } catch {
    sendInvalid(res, {
      payload: 'not valid multipart/form-data (check the boundary and every part)',
    });
    return;
  }
  const parts = await Promise.all(
    [...new Set(form.keys())].map(async (key) => {
      const [value = '', ...more] = form.getAll(key);
      const read = typeof value === 'string' ? value : new Uint8Array(await value.arrayBuffer());
      return [key, more.length > 0 ? TWICE : read] as const;
    }),
  );
  const upload = validate(FORM, Object.fromEntries(parts));
  if (!upload.ok) {
    sendInvalid(res, upload.errors);
    return;
  }
  const { payload, policy_file: yaml } = upload.value;
  const created = deps.store.savePolicy(org, payload.name, payload.description, yaml);
  sendJson(res, created ? 201 : 200, deps.store.policy(org, payload.name));
}
