/**
 * `startEmulator`: the Environments API emulator's lifecycle on node:http. Builds the store, the
 * fault injector, the stats and the optional data file, listens, and closes gracefully.
 */
import type { Server } from 'node:http';
import * as http from 'node:http';
import { ConfigError } from '../runtime/errors.ts';
import type { AdminDeps } from './admin.ts';
import type { ApiDeps } from './api.ts';
import { handleClientError } from './client-error.ts';
import { FaultInjector } from './faults.ts';
import { sendError } from './http.ts';
import { InFlight } from './in-flight.ts';
import type { EmulatorOptions } from './options.ts';
import { loadStoreFile, StoreWriter } from './persist.ts';
import { handleRequest } from './request-handler.ts';
import type { RequestDeps } from './request-handler.ts';
import { resolveOptions } from './resolve-options.ts';
import type { ResolvedOptions } from './resolve-options.ts';
import { RequestStats } from './stats.ts';
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

/** The store, loaded from the data file when there is one, and the writer that keeps it there. */
async function openStore(
  config: ResolvedOptions,
  nowSeconds: () => number,
): Promise<{ store: EnvironmentStore; writer: StoreWriter | undefined }> {
  const store = new EnvironmentStore();
  if (config.dataFile === undefined) return { store, writer: undefined };
  const loaded = await loadStoreFile(config.dataFile, nowSeconds());
  if (loaded !== undefined) store.replace(loaded);
  const writer = new StoreWriter(config.dataFile, () => store.toDocument(), config.logger);
  store.onChange(() => writer.schedule());
  config.logger.info(
    { file: config.dataFile, environments: store.size, loaded: loaded !== undefined },
    'data file',
  );
  return { store, writer };
}

/** Listens on the configured address; a failure (port taken, bad host) is a ConfigError. */
function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      server.off('listening', onListening);
      reject(
        new ConfigError(`emulator: cannot listen on ${formatUrl(host, port)}: ${error.message}`, {
          cause: error,
        }),
      );
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host, port });
  });
}

/** Starts the emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const config = resolveOptions(options);
  const { logger, profile } = config;
  const nowSeconds = (): number => config.now() / 1000;
  const { store, writer } = await openStore(config, nowSeconds);
  if (config.orgs === null) logger.warn('no --org given: every organization exists');
  if (config.tokens === null)
    logger.warn('no --token given: any well-formed Bearer token is accepted');

  const faults = new FaultInjector(config.faults, config.seed, () => performance.now());
  const stats = new RequestStats(config.requestLogSize);
  const inFlight = new InFlight(config.sleep);
  let url = '';

  const api: ApiDeps = {
    profile,
    orgs: config.orgs,
    tokens: config.tokens,
    store,
    nowSeconds,
    baseUrl: () => url,
    routeFaults: () => faults.routes,
  };
  const admin: AdminDeps = {
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
  const deps: RequestDeps = {
    profile,
    stats,
    faults,
    inFlight,
    logger,
    now: config.now,
    api,
    admin,
    onDoneWhileClosing: () => setImmediate(() => server.closeIdleConnections()),
  };

  const server = http.createServer(
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
      handleRequest(req, res, deps).catch((error: unknown) => {
        logger.error({ err: error, method: req.method }, 'request handler failed');
        if (!res.headersSent) sendError(res, 500, 'Internal emulator error');
        else res.destroy();
      });
    },
  );
  // A malformed or too slow request must never crash the process.
  server.on('clientError', (error: NodeJS.ErrnoException, socket) =>
    handleClientError(error, socket, stats, logger),
  );

  await listen(server, config.host, config.port);
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
      logger.info({ inFlight: inFlight.size, hung: inFlight.hungCount }, 'shutting down');
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      inFlight.stop();
      server.closeIdleConnections();
      const grace = setTimeout(() => {
        logger.warn(
          { inFlight: inFlight.size },
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
