/**
 * What every validator of the emulator shares: the service's error shape, zod's issues turned into
 * it, and the name rule. None of this is shared with envsync's client: one misreading of the API
 * must not be able to hide itself on both sides.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { MAX_BODY_BYTES, mediaType, parseJson, readBody, sendError } from './http.ts';

/** Field (or `payload`) -> what is wrong with it, as sent in a 400's `errors`. */
export type FieldErrors = Record<string, string>;

export type Validated<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly errors: FieldErrors };

/** The `message` of every answer about a request body, as production words it. */
const VALIDATION_FAILED = 'Input payload validation failed';

/**
 * The service's rule for environment names (and the emulator's for org and policy names): its
 * command-line client's help, in its words. The April 2026 schema also allowed `~`; the service no
 * longer does, and the contract shows no rule (docs/api-behaviour.md#environment-names).
 */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const NAME_RULE =
  'must start with a letter or number, and only contain letters, numbers, `.`, `-` and `_`';

/** True for a JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Names the JSON kind of `value` for an error message ("a number", "null", "an array"). */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** A zod error function: "is required" for a missing value, else "must be WHAT, got ...". */
export function expected(what: string): (issue: { input: unknown }) => string {
  return ({ input }) =>
    input === undefined ? 'is required' : `must be ${what}, got ${describe(input)}`;
}

/** A string that follows the name rule. */
export const nameSchema = z
  .string({ error: expected('a string') })
  .regex(NAME_PATTERN, { error: ({ input }) => `'${String(input)}' ${NAME_RULE}` });

/** A JSON object with exactly these keys (any other is an "unknown field"). */
export function jsonObject<S extends z.ZodRawShape>(shape: S) {
  return z.strictObject(shape, { error: expected('a JSON object') });
}

/** A list of strings; anything else "must be WHAT" (the field is named, not an index). */
export function stringList(what: string) {
  return z.custom<string[]>(
    (value) => Array.isArray(value) && value.every((item) => typeof item === 'string'),
    { error: expected(what) },
  );
}

/** An object of string values, kept as given (`__proto__` too, which z.record drops). */
export const stringMap = (error: string) =>
  z
    .custom<Record<string, string>>(
      (value) => isRecord(value) && Object.values(value).every((item) => typeof item === 'string'),
      { error },
    )
    .transform((value) => Object.fromEntries(Object.entries(value)));

/**
 * zod's issues in the service's shape: one text per field (the first), named by its path
 * (`orgs.acme[0].name`; `payload` for the body itself), each unknown key "unknown field".
 */
function fieldErrors(error: z.ZodError): FieldErrors {
  const errors = new Map<string, string>();
  for (const issue of error.issues) {
    const unknown = issue.code === 'unrecognized_keys';
    for (const path of unknown ? issue.keys.map((key) => [...issue.path, key]) : [issue.path]) {
      const field = path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`));
      const name = field.join('').replace(/^\./, '') || 'payload';
      if (!errors.has(name)) errors.set(name, unknown ? 'unknown field' : issue.message);
    }
  }
  // From a Map, so a key such as `__proto__` stays an ordinary key.
  return Object.fromEntries(errors);
}

/** `value` checked by `schema`: the result, or the errors. */
export function validate<T>(schema: z.ZodType<T>, value: unknown): Validated<T> {
  const result = schema.safeParse(value);
  return result.success
    ? { ok: true, value: result.data }
    : { ok: false, errors: fieldErrors(result.error) };
}

/** Sends the validation failure (400 unless said) with `errors`. */
export function sendInvalid(res: ServerResponse, errors: FieldErrors, status = 400): void {
  sendError(res, status, VALIDATION_FAILED, { errors });
}

/**
 * An API request's JSON body checked by `schema`: its value, or undefined once the answer has been
 * sent. The body must be `Content-Type: application/json` (else 415), at most 1 MiB (else 413),
 * strict UTF-8 JSON (else 400); `emptyIsObject`: an empty body of any type or none reads as `{}`.
 * The schema's refusal is a 400 unless `status` says otherwise.
 */
export async function readChecked<T>(
  req: IncomingMessage,
  res: ServerResponse,
  schema: z.ZodType<T>,
  { status = 400, emptyIsObject = false } = {},
): Promise<T | undefined> {
  const json = mediaType(req.headers['content-type']) === 'application/json';
  const body = json || emptyIsObject ? await readBody(req, res, MAX_BODY_BYTES) : Buffer.alloc(0);
  if (body === undefined) return undefined;
  const parsed =
    emptyIsObject && body.length === 0 ? { ok: true as const, value: {} } : parseJson(body);
  if (!json && !(emptyIsObject && body.length === 0)) {
    sendError(res, 415, 'Content-Type must be application/json');
    return undefined;
  }
  const result = parsed.ok
    ? validate(schema, parsed.value)
    : { ok: false as const, errors: { payload: parsed.reason } };
  if (result.ok) return result.value;
  sendInvalid(res, result.errors, status);
  return undefined;
}
