import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { readSecretFile } from '../config/tokens.ts';
import type { Clock } from '../core/clock.ts';
import { escapeJson } from '../core/escape.ts';
import { maskDeep } from '../core/mask.ts';
import { ConfigError } from '../runtime/errors.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { VERSION } from '../runtime/version.ts';
import type { Daemon } from './daemon.ts';
import { renderStatusPage } from './page.ts';
import { PAGE_SCRIPT, PAGE_STYLE } from './page-assets.ts';

/** A webhook body larger than this is refused (413): GitHub's push payloads fit with room. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** Reads the webhook's shared secret (`--webhook-secret-file`), once at start. */
export function readWebhookSecret(file: string, timeoutMs?: number): Promise<string> {
  return readSecretFile('--webhook-secret-file', file, 'shared secret', timeoutMs);
}

/**
 * Whether a peer address is this machine's loopback: 127.0.0.0/8, ::1, or an IPv4 loopback
 * mapped into IPv6 (::ffff:127.x.y.z). Only the socket's own address counts (never a header such
 * as X-Forwarded-For, which any caller can write).
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  const lower = address?.toLowerCase() ?? '';
  if (lower === '::1' || lower === '0:0:0:0:0:0:0:1') return true;
  return /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(lower);
}

/** Compares two secrets in constant time, whatever their lengths (both are hashed first). */
function sameSecret(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Whether a request carries the secret: `Authorization: Bearer <secret>`, or GitHub's
 * `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the body, keyed with the secret>`. 'none' when it
 * carries neither; 'invalid' when what it carries is wrong.
 */
export function webhookCredential(
  secret: string,
  headers: http.IncomingHttpHeaders,
  body: Buffer,
): 'none' | 'valid' | 'invalid' {
  const signature = headers['x-hub-signature-256'];
  const authorization = headers.authorization;
  if (signature === undefined && authorization === undefined) return 'none';
  const hmac = /^sha256=([0-9a-f]{64})$/i.exec(String(signature ?? '').trim())?.[1];
  const bearer = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
  const expected = createHmac('sha256', secret).update(body).digest('hex');
  const valid =
    (hmac !== undefined && sameSecret(hmac.toLowerCase(), expected)) ||
    (bearer !== undefined && sameSecret(bearer, secret));
  return valid ? 'valid' : 'invalid';
}

/**
 * Why a webhook may not start a pass, or undefined when it may. Without a configured secret every
 * caller may; with one, loopback callers (a git-sync sidecar in the same pod) need none, and
 * anyone else must present it.
 */
export function webhookRefusal(
  secret: string | undefined,
  remoteAddress: string | undefined,
  headers: http.IncomingHttpHeaders,
  body: Buffer,
): string | undefined {
  if (secret === undefined || isLoopbackAddress(remoteAddress)) return undefined;
  const credential = webhookCredential(secret, headers, body);
  if (credential === 'valid') return undefined;
  return credential === 'none'
    ? 'this address must send the webhook secret (Authorization: Bearer, or X-Hub-Signature-256)'
    : 'the webhook secret does not match';
}

/** A request's body, or undefined when it is larger than `limit` bytes (the rest is discarded). */
async function readBoundedBody(
  req: http.IncomingMessage,
  limit: number,
): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = Number(req.headers['content-length']) > limit ? Infinity : 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  return size <= limit ? Buffer.concat(chunks) : undefined;
}

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * The status page's headers: nothing loads but its own inline script and style (allowed by their
 * hashes), it fetches only its own origin, and it is never framed, sniffed or cached.
 */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': [
    "default-src 'none'",
    `script-src ${hash(PAGE_SCRIPT)}`,
    `style-src ${hash(PAGE_STYLE)}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const;

/** Turns a port already in use (or not ours to bind) into a configuration error with a hint. */
function listenError(error: unknown, listen: { host: string; port: number }): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${listen.port}`;
  if (code === 'EADDRINUSE') {
    return new ConfigError(
      `cannot listen on ${where}: the address is already in use (another envsync run?); pass --listen HOST:PORT (or ENVSYNC_LISTEN) with a free port, e.g. --listen 127.0.0.1:9465`,
    );
  }
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return new ConfigError(
      `cannot listen on ${where} (${code}); pass --listen HOST:PORT (or ENVSYNC_LISTEN) with an address of this machine and a port above 1023`,
    );
  }
  return error;
}

