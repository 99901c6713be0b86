/**
 * The path of one request through the emulator: tracked for shutdown, routed to the admin
 * endpoints or through fault injection to the API, and logged once it ends.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { handleAdmin } from './admin.ts';
import type { AdminDeps } from './admin.ts';
import { handleApi } from './api.ts';
import type { ApiDeps } from './api.ts';
import { applyFault } from './apply-fault.ts';
import type { FaultRecord } from './apply-fault.ts';
import type { FaultInjector } from './faults.ts';
import { sendError, splitTarget } from './http.ts';
import type { InFlight } from './in-flight.ts';
import type { Profile } from './options.ts';
import { shownTarget } from './request-tokens.ts';
import { matchRoute, routeKey } from './routes.ts';
import type { RequestLogEntry, RequestStats } from './stats.ts';

/** Longer paths are cut in the request log, so one huge URL cannot fill the memory. */
const MAX_LOGGED_PATH = 2048;

export interface RequestDeps {
  readonly profile: Profile;
  readonly stats: RequestStats;
  readonly faults: FaultInjector;
  readonly inFlight: InFlight;
  readonly logger: Logger;
  /** Wall clock in epoch milliseconds, for the log's arrival time. */
  readonly now: () => number;
  readonly api: ApiDeps;
  readonly admin: AdminDeps;
  /** Called as each request ends while the emulator closes, to drop connections gone idle. */
  readonly onDoneWhileClosing: () => void;
}

/**
 * Counts and logs one API request once its response closes, whatever ended it. `target` is the
 * request's, tokens in it already hidden (request-tokens.ts); it is cut only then.
 */
function logWhenDone(
  method: string,
  target: string,
  res: ServerResponse,
  route: string,
  record: FaultRecord,
  { stats, logger, now }: RequestDeps,
): void {
  const started = performance.now();
  const time = new Date(now()).toISOString();
  stats.received(method, route);
  res.once('close', () => {
    const entry: RequestLogEntry = {
      time,
      method,
      path: target.length > MAX_LOGGED_PATH ? `${target.slice(0, MAX_LOGGED_PATH)}...` : target,
      route,
      status: res.headersSent ? res.statusCode : null,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      ...(record.fault === undefined ? {} : { fault: record.fault }),
      ...(record.latencyMs === undefined ? {} : { latencyMs: record.latencyMs }),
    };
    stats.completed(entry);
    const { time: _arrived, ...fields } = entry;
    logger.debug(fields, 'request');
  });
}

/** Handles one request end to end (errors are the caller's: it answers 500). */
export async function handleRequest(
  req: IncomingMessage,
  res: ServerResponse,
  deps: RequestDeps,
): Promise<void> {
  const method = req.method ?? 'GET';
  const target = req.url ?? '/';
  const { path, query } = splitTarget(target);
  const route = matchRoute(path, deps.profile);
  deps.inFlight.track(res, deps.onDoneWhileClosing);

  if (route.kind === 'admin') {
    await handleAdmin(req, res, route.name, query, deps.admin);
    return;
  }
  const record: FaultRecord = {};
  const shown = shownTarget(target, deps.api.tokens, req.headers.authorization);
  logWhenDone(method, shown, res, routeKey(method, route), record, deps);

  if (path.startsWith('/api/')) {
    const handled = await applyFault(deps.faults.decide(), req, res, record, deps);
    if (handled) return;
  }
  if (route.kind === 'none') {
    const shownPath = splitTarget(shown).path;
    sendError(res, 404, `Not found: no route for ${method} ${shownPath.slice(0, 200)}`);
    return;
  }
  await handleApi(req, res, route, query, deps.api);
}
