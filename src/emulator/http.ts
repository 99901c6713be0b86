/** Small node:http helpers shared by the emulator's API and admin handlers. */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';

/**
 * Sends `body` as JSON (indented when `pretty`, for documents people read). Does nothing when the
 * answer has already started or the socket is gone.
 */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
  { pretty = false }: { readonly pretty?: boolean } = {},
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

/** Sends `{"message": message}` plus any extra fields. */
export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
  headers: OutgoingHttpHeaders = {},
): void {
  sendJson(res, status, { message, ...extra }, headers);
}

export type BodyResult =
  | { readonly kind: 'ok'; readonly body: Buffer }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'aborted' };

/**
 * Reads the request body, keeping at most `limit` bytes. A declared or actual size over the limit
 * resolves `too-large` at once; the rest of the body is then read and thrown away by node:http as
 * the answer ends, never buffered.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit) {
    return Promise.resolve({ kind: 'too-large' });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BodyResult): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('aborted', onAbort);
      req.off('close', onAbort);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        chunks.length = 0;
        // Keep the stream flowing with nobody listening: the rest is discarded.
        req.resume();
        finish({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => finish({ kind: 'ok', body: Buffer.concat(chunks, size) });
    const onAbort = (): void => finish({ kind: 'aborted' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('aborted', onAbort);
    // 'close' before 'end': the client went away mid-body.
    req.on('close', onAbort);
  });
}

export type JsonResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Decodes strict UTF-8 and parses JSON. */
export function parseJson(body: Buffer): JsonResult {
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
    return {
      ok: false,
      reason: `invalid JSON: ${error instanceof Error ? error.message : 'parse error'}`,
    };
  }
}

/** True for 127.0.0.0/8 and ::1, including IPv4-mapped IPv6 forms. */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** Splits a request target into path and query without normalizing it. */
export function splitTarget(target: string): { path: string; query: URLSearchParams } {
  const mark = target.indexOf('?');
  return mark < 0
    ? { path: target, query: new URLSearchParams() }
    : { path: target.slice(0, mark), query: new URLSearchParams(target.slice(mark + 1)) };
}

/** decodeURIComponent that returns undefined instead of throwing. */
export function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** A header value is never quoted longer than this in a message, however long it came. */
const MAX_HEADER_SHOWN = 300;

/** A request header's value for a message: its values joined, cut to MAX_HEADER_SHOWN. */
export function cutHeader(value: string | readonly string[]): string {
  const text = typeof value === 'string' ? value : value.join(', ');
  return text.length > MAX_HEADER_SHOWN ? `${text.slice(0, MAX_HEADER_SHOWN - 3)}...` : text;
}
