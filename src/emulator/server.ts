/** `startEmulator`: each request through fault injection to its route, logged; a graceful close. */
import { once, setMaxListeners } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import * as http from 'node:http';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { shownTarget, tokenMasker, type ApiDeps } from './access.ts';
import { handleAdmin } from './admin.ts';
import { FaultInjector, type FaultDecision } from './faults.ts';
import { sendError, splitTarget } from './http.ts';
import { resolveOptions, type EmulatorOptions, type Sleep } from './options.ts';
import { loadStoreFile, storeWriter } from './persist.ts';
import { handleApi, matchRoute, routeKey } from './routes.ts';
import { RequestStats, type RequestLogEntry, type TimeoutKind } from './stats.ts';
import { EnvironmentStore } from './store.ts';

export interface RunningEmulator {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 10_000;
/** Longer paths are cut in the request log, so one huge URL cannot fill the memory. */
const MAX_LOGGED_PATH = 2048;
/** What the request log says of the faults a request met, filled in as they happen. */
type FaultRecord = Pick<RequestLogEntry, 'fault' | 'latencyMs'>;

/** The requests in flight, which a graceful close lets finish; `onIdle` runs as each ends then. */
function inFlightRequests(sleep: Sleep, onIdle: () => void) {
  const active = new Set<ServerResponse>();
  const hung = new Set<ServerResponse>();
  const stopping = new AbortController();
  const closing = stopping.signal;
  // Every delayed request listens for the close: many at once is normal, not a leak.
  setMaxListeners(0, closing);
  return {
    active,
    hung,
    track(res: ServerResponse): void {
      active.add(res);
      if (closing.aborted) res.setHeader('connection', 'close');
      res.once('close', () => {
        active.delete(res);
        hung.delete(res);
        if (closing.aborted) onIdle();
      });
    },
    hang(res: ServerResponse): void {
      hung.add(res);
      if (closing.aborted) res.destroy();
    },
    /** Waits `ms`, or less once closing, even with a sleep that ignores the signal. */
    async delay(ms: number): Promise<void> {
      const waiting = new AbortController();
      const closed = once(closing, 'abort', { signal: waiting.signal }).catch(() => undefined);
      if (!closing.aborted) await Promise.race([sleep(ms, closing), closed]);
      waiting.abort();
    },
    stop(): void {
      stopping.abort();
      for (const res of active) if (!res.headersSent) res.setHeader('connection', 'close');
      for (const res of hung) res.destroy();
    },
  };
}

/**
 * Answers what node:http could not parse or cut as too slow. Returns the limit a timed-out
 * connection broke: its parser holds an incoming message only once the head has arrived.
 */
function answerClientError(
  { code }: NodeJS.ErrnoException,
  socket: Duplex,
): TimeoutKind | undefined {
  const get = (from: unknown, key: string): unknown =>
    typeof from === 'object' && from !== null ? Reflect.get(from, key) : undefined;
  const timeout = code === 'ERR_HTTP_REQUEST_TIMEOUT';
  const answering = get(get(socket, '_httpMessage'), 'headersSent') === true;
  if (code === 'ECONNRESET' || !socket.writable || answering) socket.destroy();
  else {
    const [status, text] =
      code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request header fields too large']
        : timeout
          ? [408, 'Request timeout']
          : [400, 'Bad request: the request could not be parsed as HTTP/1.1'];
    const body = JSON.stringify({ message: text });
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\n` +
        'content-type: application/json; charset=utf-8\r\n' +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  }
  if (!timeout) return undefined;
  return get(get(socket, 'parser'), 'incoming') instanceof Object ? 'request' : 'headers';
}

function formatUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const config = resolveOptions(options);
  const { logger, profile, seed } = config;
  const nowSeconds = (): number => config.now() / 1000;
  let writer: ReturnType<typeof storeWriter> | undefined;
  const store = new EnvironmentStore(nowSeconds, () => writer?.schedule());
  if (config.dataFile !== undefined) {
    const loaded = await loadStoreFile(config.dataFile, nowSeconds());
    if (loaded !== undefined) store.replace(loaded);
    writer = storeWriter(config.dataFile, () => store.toDocument(), logger);
    logger.info({ file: config.dataFile, environments: store.size }, 'data file');
  }
  if (config.orgs === null) logger.warn('no --org given: every organization exists');
  if (config.tokens === null)
    logger.warn('no --token given: any well-formed Bearer token is accepted');
  const faults = new FaultInjector(config.faults, seed, () => performance.now());
  const stats = new RequestStats(config.requestLogSize);
  const inFlight = inFlightRequests(config.sleep, () =>
    setImmediate(() => server.closeIdleConnections()),
  );
  let url = '';
  const api: ApiDeps = {
    profile,
    orgs: config.orgs,
    tokens: config.tokens,
    mask: tokenMasker(config.tokens?.keys() ?? []),
    store,
    baseUrl: () => url,
    faults: () => faults.settings,
    hold: (ms: number) => inFlight.delay(ms),
  };
  const reset = (): void => {
    store.replace({ version: 1, orgs: {} });
    stats.reset();
    faults.update(config.faults);
    faults.reseed(seed);
    logger.info('emulator reset');
  };

  /** Carries out a fault; true when it has dealt with the request, false when it goes on. */
  const applyFault = async (decision: FaultDecision, res: ServerResponse, record: FaultRecord) => {
    if (decision.kind === 'throttle') {
      record.fault = 'throttle';
      stats.injected('throttled');
      const wait = String(decision.retryAfterSeconds);
      const headers = { 'retry-after': wait };
      sendError(res, 429, `Rate limit exceeded; retry after ${wait} s`, {}, headers);
      return true;
    }
    if (decision.latencyMs > 0) {
      // Recorded before the wait, so a client that gives up meanwhile is still logged as delayed.
      Object.assign(record, { fault: 'latency', latencyMs: decision.latencyMs });
      stats.injected('latency');
      await inFlight.delay(decision.latencyMs);
      if (res.destroyed) return true;
    }
    if (decision.outcome === 'normal') return false;
    record.fault = decision.outcome;
    stats.injected(decision.outcome);
    if (decision.outcome === 'reset') res.socket?.destroy();
    else if (decision.outcome === 'hang') inFlight.hang(res);
    else sendError(res, 503, 'Service unavailable (injected fault)');
    return true;
  };

  const handleRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    const { path, query } = splitTarget(target);
    const route = matchRoute(path, profile);
    inFlight.track(res);
    if (route.kind === 'admin')
      return handleAdmin(req, res, route.name, query, { store, stats, faults, nowSeconds, reset });
    const shown = shownTarget(target, api.mask, req.headers.authorization);
    const started = performance.now();
    const time = new Date(config.now()).toISOString();
    const record: FaultRecord = {};
    const key = routeKey(method, route);
    stats.received(method, key);
    res.once('close', () => {
      const entry: RequestLogEntry = {
        time,
        method,
        path: shown.length > MAX_LOGGED_PATH ? `${shown.slice(0, MAX_LOGGED_PATH)}...` : shown,
        route: key,
        status: res.headersSent ? res.statusCode : null,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        ...record,
      };
      stats.completed(entry);
      const { time: _arrived, ...fields } = entry;
      logger.debug(fields, 'request');
    });
    const decision = path.startsWith('/api/') ? faults.decide() : undefined;
    if (decision !== undefined && (await applyFault(decision, res, record))) return;
    if (route.kind === 'none') {
      const text = `Not found: no route for ${method} ${splitTarget(shown).path.slice(0, 200)}`;
      return sendError(res, 404, text);
    }
    const conflict = (): boolean => {
      if (decision?.kind !== 'admit' || !decision.conflict) return false;
      record.fault = 'conflict';
      stats.injected('conflict');
      return true;
    };
    await handleApi(req, res, route, query, api, conflict);
  };

  const shorter = Math.min(config.headersTimeoutMs, config.requestTimeoutMs);
  const server = http.createServer(
    {
      // Slowloris protection, checked every quarter of the shorter timeout (10 ms to 1 s).
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, Math.max(10, Math.floor(shorter / 4))),
    },
    (req, res) => {
      handleRequest(req, res).catch((error: unknown) => {
        logger.error({ err: error, method: req.method }, 'request handler failed');
        if (!res.headersSent) sendError(res, 500, 'Internal emulator error');
        else res.destroy();
      });
    },
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    logger.debug({ code: error.code }, 'client error');
    const timedOut = answerClientError(error, socket);
    if (timedOut !== undefined) stats.timedOut(timedOut);
  });
  try {
    server.listen({ host: config.host, port: config.port });
    await once(server, 'listening');
  } catch (error) {
    const text = `emulator: cannot listen on ${formatUrl(config.host, config.port)}: ${errorMessage(error)}`;
    throw new ConfigError(text, { cause: error });
  }
  server.on('error', (error) => logger.error({ err: error }, 'server error'));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  url = formatUrl(config.host, port);
  const orgs = config.orgs === null ? 'any' : [...config.orgs];
  const tokenCount = config.tokens?.size ?? 'any';
  logger.info(
    { url, profile, seed, faults: config.faults, orgs, tokenCount },
    'emulator listening',
  );

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      logger.info({ inFlight: inFlight.active.size, hung: inFlight.hung.size }, 'shutting down');
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      inFlight.stop();
      server.closeIdleConnections();
      const grace = setTimeout(() => {
        logger.warn({ inFlight: inFlight.active.size }, 'shutdown grace over: dropping all');
        server.closeAllConnections();
      }, SHUTDOWN_GRACE_MS).unref();
      await stopped;
      clearTimeout(grace);
      await writer?.flush();
      logger.info('emulator stopped');
    })();
    return closed;
  };
  return { url, host: config.host, port, close };
}
