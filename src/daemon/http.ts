import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { isLoopbackHost } from '../config/api-url.ts';
import { readSecretFile } from '../config/tokens.ts';
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

/** Compares two secrets in constant time, whatever their lengths (both are hashed first). */
function sameSecret(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * Why a webhook may not start a pass, or undefined when it may: with a secret configured, a caller
 * but loopback (a git-sync sidecar) must send it as `Authorization: Bearer <secret>` or as GitHub's
 * `X-Hub-Signature-256: sha256=<HMAC-SHA256 of the body>`.
 */
export function webhookRefusal(
  secret: string | undefined,
  remoteAddress: string | undefined,
  headers: http.IncomingHttpHeaders,
  body: Buffer,
): string | undefined {
  // The socket's peer, never a header such as X-Forwarded-For, which any caller can write.
  if (secret === undefined || isLoopbackHost(remoteAddress ?? '')) return undefined;
  const signature = headers['x-hub-signature-256'];
  const { authorization } = headers;
  if (signature === undefined && authorization === undefined)
    return 'this address must send the webhook secret (Authorization: Bearer, or X-Hub-Signature-256)';
  const hmac = /^sha256=([0-9a-f]{64})$/i.exec(String(signature ?? '').trim())?.[1];
  const bearer = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
  const expected = createHmac('sha256', secret).update(body).digest('hex');
  const valid =
    (hmac !== undefined && sameSecret(hmac.toLowerCase(), expected)) ||
    (bearer !== undefined && sameSecret(bearer, secret));
  return valid ? undefined : 'the webhook secret does not match';
}

/** A request's body, or undefined when it is larger than `limit` bytes (the rest is discarded). */
async function readBoundedBody(req: http.IncomingMessage, limit: number) {
  const chunks: Buffer[] = [];
  let size = Number(req.headers['content-length']) > limit ? Infinity : 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  }
  return size <= limit ? Buffer.concat(chunks) : undefined;
}

const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Nothing loads but the page's own script and style, and it is never framed, sniffed or cached. */
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

const PATHS = ['/', '/healthz', '/readyz', '/metrics', '/status', '/reconcile'];

/** A port already in use, or not ours to bind, as a configuration error with what to do. */
function listenError(error: unknown, listen: { host: string; port: number }): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${listen.port}`;
  const pass = 'pass --listen HOST:PORT (or ENVSYNC_LISTEN) with';
  if (code === 'EADDRINUSE') {
    return new ConfigError(
      `cannot listen on ${where}: the address is already in use (another envsync run?); ${pass} a free port, e.g. --listen 127.0.0.1:9465`,
    );
  }
  if (code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    return new ConfigError(
      `cannot listen on ${where} (${code}); ${pass} an address of this machine and a port above 1023`,
    );
  }
  return error;
}

/**
 * The daemon's endpoints (docs/daemon.md): the status page, /healthz, /readyz, /metrics, /status
 * and POST /reconcile (git-sync's --webhook-url). No token is needed and no secret ever shown:
 * every answer is masked, the page's model before it is escaped.
 */
export async function startDaemonServer(
  daemon: Daemon,
  listen: { host: string; port: number },
  logger: Logger,
  options: { readonly webhookSecret?: string | undefined } = {},
): Promise<{ server: http.Server; url: string; close(): Promise<void> }> {
  const { mask } = daemon.secrets;
  const reply = (res: http.ServerResponse, status: number, type: string, text: string) =>
    void res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(text);
  const send = (res: http.ServerResponse, status: number, body: unknown) => {
    const json = `${JSON.stringify(maskDeep(body, mask), null, 2)}\n`;
    reply(res, status, 'application/json', escapeJson(json));
  };
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    switch (`${req.method ?? 'GET'} ${pathname}`) {
      case 'GET /healthz': {
        // The code is liveness alone: a restart cures a wedged loop, not a broken manifest or a
        // failing service. The body adds the health level (docs/status-page.md).
        const { live, reason } = daemon.liveness;
        const { health } = daemon.status();
        const body = live ? { status: 'ok', health } : { status: 'wedged', reason, health };
        return send(res, live ? 200 : 503, body);
      }
      case 'GET /readyz': {
        const { ready, reason } = daemon.ready;
        const body = ready ? { status: 'ready' } : { status: 'not ready', reason };
        return send(res, ready ? 200 : 503, body);
      }
      case 'GET /metrics': {
        const { registry } = daemon.metrics;
        return reply(res, 200, registry.contentType, mask(await registry.metrics()));
      }
      case 'GET /status':
        return send(res, 200, daemon.status());
      case 'GET /': {
        const html = renderStatusPage({
          status: maskDeep(daemon.status(), mask),
          readiness: maskDeep(daemon.ready, mask),
          liveness: maskDeep(daemon.liveness, mask),
          api: mask(daemon.apiAddress),
          now: systemClock.now(),
          version: VERSION,
        });
        res.writeHead(200, PAGE_HEADERS).end(html);
        return;
      }
      case 'GET /favicon.ico':
        // Browsers ask for it with every page: no icon, and no error in their console.
        res.writeHead(204, { 'cache-control': 'max-age=86400' }).end();
        return;
      case 'POST /reconcile': {
        // The size limit holds for every caller, loopback and no secret included.
        const body = await readBoundedBody(req, MAX_WEBHOOK_BODY_BYTES);
        if (body === undefined) {
          const message = `the body is larger than ${MAX_WEBHOOK_BODY_BYTES} bytes`;
          return send(res, 413, { message });
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
        if (!PATHS.includes(pathname)) return send(res, 404, { message: 'not found' });
        res.setHeader('allow', pathname === '/reconcile' ? 'POST' : 'GET');
        return send(res, 405, { message: `${req.method ?? ''} is not allowed on ${pathname}` });
      }
    }
  };
  const server = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const err = error instanceof Error ? error.message : String(error);
      logger.error({ err }, 'endpoint failed');
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
