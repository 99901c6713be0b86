import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Scrub } from '../core/redact.ts';
import type { Daemon } from './daemon.ts';

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json'): void {
  const text = type === 'application/json' ? `${JSON.stringify(body, null, 2)}\n` : String(body);
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(text);
}

/**
 * The daemon's HTTP endpoints: /healthz, /readyz, /metrics, /status, POST /reconcile
 * (compatible with git-sync's --webhook-url). No token is needed and none is ever shown.
 */
export async function startDaemonServer(
  daemon: Daemon,
  listen: { host: string; port: number },
  logger: Logger,
  scrub: Scrub = (text) => text,
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const route = `${req.method ?? 'GET'} ${url.pathname}`;
    switch (route) {
      case 'GET /healthz': {
        const { healthy, reason } = daemon.healthy;
        return send(
          res,
          healthy ? 200 : 503,
          healthy ? { status: 'ok' } : { status: 'wedged', reason },
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
      case 'GET /metrics':
        return send(
          res,
          200,
          await daemon.metrics.registry.metrics(),
          daemon.metrics.registry.contentType,
        );
      case 'GET /status':
        // Service text in it was scrubbed when it was read; this scrubs whatever else got in.
        res
          .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
          .end(scrub(`${JSON.stringify(daemon.status(), null, 2)}\n`));
        return;
      case 'POST /reconcile':
        req.resume();
        daemon.trigger('webhook');
        return send(res, 202, { status: 'accepted' });
      default: {
        const known = ['/healthz', '/readyz', '/metrics', '/status', '/reconcile'].includes(
          url.pathname,
        );
        if (known) res.setHeader('allow', url.pathname === '/reconcile' ? 'POST' : 'GET');
        return send(res, known ? 405 : 404, {
          message: known ? `${req.method ?? ''} is not allowed on ${url.pathname}` : 'not found',
        });
      }
    }
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.error(
        { err: error instanceof Error ? error.message : String(error) },
        'endpoint failed',
      );
      if (!res.headersSent) send(res, 500, { message: 'internal error' });
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () => {
      server.off('error', reject);
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