/**
 * The daemon's HTTP endpoints: / (the status page, docs/status-page.md), /healthz, /readyz,
 * /metrics, /status, POST /reconcile (compatible with git-sync's --webhook-url). No API token is
 * needed and none is ever shown; the webhook secret, when set, is never shown either. Every
 * answer is masked: JSON string by string, the page's model before it is escaped (escaped, a
 * secret could no longer be found; the page's own script and style stay as their hashes allow).
 */
export async function startDaemonServer(
  daemon: Daemon,
  listen: { host: string; port: number },
  logger: Logger,
  options: {
    readonly webhookSecret?: string | undefined;
    /** The time shown on the status page (the real clock by default). */
    readonly clock?: Clock;
  } = {},
): Promise<{ server: http.Server; url: string; close(): Promise<void> }> {
  const { mask } = daemon.secrets;
  const send = (res: http.ServerResponse, status: number, body: unknown): void => {
    const text = escapeJson(`${JSON.stringify(maskDeep(body, mask), null, 2)}\n`);
    res
      .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(text);
  };
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    switch (`${req.method ?? 'GET'} ${pathname}`) {
      case 'GET /healthz': {
        // The status code is liveness alone (503 only while the loop is wedged): a restart cures
        // a wedged loop, not an invalid manifest or a failing service. The body adds the level of
        // /status for people and for probes that read it (docs/status-page.md).
        const { live, reason } = daemon.liveness;
        const { health } = daemon.status();
        return send(
          res,
          live ? 200 : 503,
          live ? { status: 'ok', health } : { status: 'wedged', reason, health },
        );
      }
      case 'GET /readyz': {
        const { ready, reason } = daemon.ready;
        return send(
          res,
          ready ? 200 : 503,
          ready ? { status: 'ready' } : { status: 'not ready', reason },
        );
      }
      case 'GET /metrics': {
        const { registry } = daemon.metrics;
        const text = mask(await registry.metrics());
        res
          .writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' })
          .end(text);
        return;
      }
      case 'GET /status':
        return send(res, 200, daemon.status());
      case 'GET /': {
        const html = renderStatusPage({
          status: maskDeep(daemon.status(), mask),
          readiness: maskDeep(daemon.ready, mask),
          liveness: maskDeep(daemon.liveness, mask),
          api: mask(daemon.apiAddress),
          now: (options.clock ?? systemClock).now(),
          version: VERSION,
        });
        res.writeHead(200, PAGE_HEADERS).end(html);
        return;
      }
      case 'GET /favicon.ico':
        // Browsers ask for it with every page; a 404 would be an error in their console. The
        // page has no icon: nothing but its own inline script and style ever loads.
        res.writeHead(204, { 'cache-control': 'max-age=86400' }).end();
        return;
      case 'POST /reconcile': {
        // The size limit holds for every caller, loopback and no secret included.
        const body = await readBoundedBody(req, MAX_WEBHOOK_BODY_BYTES);
        if (body === undefined) {
          return send(res, 413, {
            message: `the body is larger than ${MAX_WEBHOOK_BODY_BYTES} bytes`,
          });
        }
        const remote = req.socket.remoteAddress;
        const refusal = webhookRefusal(options.webhookSecret, remote, req.headers, body);
        if (refusal !== undefined) {
          logger.warn({ remote }, `POST /reconcile refused: ${refusal}`);
          res.setHeader('www-authenticate', 'Bearer');
          return send(res, 401, { message: refusal });
        }
        const { runAt, joined } = daemon.webhook();
        return send(res, 202, {
          status: 'accepted',
          pass: joined ? 'joined the next webhook pass' : 'scheduled',
          runAt: new Date(runAt).toISOString(),
        });
      }
      default: {
        const known = ['/', '/healthz', '/readyz', '/metrics', '/status', '/reconcile'].includes(
          pathname,
        );
        if (known) res.setHeader('allow', pathname === '/reconcile' ? 'POST' : 'GET');
        return send(res, known ? 405 : 404, {
          message: known ? `${req.method ?? ''} is not allowed on ${pathname}` : 'not found',
        });
      }
    }
  };
  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'endpoint failed',
      );
      if (res.headersSent) res.destroy();
      else send(res, 500, { message: 'internal error' });
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    const failed = (error: Error) => reject(listenError(error, listen));
    server.once('error', failed);
    server.listen(listen.port, listen.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
