/**
 * Connections node:http could not turn into a request, or cut for being too slow: malformed HTTP,
 * oversized heads and the head and whole-request timeouts (slowloris protection). Each gets a raw
 * answer when the socket can still take one, and never crashes the process.
 */
import type { Duplex } from 'node:stream';
import * as http from 'node:http';
import type { Logger } from 'pino';
import type { RequestStats, TimeoutKind } from './stats.ts';

/** Raw answer for a request node:http could not parse; closes the connection. */
function rawAnswer(status: number, message: string): string {
  const body = JSON.stringify({ message });
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

function clientErrorAnswer(code: string | undefined): string {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return rawAnswer(431, 'Request header fields too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return rawAnswer(408, 'Request timeout');
    default:
      return rawAnswer(400, 'Bad request: the request could not be parsed as HTTP/1.1');
  }
}

/**
 * Which limit a timed-out connection broke. node:http reports both as one error code; its parser
 * holds an incoming message only once a head has arrived, so then the body was too slow.
 */
function timeoutKind(socket: Duplex): TimeoutKind {
  const parser: unknown = Reflect.get(socket, 'parser');
  const incoming: unknown =
    typeof parser === 'object' && parser !== null ? Reflect.get(parser, 'incoming') : null;
  return typeof incoming === 'object' && incoming !== null ? 'request' : 'headers';
}

/** The server's 'clientError' listener: counts timeouts, answers if it can, then drops the socket. */
export function handleClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  stats: RequestStats,
  logger: Logger,
): void {
  logger.debug({ code: error.code }, 'client error');
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') stats.timedOut(timeoutKind(socket));
  const message: unknown = Reflect.get(socket, '_httpMessage');
  const answering =
    typeof message === 'object' && message !== null && Reflect.get(message, 'headersSent') === true;
  if (error.code === 'ECONNRESET' || !socket.writable || answering) {
    socket.destroy();
    return;
  }
  socket.end(clientErrorAnswer(error.code));
}
