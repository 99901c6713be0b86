/**
 * `startEmulator`: the emulator's server on node:http. Builds the store, the fault injector, the
 * stats and the optional data file; takes each request through fault injection to its route and
 * logs it; answers what node:http cannot parse; closes gracefully.
 */
import { setMaxListeners } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { http } from '../runtime/builtins.ts';
import { ConfigError } from '../runtime/errors.ts';
import { shownTarget, type ApiDeps } from './access.ts';
import { handleAdmin, type AdminDeps } from './admin.ts';
import { FaultInjector, type FaultDecision } from './faults.ts';
import { sendError, splitTarget } from './http.ts';
import {
  resolveOptions,
  type EmulatorOptions,
  type ResolvedOptions,
  type Sleep,
} from './options.ts';
import { loadStoreFile, StoreWriter } from './persist.ts';
import { handleApi, matchRoute, routeKey } from './routes.ts';
import { RequestStats, type RequestLogEntry, type TimeoutKind } from './stats.ts';
import { EnvironmentStore } from './store.ts';

export interface RunningEmulator {
  /** http://HOST:PORT with the real port. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Graceful: stop accepting, finish in-flight requests (hung ones are destroyed), flush data. */
  close(): Promise<void>;
}

/** After this long, close() stops waiting for in-flight requests and drops their connections. */
const SHUTDOWN_GRACE_MS = 10_000;
/** Longer paths are cut in the request log, so one huge URL cannot fill the memory. */
const MAX_LOGGED_PATH = 2048;

/**
 * The requests in flight, kept so a graceful close can let them finish: each is told to close its
 * connection, injected waits are cut short and hung requests are dropped.
 */
class InFlight {
  readonly active = new Set<ServerResponse>();
  readonly hung = new Set<ServerResponse>();
  readonly #stopping = new AbortController();
  readonly #sleep: Sleep;

