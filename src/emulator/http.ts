/** node:http helpers of the emulator's handlers: JSON answers, bounded bodies, request targets. */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { errorMessage } from '../runtime/errors.ts';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Sends `body` as JSON (indented when `pretty`) unless an answer has started. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
  pretty = false,
): void {
  if (res.headersSent || res.destroyed) return;
  const text = pretty ? `${JSON.stringify(body, null, 2)}\n` : JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
  headers: OutgoingHttpHeaders = {},
): void {
  sendJson(res, status, { message, ...extra }, headers);
}

/** The body, or undefined once the client has gone or a 413 is sent (the rest never buffered). */
export function readBody(req: IncomingMessage, res: ServerResponse, limit: number) {
  const tooLarge = (): undefined => {
    sendError(res, 413, `Request body is larger than ${limit} bytes`);
    return undefined;
  };
  const declared = req.headers['content-length'];
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit)
    return Promise.resolve(tooLarge());
  return new Promise<Buffer | undefined>((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: Buffer | undefined): void => {
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else {
        req.resume();
        finish(tooLarge());
      }
    };
    const onEnd = (): void => finish(Buffer.concat(chunks, size));
    // 'close' before 'end': the client went away mid-body.
    const onGone = (): void => finish(undefined);
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export function parseJson(
  body: Buffer,
): { ok: true; value: unknown } | { ok: false; reason: string } {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    return { ok: false, reason: 'the body is not valid UTF-8' };
  }
  if (text.trim() === '')
    return { ok: false, reason: 'the body is empty; a JSON object is required' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, reason: `invalid JSON: ${errorMessage(error)}` };
  }
}

export function mediaType(header: string | undefined): string | undefined {
  return header?.split(';')[0]?.trim().toLowerCase();
}

/** True for 127.0.0.0/8 and ::1, including IPv4-mapped IPv6 forms. */
export function isLoopback(address: string | undefined): boolean {
  const v4 = address?.startsWith('::ffff:') ? address.slice(7) : address;
  return v4?.startsWith('127.') === true || address === '::1';
}

/** Splits a request target without normalizing it. */
export function splitTarget(target: string): { path: string; query: URLSearchParams } {
  const mark = target.indexOf('?');
  return mark < 0
    ? { path: target, query: new URLSearchParams() }
    : { path: target.slice(0, mark), query: new URLSearchParams(target.slice(mark + 1)) };
}

/** A query parameter as a whole number from 1 to `max` (`fallback` when absent), or undefined. */
export function wholeParameter(
  query: URLSearchParams,
  name: string,
  fallback: number,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  const raw = query.get(name);
  const number = raw === null ? fallback : /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
  return number >= 1 && number <= max ? number : undefined;
}

export function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** A request header's value for a message: its values joined, cut to 300 characters. */
export function cutHeader(value: string | readonly string[]): string {
  const text = typeof value === 'string' ? value : value.join(', ');
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}
