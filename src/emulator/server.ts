/**
 * `startEmulator`: the Environments API emulator on node:http. Wires the store, the fault
 * injector, the stats and the optional data file together and owns the server's lifecycle.
 */
import { randomInt } from 'node:crypto';
import { STATUS_CODES, createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { ConfigError } from '../errors.ts';
import { handleAdmin } from './admin.ts';
import type { AdminDeps } from './admin.ts';
import { handleApi } from './api.ts';
import type { ApiDeps } from './api.ts';
import { FaultInjector } from './faults.ts';
import { sendError, splitTarget } from './http.ts';
import type { EmulatorOptions, FaultSettings, Profile } from './options.ts';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  NO_FAULTS,
  PROFILES,
} from './options.ts';
import { loadStoreFile, StoreWriter } from './persist.ts';
import { matchRoute, routeKey } from './routes.ts';
import { RequestStats } from './stats.ts';
import type { RequestLogEntry } from './stats.ts';
import { EnvironmentStore } from './store.ts';
import { ORG_PATTERN, validateFaultPatch } from './validate.ts';

export type { EmulatorOptions, FaultSettings, Profile, TokenGrant } from './options.ts';

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
const MAX_LOGGED_PATH = 2048;

interface ResolvedOptions {
  readonly host: string;
  readonly port: number;
  readonly orgs: ReadonlySet<string> | null;
  readonly tokens: ReadonlyMap<string, ReadonlySet<string> | null> | null;
  readonly profile: Profile;
  readonly seed: number;
  readonly faults: FaultSettings;
  readonly dataFile: string | undefined;
  readonly logger: Logger;
  readonly now: () => number;
  readonly requestLogSize: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

function isWhole(value: number, min: number, max: number): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}

/** Checks the options (the CLI has checked its flags already; this guards library callers). */
function resolveOptions(options: EmulatorOptions): ResolvedOptions {
  const host = options.host ?? DEFAULT_HOST;
  if (host.trim() === '') throw new ConfigError('emulator: host must not be empty');
  const port = options.port ?? DEFAULT_PORT;
  if (!isWhole(port, 0, 65535)) throw new ConfigError(`emulator: port ${port} is not 0..65535`);
  const profile = options.profile ?? 'spec';
  if (!PROFILES.includes(profile)) {
    throw new ConfigError(`emulator: profile "${profile}" is not one of ${PROFILES.join(', ')}`);
  }
  for (const org of options.orgs ?? []) {
    if (!ORG_PATTERN.test(org))
      throw new ConfigError(`emulator: org "${org}" does not match ${ORG_PATTERN.source}`);
  }
  const orgs = options.orgs !== undefined && options.orgs.length > 0 ? new Set(options.orgs) : null;
  let tokens: Map<string, Set<string> | null> | null = null;
  if (options.tokens !== undefined && options.tokens.length > 0) {
    tokens = new Map();
    for (const grant of options.tokens) {
      if (!/^\S+$/.test(grant.token))
        throw new ConfigError('emulator: a token is empty or has whitespace');
      for (const org of grant.orgs ?? []) {
        if (!ORG_PATTERN.test(org)) {
          throw new ConfigError(
            `emulator: token org "${org}" does not match ${ORG_PATTERN.source}`,
          );
        }
      }
      // The same token given twice gets the union of its grants; null (all orgs) wins.
      const before = tokens.get(grant.token);
      if (grant.orgs === null || before === null) tokens.set(grant.token, null);
      else tokens.set(grant.token, new Set([...(before ?? []), ...grant.orgs]));
    }
  }
  const seed = options.seed ?? randomInt(0, 2 ** 32);
  if (!isWhole(seed, 0, 0xffffffff))
    throw new ConfigError(`emulator: seed ${seed} is not 0..4294967295`);
  const faults = validateFaultPatch(options.faults ?? {}, NO_FAULTS);
  if (!faults.ok) {
    const problems = Object.entries(faults.errors).map(([key, reason]) => `${key} ${reason}`);
    throw new ConfigError(`emulator: invalid faults: ${problems.join('; ')}`);
  }
  const requestLogSize = options.requestLogSize ?? 1000;
  if (!isWhole(requestLogSize, 1, 1_000_000)) {
    throw new ConfigError(`emulator: requestLogSize ${requestLogSize} is not 1..1000000`);
  }
  const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  for (const [name, value] of [
    ['headersTimeoutMs', headersTimeoutMs],
    ['requestTimeoutMs', requestTimeoutMs],
    ['keepAliveTimeoutMs', keepAliveTimeoutMs],
  ] as const) {
    if (!isWhole(value, 1, MAX_TIMEOUT_MS))
      throw new ConfigError(`emulator: ${name} ${value} is not 1..${MAX_TIMEOUT_MS}`);
  }
  // node:http refuses a head timeout longer than the whole-request timeout.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `emulator: headersTimeoutMs ${headersTimeoutMs} is above requestTimeoutMs ${requestTimeoutMs}`,
    );
  }
  return {
    host,
    port,
    orgs,
    tokens,
    profile,
    seed,
    faults: faults.value.settings,
    dataFile: options.dataFile,
    logger: options.logger ?? pino({ level: 'silent' }),
    now: options.now ?? Date.now,
    requestLogSize,
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs,
  };
}

/**
 * How often node:http checks the head and request timeouts: a quarter of the shorter one, between
 * 10 ms and 1 s, so a timeout fires at most 25% late (node's default interval is 30 s).
 */
function checkingIntervalMs(headersTimeoutMs: number, requestTimeoutMs: number): number {
  const quarter = Math.floor(Math.min(headersTimeoutMs, requestTimeoutMs) / 4);
  return Math.min(1_000, Math.max(10, quarter));
}

function formatUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Raw answer for a request node:http could not parse; closes the connection. */
function rawAnswer(status: number, message: string): string {
  const body = JSON.stringify({ message });
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
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

/** Starts the emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const config = resolveOptions(options);
  const { logger, profile } = config;
  const nowSeconds = (): number => config.now() / 1000;

  const store = new EnvironmentStore();
  let writer: StoreWriter | undefined;
  if (config.dataFile !== undefined) {
    const loaded = await loadStoreFile(config.dataFile, nowSeconds());
    if (loaded !== undefined) store.replace(loaded);
    writer = new StoreWriter(config.dataFile, () => store.toDocument(), logger);
    const persist = writer;
    store.onChange(() => persist.schedule());
    logger.info(
      { file: config.dataFile, environments: store.size, loaded: loaded !== undefined },
      'data file',
    );
  }
  if (config.orgs === null) logger.warn('no --org given: every organization exists');
  if (config.tokens === null)
    logger.warn('no --token given: any well-formed Bearer token is accepted');

  const faults = new FaultInjector(config.faults, config.seed, () => performance.now());
  const stats = new RequestStats(config.requestLogSize);
  let url = '';

  const apiDeps: ApiDeps = {
    profile,
    orgs: config.orgs,
    tokens: config.tokens,
    store,
    nowSeconds,
    baseUrl: () => url,
  };
  const adminDeps: AdminDeps = {
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
  };

  let closing = false;
  const active = new Set<ServerResponse>();
  const hung = new Set<ServerResponse>();
  const sleepers = new Set<() => void>();

  /** Injected latency; cut short when the emulator shuts down. */
  const delay = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });

  async function handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const time = new Date(config.now()).toISOString();
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    const { path, query } = splitTarget(target);
    const route = matchRoute(path, profile);
    active.add(res);
    if (closing) res.setHeader('connection', 'close');
    res.once('close', () => {
      active.delete(res);
      if (closing) setImmediate(() => server.closeIdleConnections());
    });

    if (route.kind === 'admin') {
      await handleAdmin(req, res, route.name, query, adminDeps);
      return;
    }

    const key = routeKey(method, route);
    let fault: RequestLogEntry['fault'];
    stats.received(method, key);
    res.once('close', () => {
      const entry: RequestLogEntry = {
        time,
        method,
        path: target.length > MAX_LOGGED_PATH ? `${target.slice(0, MAX_LOGGED_PATH)}...` : target,
        route: key,
        status: res.headersSent ? res.statusCode : null,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        ...(fault === undefined ? {} : { fault }),
      };
      stats.completed(entry);
      const { time: _arrived, ...fields } = entry;
      logger.debug(fields, 'request');
    });

    if (path.startsWith('/api/')) {
      const decision = faults.decide();
      if (decision.kind === 'throttle') {
        fault = 'throttle';
        stats.throttled();
        const wait = decision.retryAfterSeconds;
        sendError(
          res,
          429,
          `Rate limit exceeded; retry after ${wait} s`,
          {},
          { 'retry-after': String(wait) },
        );
        return;
      }
      if (decision.latencyMs > 0) {
        fault = 'latency';
        stats.injected('latency');
        await delay(decision.latencyMs);
        if (res.destroyed) return;
      }
      switch (decision.outcome) {
        case 'reset':
          fault = 'reset';
          stats.injected('reset');
          req.socket.destroy();
          return;
        case 'hang':
          fault = 'hang';
          stats.injected('hang');
          hung.add(res);
          res.once('close', () => hung.delete(res));
          if (closing) res.destroy();
          return;
        case 'fail':
          fault = 'fail';
          stats.injected('fail');
          sendError(res, 503, 'Service unavailable (injected fault)');
          return;
        case 'normal':
          break;
      }
    }
    if (route.kind === 'none') {
      sendError(res, 404, `Not found: no route for ${method} ${path.slice(0, 200)}`);
      return;
    }
    await handleApi(req, res, route, query, apiDeps);
  }

  const server = createServer(
    {
      // Slowloris protection: the whole head, then the whole request, within these.
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      keepAliveTimeout: config.keepAliveTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(
        config.headersTimeoutMs,
        config.requestTimeoutMs,
      ),
    },
    (req, res) => {
      handleRequest(req, res).catch((error: unknown) => {
        logger.error({ err: error, method: req.method }, 'request handler failed');
        if (!res.headersSent) sendError(res, 500, 'Internal emulator error');
        else res.destroy();
      });
    },
  );

  // A malformed request must never crash the process: answer it if possible, then drop it.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    logger.debug({ code: error.code }, 'client error');
    const message: unknown = Reflect.get(socket, '_httpMessage');
    const answering =
      typeof message === 'object' &&
      message !== null &&
      Reflect.get(message, 'headersSent') === true;
    if (error.code === 'ECONNRESET' || !socket.writable || answering) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorAnswer(error.code));
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      server.off('listening', onListening);
      reject(
        new ConfigError(
          `emulator: cannot listen on ${formatUrl(config.host, config.port)}: ${error.message}`,
          { cause: error },
        ),
      );
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host: config.host, port: config.port });
  });
  server.on('error', (error) => logger.error({ err: error }, 'server error'));

  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  url = formatUrl(config.host, port);
  logger.info(
    {
      url,
      profile,
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
      closing = true;
      logger.info({ inFlight: active.size, hung: hung.size }, 'shutting down');
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const res of active) if (!res.headersSent) res.setHeader('connection', 'close');
      for (const res of hung) res.destroy();
      for (const wake of sleepers) wake();
      server.closeIdleConnections();
      const grace = setTimeout(() => {
        logger.warn({ inFlight: active.size }, 'shutdown grace period over: dropping connections');
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
