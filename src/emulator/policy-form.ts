/**
 * The upload of a policy document: a `multipart/form-data` body with a `payload` field (JSON
 * `{name, description, type: "env", comment}`) and a `policy_file` file part holding the YAML.
 * Parsed by the platform's own form parser (`Response.formData()`), then validated here.
 */
import type { PolicyUpload } from './policy-store.ts';
import type { Validated } from './validation.ts';
import { describe, isRecord, toErrors } from './validation.ts';

const PAYLOAD_KEYS: readonly string[] = ['name', 'description', 'type', 'comment'];
const FORM_PARTS: readonly string[] = ['payload', 'policy_file'];
/** The one policy type production's clients send for environment policies. */
const POLICY_TYPE = 'env';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** `multipart/form-data`, whatever its parameters (the parser needs `boundary`). */
export function isMultipartContentType(header: string | undefined): boolean {
  return header?.split(';')[0]?.trim().toLowerCase() === 'multipart/form-data';
}

export type FormResult =
  | { readonly ok: true; readonly form: FormData }
  | { readonly ok: false; readonly reason: string };

/** Parses a whole multipart body; a body the parser refuses (or no boundary) is not a form. */
export async function parseMultipart(body: Buffer, contentType: string): Promise<FormResult> {
  try {
    const form = await new Response(body, { headers: { 'content-type': contentType } }).formData();
    return { ok: true, form };
  } catch {
    return {
      ok: false,
      reason: 'not valid multipart/form-data (check the boundary and every part)',
    };
  }
}

/** The payload's fields, into `errors` under `payload.<key>`. */
function readPayload(
  text: string,
  pattern: RegExp,
  errors: Map<string, string>,
): { name: string; description: string | undefined } | undefined {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    errors.set('payload', 'must be a JSON object; it is not valid JSON');
    return undefined;
  }
  if (!isRecord(payload)) {
    errors.set('payload', `must be a JSON object, got ${describe(payload)}`);
    return undefined;
  }
  for (const key of Object.keys(payload)) {
    if (!PAYLOAD_KEYS.includes(key)) errors.set(`payload.${key}`, 'unknown field');
  }
  const { name, description, type, comment } = payload;
  if (!Object.hasOwn(payload, 'name')) errors.set('payload.name', 'is required');
  else if (typeof name !== 'string') {
    errors.set('payload.name', `must be a string, got ${describe(name)}`);
  } else if (!pattern.test(name)) {
    errors.set('payload.name', `'${name}' does not match ${pattern.source}`);
  }
  if (!Object.hasOwn(payload, 'type')) errors.set('payload.type', 'is required');
  else if (type !== POLICY_TYPE) errors.set('payload.type', `must be "${POLICY_TYPE}"`);
  if (description !== undefined && typeof description !== 'string') {
    errors.set('payload.description', `must be a string, got ${describe(description)}`);
  }
  if (comment !== undefined && comment !== null && typeof comment !== 'string') {
    errors.set('payload.comment', `must be a string or null, got ${describe(comment)}`);
  }
  if (typeof name !== 'string' || (description !== undefined && typeof description !== 'string')) {
    return undefined;
  }
  return { name, description };
}

/** The YAML of the `policy_file` part, into `errors` when it is not usable. */
async function readPolicyFile(
  part: NonNullable<ReturnType<FormData['get']>>,
  errors: Map<string, string>,
): Promise<string | undefined> {
  if (typeof part === 'string') {
    errors.set('policy_file', 'must be a file part (with a filename), not a plain field');
    return undefined;
  }
  let text: string;
  try {
    text = utf8.decode(await part.arrayBuffer());
  } catch {
    errors.set('policy_file', 'is not valid UTF-8');
    return undefined;
  }
  if (text.trim() === '') {
    errors.set('policy_file', 'is empty; it must hold the policy YAML');
    return undefined;
  }
  return text;
}

/** Validates a parsed form, listing every problem at once. */
export async function validatePolicyForm(
  form: FormData,
  pattern: RegExp,
): Promise<Validated<PolicyUpload>> {
  const errors = new Map<string, string>();
  for (const key of new Set(form.keys())) {
    if (!FORM_PARTS.includes(key)) errors.set(key, 'unknown form field');
    else if (form.getAll(key).length > 1) errors.set(key, 'is given more than once');
  }
  const payloadPart = form.get('payload');
  const filePart = form.get('policy_file');
  let payload: ReturnType<typeof readPayload>;
  if (payloadPart === null) errors.set('payload', 'is required');
  else if (typeof payloadPart !== 'string') {
    errors.set('payload', 'must be a plain form field holding JSON, not a file');
  } else payload = readPayload(payloadPart, pattern, errors);
  let policyYaml: string | undefined;
  if (filePart === null) errors.set('policy_file', 'is required');
  else policyYaml = await readPolicyFile(filePart, errors);
  if (errors.size > 0 || payload === undefined || policyYaml === undefined) {
    return { ok: false, errors: toErrors(errors) };
  }
  return { ok: true, value: { ...payload, policyYaml } };
}
