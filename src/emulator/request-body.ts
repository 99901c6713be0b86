/**
 * Reading the JSON body of an API request, with the rules of the environment PUT: a JSON
 * `Content-Type` (415), at most MAX_BODY_BYTES (413), strict UTF-8 JSON (400), and no key the
 * route does not define (400, "unknown field").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseJson, readBody, sendError } from './http.ts';
import { MAX_BODY_BYTES } from './options.ts';
import type { FieldErrors, Validated } from './validation.ts';
import { describe, isRecord } from './validation.ts';

/** The `message` of every 400 about a request body, as production words it. */
export const VALIDATION_FAILED = 'Input payload validation failed';

/** `application/json`, with or without parameters such as `charset`. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const mediaType = header.split(';')[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

/** Sends the 400 validation failure with `errors`. */
export function sendInvalid(res: ServerResponse, errors: FieldErrors): void {
  sendError(res, 400, VALIDATION_FAILED, { errors });
}

/**
 * Reads the body whole, at most MAX_BODY_BYTES: the bytes, or undefined once the answer (413) has
 * been sent or the client has gone.
 */
export async function readBounded(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<Buffer | undefined> {
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body.kind === 'aborted') return undefined;
  if (body.kind === 'too-large') {
    sendError(res, 413, `Request body is larger than ${MAX_BODY_BYTES} bytes`);
    return undefined;
  }
  return body.body;
}

/**
 * Reads a JSON body: `{ value }`, or undefined once an answer (415, 413, 400) has been sent.
 * `emptyIsObject`: an empty body (of any or no type) reads as `{}`, for routes whose body is
 * always `{}`.
 */
export async function readJsonRequest(
  req: IncomingMessage,
  res: ServerResponse,
  { emptyIsObject = false }: { readonly emptyIsObject?: boolean } = {},
): Promise<{ readonly value: unknown } | undefined> {
  const json = isJsonContentType(req.headers['content-type']);
  if (!json && !emptyIsObject) {
    sendError(res, 415, 'Content-Type must be application/json');
    return undefined;
  }
  const body = await readBounded(req, res);
  if (body === undefined) return undefined;
  if (emptyIsObject && body.length === 0) return { value: {} };
  if (!json) {
    sendError(res, 415, 'Content-Type must be application/json');
    return undefined;
  }
  const parsed = parseJson(body);
  if (!parsed.ok) {
    sendInvalid(res, { payload: parsed.reason });
    return undefined;
  }
  return { value: parsed.value };
}

/**
 * Reads a body that must be a JSON object: the object, or undefined once an answer has been sent.
 * Its keys are the caller's to check (`noteUnknownKeys`), with every other problem at once.
 */
export async function readJsonObject(
  req: IncomingMessage,
  res: ServerResponse,
  options: { readonly emptyIsObject?: boolean } = {},
): Promise<Readonly<Record<string, unknown>> | undefined> {
  const body = await readJsonRequest(req, res, options);
  if (body === undefined) return undefined;
  if (!isRecord(body.value)) {
    sendInvalid(res, { payload: `must be a JSON object, got ${describe(body.value)}` });
    return undefined;
  }
  return body.value;
}

/**
 * A JSON object body, read and then checked by `validate`: its value, or undefined once a 4xx
 * (every problem at once) was sent.
 */
export async function readValidBody<T>(
  req: IncomingMessage,
  res: ServerResponse,
  validate: (body: Readonly<Record<string, unknown>>) => Validated<T>,
): Promise<T | undefined> {
  const body = await readJsonObject(req, res);
  if (body === undefined) return undefined;
  const input = validate(body);
  if (!input.ok) {
    sendInvalid(res, input.errors);
    return undefined;
  }
  return input.value;
}

/** Notes every key of `body` that is not in `allowed` as an "unknown field". */
export function noteUnknownKeys(
  body: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
  errors: Map<string, string>,
  prefix = '',
): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) errors.set(`${prefix}${key}`, 'unknown field');
  }
}
