/**
 * The soak's witness: a loopback HTTP proxy between the writers (the daemon, and the hand edits)
 * and the emulator, that records every write the emulator answered, in the order it answered.
 * The emulator's request log keeps no bodies, so it cannot say which environment a PUT wrote or
 * with what; this can, and so tells a write that changed nothing (sent twice) from one that did.
 *
 * It passes everything through as it came: statuses, Retry-After, bodies. A connection the
 * emulator cuts (its injected resets) is cut towards the client too, so the client meets the
 * fault as it would without the proxy. Upstream connections are not kept alive: a kept one the
 * emulator closed while idle would fail a request with a reset the emulator never injected.
 * Nothing here prints, and no header (the token's) is ever kept.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One write the emulator answered 2xx: what it wrote, and who sent it. */
export interface LandedWrite {
  /** Order of the answers, from 1. */
  readonly seq: number;
  /** Epoch ms when the answer reached the proxy. */
  readonly at: number;
  readonly writer: 'daemon' | 'hand';
  /** The hand edit's id (its `x-soak-edit` header), for a hand write. */
  readonly editId: string | undefined;
  readonly org: string;
  readonly name: string;
  /** The fields the body carried (a field left out keeps its value). */
  readonly fields: Readonly<Record<string, unknown>>;
  readonly status: number;
}

export interface ProxyCounts {
  /** Requests passed through, by method. */
  readonly byMethod: Record<string, number>;
  /** Answers by status ("cut" for a connection the emulator cut). */
  readonly byStatus: Record<string, number>;
  /** Writes that were not the upsert or the PATCH of one environment (none expected). */
  otherWrites: number;
}

export interface SoakProxy {
  readonly url: string;
  readonly writes: LandedWrite[];
  readonly counts: ProxyCounts;
  /** Called for each landed write as it is recorded. */
  onWrite(listener: (write: LandedWrite) => void): void;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);
const UPSERT = /^\/api\/v2\/environments\/([^/?]+)$/;
/** The kosli dialect's update of one environment: its name in the path, the changed fields. */
const PATCH_ONE = /^\/api\/v2\/environments\/([^/?]+)\/([^/?]+)$/;

function bump(map: Record<string, number>, key: string): void {
  map[key] = (map[key] ?? 0) + 1;
}

/** Starts the proxy on 127.0.0.1 in front of `upstream` (an http:// origin). */
export async function startSoakProxy(upstream: string): Promise<SoakProxy> {
  const target = new URL(upstream);
  const writes: LandedWrite[] = [];
  const counts: ProxyCounts = { byMethod: {}, byStatus: {}, otherWrites: 0 };
  const listeners: ((write: LandedWrite) => void)[] = [];
  let seq = 0;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const method = req.method ?? 'GET';
      const requestTarget = req.url ?? '/';
      bump(counts.byMethod, method);
      const headers: IncomingHttpHeaders = { ...req.headers };
      const writer = headers['x-soak-writer'] === 'hand' ? 'hand' : 'daemon';
      const editId =
        typeof headers['x-soak-edit'] === 'string' ? headers['x-soak-edit'] : undefined;
      delete headers['x-soak-writer'];
      delete headers['x-soak-edit'];
      headers['connection'] = 'close';
      const up = request(
        {
          host: target.hostname,
          port: target.port,
          method,
          path: requestTarget,
          headers,
          agent: false,
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('error', () => res.socket?.destroy());
          answer.on('end', () => {
            if (!answer.complete) {
              bump(counts.byStatus, 'cut');
              res.socket?.destroy();
              return;
            }
            const status = answer.statusCode ?? 502;
            bump(counts.byStatus, String(status));
            const path = requestTarget.split('?', 1)[0] ?? '';
            if (method !== 'GET' && method !== 'HEAD' && status >= 200 && status < 300) {
              const put = method === 'PUT' ? UPSERT.exec(path) : null;
              const patch = method === 'PATCH' ? PATCH_ONE.exec(path) : null;
              let fields: Record<string, unknown> | undefined;
              try {
                fields = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
              } catch {
                fields = undefined;
              }
              const org = put?.[1] ?? patch?.[1];
              const name =
                patch?.[2] === undefined ? fields?.['name'] : decodeURIComponent(patch[2]);
              if (org === undefined || fields === undefined || typeof name !== 'string') {
                counts.otherWrites += 1;
              } else {
                const write: LandedWrite = {
                  seq: ++seq,
                  at: Date.now(),
                  writer,
                  editId,
                  org: decodeURIComponent(org),
                  name,
                  fields,
                  status,
                };
                writes.push(write);
                for (const listener of listeners) listener(write);
              }
            }
            const out: Record<string, string | string[]> = {};
            for (const [key, value] of Object.entries(answer.headers)) {
              if (value !== undefined && !HOP_BY_HOP.has(key)) out[key] = value;
            }
            const text = Buffer.concat(parts);
            out['content-length'] = String(text.length);
            if (!res.destroyed) res.writeHead(status, out).end(text);
          });
        },
      );
      // A reset injected by the emulator (or any failure to reach it): cut the client's
      // connection too, so it sees what it would have seen.
      up.on('error', () => {
        bump(counts.byStatus, 'cut');
        res.socket?.destroy();
      });
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    writes,
    counts,
    onWrite: (listener) => listeners.push(listener),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
