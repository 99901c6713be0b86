import { createHash } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { webhookVerdict } from './daemon-policy.ts';
import type { Clock } from '../core/clock.ts';
import { escapeJson } from '../core/escape.ts';
import { maskDeep, type Mask } from '../core/mask.ts';
import * as http from 'node:http';
import { ConfigError } from '../runtime/errors.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { VERSION } from '../runtime/version.ts';
import type { Daemon } from './daemon.ts';
import { PAGE_SCRIPT, PAGE_STYLE, renderStatusPage } from './status-page.ts';
import { MAX_WEBHOOK_BODY_BYTES, readBoundedBody, webhookCredential } from './webhook.ts';

/** Answers with `body`, masked: JSON (a value, each of its strings masked) or text. */
function send(
  res: ServerResponse,
  mask: Mask,
  status: number,
  body: unknown,
  type = 'application/json',
): void {
  const text =
    type === 'application/json'
      ? escapeJson(`${JSON.stringify(maskDeep(body, mask), null, 2)}\n`)
      : mask(String(body));
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(text);
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

/**
 * POST /reconcile: a body over MAX_WEBHOOK_BODY_BYTES is refused (413) whoever sends it; with a
 * webhook secret, a caller that is not on loopback must carry it (else 401 and no pass); then the
 * pass starts, or the post joins the next webhook pass.
 */
async function reconcileWebhook(
  daemon: Daemon,
  req: IncomingMessage,
  res: ServerResponse,
  secret: string | undefined,
  logger: Logger,
): Promise<void> {
  const { mask } = daemon.secrets;
  const remote = req.socket.remoteAddress;
  const needsCheck = webhookVerdict(secret !== undefined, remote, 'none').kind === 'refuse';
  // The size limit holds for every caller, loopback and no secret included.
  const body = await readBoundedBody(req, MAX_WEBHOOK_BODY_BYTES);
  if (body === undefined) {
    return send(res, mask, 413, {
      message: `the body is larger than ${MAX_WEBHOOK_BODY_BYTES} bytes`,
    });
  }
  if (secret !== undefined && needsCheck) {
    const verdict = webhookVerdict(true, remote, webhookCredential(secret, req.headers, body));
    if (verdict.kind === 'refuse') {
      logger.warn({ remote }, `POST /reconcile refused: ${verdict.reason}`);
      res.setHeader('www-authenticate', 'Bearer');
      return send(res, mask, 401, { message: verdict.reason });
    }
  }
  const { runAt, joined } = daemon.webhook();
  return send(res, mask, 202, {
    status: 'accepted',
    pass: joined ? 'joined the next webhook pass' : 'scheduled',
    runAt: new Date(runAt).toISOString(),
  });
}

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
 * The daemon's HTTP endpoints: / (the status page, docs/status-page.md), /healthz, /readyz, /metrics, /status, POST /reconcile
 * (compatible with git-sync's --webhook-url). No API token is needed and none is ever shown; the
 * webhook secret, when set, is never shown either.
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
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const { mask } = daemon.secrets;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    switch (route) {
      case 'GET /healthz': {
        // The status code is liveness alone (503 only while the loop is wedged): a restart cures
        // a wedged loop, not an invalid manifest or a failing service. The body adds the level of
        // /status for people and for probes that read it (docs/status-page.md).
        const { healthy, reason } = daemon.healthy;
        const { health } = daemon.status();
        return send(
          res,
          mask,
          healthy ? 200 : 503,
          healthy ? { status: 'ok', health } : { status: 'wedged', reason, health },
        );
      }
      case 'GET /readyz': {
        const { ready, reason } = daemon.ready;
        return send(
          res,
          mask,
          ready ? 200 : 503,
          ready ? { status: 'ready' } : { status: 'not ready', reason },
        );
      }
      case 'GET /metrics':
        return send(
          res,
          mask,
          200,
          await daemon.metrics.registry.metrics(),
          daemon.metrics.registry.contentType,
        );
      case 'GET /status':
        res
          .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
          .end(escapeJson(`${JSON.stringify(maskDeep(daemon.status(), mask), null, 2)}\n`));
        return;
      case 'GET /': {
        // The model is masked before it is rendered: escaped, a secret could no longer be found
        // (the page's own script and style stay as their hashes allow).
        const html = renderStatusPage({
          status: maskDeep(daemon.status(), mask),
          readiness: maskDeep(daemon.ready, mask),
          health: maskDeep(daemon.healthy, mask),
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
      case 'POST /reconcile':
        return reconcileWebhook(daemon, req, res, options.webhookSecret, logger);
      default: {
        const known = ['/', '/healthz', '/readyz', '/metrics', '/status', '/reconcile'].includes(
          url.pathname,
        );
        if (known) res.setHeader('allow', url.pathname === '/reconcile' ? 'POST' : 'GET');
        return send(res, mask, known ? 405 : 404, {
          message: known ? `${req.method ?? ''} is not allowed on ${url.pathname}` : 'not found',
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
      if (!res.headersSent) send(res, daemon.secrets.mask, 500, { message: 'internal error' });
      else res.destroy();
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
