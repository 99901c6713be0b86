/**
 * Policies (kosli profile; docs/api-behaviour.md#policies): the documents of an org
 * (`GET /api/v2/policies/{org}[/{name}]`, and `PUT /api/v2/policies/{org}` as multipart/form-data
 * with a `payload` field and a `policy_file` file part), and attaching and detaching them
 * (`POST`/`DELETE /api/v2/environments/{org}/{name}/policies`, `{"policy_names": [...]}`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { shownSegment, type ApiDeps } from './access.ts';
import { liveName } from './environments.ts';
import { decodeSegment, MAX_BODY_BYTES, mediaType, readBody, sendError, sendJson } from './http.ts';
import type { PolicyUpload } from './store.ts';
import {
  expected,
  fieldErrors,
  jsonObject,
  NAME_PATTERN,
  NAME_RULE,
  nameSchema,
  readChecked,
  sendInvalid,
  stringList,
  type FieldErrors,
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
export async function changeAttachedPolicies(
  req: IncomingMessage,
  res: ServerResponse,
  org: string,
  rawName: string,
  deps: ApiDeps,
): Promise<void> {
  const body = await readChecked(req, res, POLICY_NAMES);
  if (body === undefined) return;
  const name = liveName(res, org, rawName, deps);
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
  deps.store.update(org, name, { policies }, deps.nowSeconds());
  sendJson(res, 200, 'OK');
}

/** GET every policy document of the org, sorted by name. */
export function listPolicies(res: ServerResponse, org: string, deps: ApiDeps): void {
  sendJson(res, 200, deps.store.policies(org));
}

/** GET one policy document, or 404. */
export function readPolicy(res: ServerResponse, org: string, rawName: string, deps: ApiDeps): void {
  const name = decodeSegment(rawName) ?? rawName;
  const document = deps.store.policy(org, name);
  if (document !== undefined) sendJson(res, 200, document);
  else {
    const shown = shownSegment(name, res, deps.tokens);
    sendError(res, 404, `Policy named '${shown}' does not exist for organization '${org}'`);
  }
}

/** The upload's `payload` field: JSON `{name, type: "env", description, comment}`. */
const PAYLOAD = jsonObject({
  name: nameSchema,
  type: z.literal('env', {
    error: ({ input }) => (input === undefined ? 'is required' : 'must be "env"'),
  }),
  description: z.string({ error: expected('a string') }).optional(),
  // Checked and not kept: the published version has no place for it.
  comment: z
    .string({ error: expected('a string or null') })
    .nullable()
    .optional(),
});

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The form's problems into `errors`, or the upload. */
async function readForm(form: FormData, errors: FieldErrors): Promise<PolicyUpload | undefined> {
  for (const key of new Set(form.keys())) {
    if (key !== 'payload' && key !== 'policy_file') errors[key] = 'unknown form field';
    else if (form.getAll(key).length > 1) errors[key] = 'is given more than once';
  }
  const payloadPart = form.get('payload');
  let payload: z.infer<typeof PAYLOAD> | undefined;
  if (payloadPart === null) errors['payload'] ??= 'is required';
  else if (typeof payloadPart !== 'string')
    errors['payload'] ??= 'must be a plain form field holding JSON, not a file';
  else {
    let value: unknown;
    try {
      value = JSON.parse(payloadPart);
    } catch {
      value = undefined;
    }
    const result = PAYLOAD.safeParse(value);
    if (result.success) payload = result.data;
    else if (value === undefined)
      errors['payload'] ??= 'must be a JSON object; it is not valid JSON';
    else Object.assign(errors, fieldErrors(result.error, 'payload.'));
  }
  const file = form.get('policy_file');
  let policyYaml: string | undefined;
  if (file === null) errors['policy_file'] ??= 'is required';
  else if (typeof file === 'string')
    errors['policy_file'] ??= 'must be a file part (with a filename), not a plain field';
  else {
    try {
      policyYaml = utf8.decode(await file.arrayBuffer());
    } catch {
      errors['policy_file'] ??= 'is not valid UTF-8';
    }
    if (policyYaml?.trim() === '')
      errors['policy_file'] ??= 'is empty; it must hold the policy YAML';
  }
  if (payload === undefined || policyYaml === undefined || Object.keys(errors).length > 0)
    return undefined;
  return { name: payload.name, description: payload.description, policyYaml };
}

/**
 * PUT a policy document: 201 when it is created, 200 when it existed (whether or not the upload
 * changed it); the body is the document as now held. Parsed by the platform's own form parser.
 */
export async function putPolicy(
  req: IncomingMessage,
  res: ServerResponse,
  org: string,
  deps: ApiDeps,
): Promise<void> {
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
  // Built from entries, so a part named like `__proto__` stays an ordinary key.
  const errors: FieldErrors = Object.create(null) as FieldErrors;
  const upload = await readForm(form, errors);
  if (upload === undefined) {
    sendInvalid(res, Object.fromEntries(Object.entries(errors)));
    return;
  }
  const created = deps.store.savePolicy(org, upload, deps.nowSeconds());
  sendJson(res, created ? 201 : 200, deps.store.policy(org, upload.name));
}
