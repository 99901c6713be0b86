import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny real HTTP server for answers the emulator never gives (HTML error pages, truncated
 * JSON, redirects, envelopes): the client is still tested over real loopback HTTP.
 */
export async function startFakeApi(
  handler: (req: IncomingMessage & { body: string }, res: ServerResponse) => void,
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