  constructor(sleep: Sleep) {
    this.#sleep = sleep;
    // Every delayed request listens for the close: many at once is normal, not a leak.
    setMaxListeners(0, this.#stopping.signal);
  }

  get closing(): boolean {
    return this.#stopping.signal.aborted;
  }

  /** Tracks `res` until it closes; `onDone` runs then while closing (to drop idle sockets). */
  track(res: ServerResponse, onDone: () => void): void {
    this.active.add(res);
    if (this.closing) res.setHeader('connection', 'close');
    res.once('close', () => {
      this.active.delete(res);
      this.hung.delete(res);
      if (this.closing) onDone();
    });
  }

  /** Keeps `res` unanswered until its client gives up or the emulator closes. */
  hang(res: ServerResponse): void {
    this.hung.add(res);
    if (this.closing) res.destroy();
  }

  /** Waits `ms` with the configured sleep; returns at once while closing. */
  async delay(ms: number): Promise<void> {
    const { signal } = this.#stopping;
    if (signal.aborted) return;
    const { promise: stopped, resolve } = Promise.withResolvers<void>();
    const onStop = (): void => resolve();
    signal.addEventListener('abort', onStop, { once: true });
    try {
      // The race, so a sleep that ignores the signal cannot hold up the close.
      await Promise.race([this.#sleep(ms, signal), stopped]);
    } finally {
      signal.removeEventListener('abort', onStop);
    }
  }

  /** Starts the graceful close: answers say `Connection: close`, waits end, hung requests drop. */
  stop(): void {
    this.#stopping.abort();
    for (const res of this.active) if (!res.headersSent) res.setHeader('connection', 'close');
    for (const res of this.hung) res.destroy();
  }
}

/** What the request log says about the faults a request met; filled in as they happen. */
type FaultRecord = Pick<RequestLogEntry, 'fault' | 'latencyMs'>;

interface Context {
  readonly config: ResolvedOptions;
  readonly stats: RequestStats;
  readonly faults: FaultInjector;
  readonly inFlight: InFlight;
  readonly api: ApiDeps;
  readonly admin: AdminDeps;
  readonly onDoneWhileClosing: () => void;
}

/**
 * Carries out a fault decision: a 429, the injected latency, then a reset connection, a hang or a
 * 503. True when the fault has dealt with the request, false when it goes on to its route.
 */
async function applyFault(
  decision: FaultDecision,
  req: IncomingMessage,
  res: ServerResponse,
  record: FaultRecord,
  { stats, inFlight }: Context,
): Promise<boolean> {
  if (decision.kind === 'throttle') {
    record.fault = 'throttle';
    stats.throttled();
    const wait = String(decision.retryAfterSeconds);
    sendError(res, 429, `Rate limit exceeded; retry after ${wait} s`, {}, { 'retry-after': wait });
    return true;
  }
  if (decision.latencyMs > 0) {
    // Recorded before the wait, so a client that gives up meanwhile is still logged as delayed.
    record.fault = 'latency';
    record.latencyMs = decision.latencyMs;
    stats.injected('latency');
    await inFlight.delay(decision.latencyMs);
    if (res.destroyed) return true;
  }
  if (decision.outcome === 'normal') return false;
  record.fault = decision.outcome;
  stats.injected(decision.outcome);
  if (decision.outcome === 'reset') req.socket.destroy();
  else if (decision.outcome === 'hang') inFlight.hang(res);
  else sendError(res, 503, 'Service unavailable (injected fault)');
  return true;
}

/** Handles one request end to end (errors are the caller's: it answers 500). */
async function handleRequest(
  req: IncomingMessage,
  res: ServerResponse,
  context: Context,
): Promise<void> {
  const { config, stats, faults, inFlight } = context;
  const method = req.method ?? 'GET';
  const target = req.url ?? '/';
  const { path, query } = splitTarget(target);
  const route = matchRoute(path, config.profile);
  inFlight.track(res, context.onDoneWhileClosing);
  if (route.kind === 'admin') {
    await handleAdmin(req, res, route.name, query, context.admin);
    return;
  }
  // Tokens in the target are hidden before anything keeps or quotes it (access.ts).
  const shown = shownTarget(target, config.tokens, req.headers.authorization);
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
    config.logger.debug(fields, 'request');
  });

  let decision: FaultDecision | undefined;
  if (path.startsWith('/api/')) {
    decision = faults.decide();
    if (await applyFault(decision, req, res, record, context)) return;
  }
  if (route.kind === 'none') {
    sendError(
      res,
      404,
      `Not found: no route for ${method} ${splitTarget(shown).path.slice(0, 200)}`,
    );
    return;
  }
  const conflict = (): boolean => {
    if (decision?.kind !== 'admit' || !decision.conflict) return false;
    record.fault = 'conflict';
    stats.injected('conflict');
    return true;
  };
  await handleApi(req, res, route, query, context.api, conflict);
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

/**
 * A connection node:http could not turn into a request (malformed HTTP, an oversized head) or cut
 * for being too slow: counted, answered raw when the socket can still take it, never a crash.
 */
function handleClientError(error: NodeJS.ErrnoException, socket: Duplex, context: Context): void {
  context.config.logger.debug({ code: error.code }, 'client error');
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') context.stats.timedOut(timeoutKind(socket));
  const message: unknown = Reflect.get(socket, '_httpMessage');
  const answering =
    typeof message === 'object' && message !== null && Reflect.get(message, 'headersSent') === true;
  if (error.code === 'ECONNRESET' || !socket.writable || answering) {
    socket.destroy();
    return;
  }
  const [status, text] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request header fields too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request timeout']
        : [400, 'Bad request: the request could not be parsed as HTTP/1.1'];
  const body = JSON.stringify({ message: text });
  socket.end(
    `HTTP/1.1 ${status} ${http().STATUS_CODES[status] ?? 'Error'}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

function formatUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The store, loaded from the data file when there is one, and the writer that keeps it there. */
async function openStore(
  config: ResolvedOptions,
): Promise<{ store: EnvironmentStore; writer?: StoreWriter }> {
  const store = new EnvironmentStore();
  if (config.dataFile === undefined) return { store };
  const loaded = await loadStoreFile(config.dataFile, config.now() / 1000);
  if (loaded !== undefined) store.replace(loaded);
  const writer = new StoreWriter(config.dataFile, () => store.toDocument(), config.logger);
  store.onChange(() => writer.schedule());
  const fields = { file: config.dataFile, environments: store.size, loaded: loaded !== undefined };
  config.logger.info(fields, 'data file');
  return { store, writer };
}

/** Listens on the configured address; a failure (port taken, bad host) is a ConfigError. */
function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      server.off('listening', onListening);
      const text = `emulator: cannot listen on ${formatUrl(host, port)}: ${error.message}`;
      reject(new ConfigError(text, { cause: error }));
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError).once('listening', onListening).listen({ host, port });
  });
}

/** Starts the emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const config = resolveOptions(options);
  const { logger } = config;
  const nowSeconds = (): number => config.now() / 1000;
  const { store, writer } = await openStore(config);
  if (config.orgs === null) logger.warn('no --org given: every organization exists');
  if (config.tokens === null)
    logger.warn('no --token given: any well-formed Bearer token is accepted');

  const faults = new FaultInjector(config.faults, config.seed, () => performance.now());
  const stats = new RequestStats(config.requestLogSize);
  const inFlight = new InFlight(config.sleep);
  let url = '';
  const context: Context = {
    config,
    stats,
    faults,
    inFlight,
    api: {
      profile: config.profile,
      orgs: config.orgs,
      tokens: config.tokens,
      store,
      nowSeconds,
      baseUrl: () => url,
      faults: () => faults.current,
      hold: (ms) => inFlight.delay(ms),
    },
    admin: {
      store,
      stats,
      faults,
      nowSeconds,
      reset: () => {
        store.clear();
        stats.reset();
        faults.update(config.faults);
        faults.reseed(config.seed);
        logger.info('emulator reset');
      },
    },
    onDoneWhileClosing: () => setImmediate(() => server.closeIdleConnections()),
  };

  const server = http().createServer(
    {
      // Slowloris protection: the whole head, then the whole request, within these, checked every
      // quarter of the shorter one (10 ms to 1 s; node's default is 30 s).
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.min(
        1_000,
        Math.max(10, Math.floor(Math.min(config.headersTimeoutMs, config.requestTimeoutMs) / 4)),
      ),
    },
    (req, res) => {
      handleRequest(req, res, context).catch((error: unknown) => {
        logger.error({ err: error, method: req.method }, 'request handler failed');
        if (!res.headersSent) sendError(res, 500, 'Internal emulator error');
        else res.destroy();
      });
    },
  );
  // A malformed or too slow request must never crash the process.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) =>
    handleClientError(error, socket, context),
  );

  await listen(server, config.host, config.port);
  server.on('error', (error) => logger.error({ err: error }, 'server error'));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  url = formatUrl(config.host, port);
  logger.info(
    {
      url,
      profile: config.profile,
      seed: config.seed,
      faults: config.faults,
      orgs: config.orgs === null ? 'any' : [...config.orgs],
      tokenCount: config.tokens === null ? 'any' : config.tokens.size,
    },
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
        logger.warn(
          { inFlight: inFlight.active.size },
          'shutdown grace period over: dropping connections',
        );
        server.closeAllConnections();
      }, SHUTDOWN_GRACE_MS);
      grace.unref();
      await stopped;
      clearTimeout(grace);
      await writer?.flush();
      logger.info('emulator stopped');
    })();
    return closed;
  };

  return { url, host: config.host, port, close };
}
