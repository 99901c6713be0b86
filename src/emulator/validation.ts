/** The service's error shape for a request body, and the name rule (shared with no client code). */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { MAX_BODY_BYTES, mediaType, parseJson, readBody, sendError } from './http.ts';

export type FieldErrors = Record<string, string>;
export type Validated<T> = { ok: true; value: T } | { ok: false; errors: FieldErrors };

/** The service's rule for environment names, also the emulator's for orgs and policies. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const NAME_RULE =
  'must start with a letter or number, and only contain letters, numbers, `.`, `-` and `_`';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A zod error function: "is required" for a missing value, else "must be WHAT, got ...". */
export function expected(what: string): (issue: { input: unknown }) => string {
  return ({ input }) => {
    if (input === undefined) return 'is required';
    const kind = input === null ? 'null' : Array.isArray(input) ? 'an array' : `a ${typeof input}`;
    return `must be ${what}, got ${kind}`;
  };
}

export const nameSchema = z
  .string({ error: expected('a string') })
  .regex(NAME_PATTERN, { error: ({ input }) => `'${String(input)}' ${NAME_RULE}` });

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

/** zod's issues in the service's shape: the first text per path (`payload`: the body itself). */
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

export function validate<T>(schema: z.ZodType<T>, value: unknown): Validated<T> {
  const result = schema.safeParse(value);
  return result.success
    ? { ok: true, value: result.data }
    : { ok: false, errors: fieldErrors(result.error) };
}

/** Sends the service's validation failure (400 unless said) with `errors`. */
export function sendInvalid(res: ServerResponse, errors: FieldErrors, status = 400): void {
  sendError(res, status, 'Input payload validation failed', { errors });
}

/** An API request's JSON body checked by `schema`, or undefined once answered (415, 413, 400). */
export async function readChecked<T>(
  req: IncomingMessage,
  res: ServerResponse,
  schema: z.ZodType<T>,
  { status = 400, emptyIsObject = false } = {},
): Promise<T | undefined> {
  const json = mediaType(req.headers['content-type']) === 'application/json';
  const body = json || emptyIsObject ? await readBody(req, res, MAX_BODY_BYTES) : Buffer.alloc(0);
  if (body === undefined) return undefined;
  const empty = emptyIsObject && body.length === 0;
  if (!json && !empty) {
    sendError(res, 415, 'Content-Type must be application/json');
    return undefined;
  }
  const parsed = empty ? { ok: true as const, value: {} } : parseJson(body);
  const result = parsed.ok
    ? validate(schema, parsed.value)
    : { ok: false as const, errors: { payload: parsed.reason } };
  if (result.ok) return result.value;
  sendInvalid(res, result.errors, status);
  return undefined;
}
