/**
 * One fault decision carried out on one API request: a 429 for the rate limit, then the injected
 * latency, then a reset connection, a hang or a 503. `FaultInjector` decides; this only acts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultDecision } from './faults.ts';
import { sendError } from './http.ts';
import type { InFlight } from './in-flight.ts';
import type { RequestLogEntry, RequestStats } from './stats.ts';

/** What the request log will say about the faults a request met; filled in as they happen. */
export interface FaultRecord {
  fault?: RequestLogEntry['fault'];
  latencyMs?: number;
}

export interface FaultDeps {
  readonly stats: RequestStats;
  readonly inFlight: InFlight;
}

/**
 * Applies `decision` to the request. Resolves true when the fault has dealt with it (answered,
 * dropped or left hanging), false when it should be handled normally.
 */
export async function applyFault(
  decision: FaultDecision,
  req: IncomingMessage,
  res: ServerResponse,
  record: FaultRecord,
  { stats, inFlight }: FaultDeps,
): Promise<boolean> {
  if (decision.kind === 'throttle') {
    record.fault = 'throttle';
    stats.throttled();
    const wait = decision.retryAfterSeconds;
    sendError(
      res,
      429,
      `Rate limit exceeded; retry after ${wait} s`,
      {},
      { 'retry-after': String(wait) },
    );
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
  switch (decision.outcome) {
    case 'reset':
      record.fault = 'reset';
      stats.injected('reset');
      req.socket.destroy();
      return true;
    case 'hang':
      record.fault = 'hang';
      stats.injected('hang');
      inFlight.hang(res);
      return true;
    case 'fail':
      record.fault = 'fail';
      stats.injected('fail');
      sendError(res, 503, 'Service unavailable (injected fault)');
      return true;
    case 'normal':
      break;
  }
  return false;
}
