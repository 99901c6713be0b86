import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST a receiver got. */
export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly json: Record<string, unknown>;
}

/** What a receiver does with the n-th request (0-based): answer, hang, or drop the connection. */
export type Behaviour = (
  n: number,
  received: Received,
) => { status: number; headers?: Record<string, string> } | 'hang' | 'drop';

/** A real webhook receiver on loopback; records every request, answered or not. */
export async function startReceiver(behaviour: Behaviour = () => ({ status: 204 })) {
  const all: Received[] = [];
  const hung = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        // Recorded as it came.
      }
      const received = { headers: req.headers, body, json };
      const n = all.length;
      all.push(received);
      const answer = behaviour(n, received);
      if (answer === 'hang') {
        hung.add(res);
        res.on('close', () => hung.delete(res));
        return;
      }
      if (answer === 'drop') {
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.status, answer.headers ?? {});
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    /** Every request, answered or not, retries included. */
    all,
    /** Requests held open right now. */
    hanging: () => hung.size,
    /** One entry per delivery (retries of one event share its X-Envsync-Delivery). */
    deliveries: () => [...new Map(all.map((r) => [r.headers['x-envsync-delivery'], r])).values()],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;
