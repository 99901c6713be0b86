import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';

/**
 * A tiny real HTTP server for answers the emulator never gives (HTML error pages, truncated
 * JSON, redirects, envelopes): the client is still tested over real loopback HTTP. On a free
 * port, or on `port` (a service coming back where it was).
 */
export async function startFakeApi(
  handler: (req: IncomingMessage & { body: string }, res: ServerResponse) => void,
  port = 0,
) {
  const requests: { method: string; url: string; authorization: string | undefined }[] = [];
  const server = createServer((req, res) => {
    requests.push({
      method: req.method ?? '',
      url: req.url ?? '',
      authorization: req.headers.authorization,
    });
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () =>
      handler(Object.assign(req, { body: Buffer.concat(chunks).toString('utf8') }), res),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port nothing listens on (bound, then closed): a connection to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
