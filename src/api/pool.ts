import * as tls from 'node:tls';
import { Pool } from 'undici';

export type ConnectionPool = Pool;

/**
 * How long a connection (DNS, TCP, TLS) may take: --timeout, but at most undici's own default, so
 * that a host that drops packets is given up on as soon as before.
 */
export function connectTimeoutMs(timeoutMs: number): number {
  return Math.min(timeoutMs, 10_000);
}

/**
 * The keep-alive connections to the API's origin: as many as requests may run at once, one request
 * each at a time, every answer's headers and body bounded by --timeout, and TLS always verified.
 */
export function connectionPool(
  origin: string,
  options: {
    readonly concurrency: number;
    readonly timeoutMs: number;
    readonly ca?: string | undefined;
  },
): ConnectionPool {
  return new Pool(origin, {
    connections: Math.max(1, options.concurrency),
    pipelining: 1,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: {
      timeout: connectTimeoutMs(options.timeoutMs),
      // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment cannot turn verification off.
      rejectUnauthorized: true,
      // --ca-file adds to the default trust store; node's `ca` alone would replace it.
      ...(options.ca === undefined
        ? {}
        : { ca: [...tls.getCACertificates('default'), options.ca] }),
    },
  });
}
