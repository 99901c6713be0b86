import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { readSecretFile } from '../config/tokens.ts';

/** A webhook body larger than this is refused (413): GitHub's push payloads fit with room. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** Reads the webhook's shared secret (`--webhook-secret-file`), once at start. */
export function readWebhookSecret(file: string, timeoutMs?: number): Promise<string> {
  return readSecretFile('--webhook-secret-file', file, 'shared secret', timeoutMs);
}

/** Compares two secrets in constant time, whatever their lengths (both are hashed first). */
function sameSecret(a: string | Buffer, b: string | Buffer): boolean {
  return timingSafeEqual(
    createHash('sha256').update(a).digest(),
    createHash('sha256').update(b).digest(),
  );
}

/**
 * Whether a request carries the secret: `Authorization: Bearer <secret>`, or GitHub's
 * `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the body, keyed with the secret>`. 'none' when it
 * carries neither; 'invalid' when what it carries is wrong.
 */
export function webhookCredential(
  secret: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
): 'none' | 'valid' | 'invalid' {
  const signature = headers['x-hub-signature-256'];
  const authorization = headers.authorization;
  if (signature === undefined && authorization === undefined) return 'none';
  let valid = false;
  if (typeof signature === 'string') {
    const match = /^sha256=([0-9a-f]{64})$/i.exec(signature.trim());
    const expected = createHmac('sha256', secret).update(body).digest('hex');
    valid ||= match?.[1] !== undefined && sameSecret(match[1].toLowerCase(), expected);
  }
  if (typeof authorization === 'string') {
    const match = /^Bearer +(\S+) *$/i.exec(authorization);
    valid ||= match?.[1] !== undefined && sameSecret(match[1], secret);
  }
  return valid ? 'valid' : 'invalid';
}

/**
 * Reads a request body up to `limit` bytes; undefined as soon as it is larger (the rest is read
 * and discarded, within the server's request timeout, while the caller answers 413).
 */
export function readBoundedBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.resume();
      resolve(undefined);
    };
    req.on('data', onData);
    req.once('end', () => resolve(size <= limit ? Buffer.concat(chunks) : undefined));
    req.once('error', reject);
  });
}
