/** Request counters and the ring buffer of recent requests behind /_emulator/stats and /requests. */
import type { FaultKind } from './faults.ts';

/** One answered (or abandoned) API request. Never carries headers or bodies. */
export interface RequestLogEntry {
  /** When the request arrived (ISO 8601). */
  time: string;
  method: string;
  /** Path and query as sent, a token in either [REDACTED] (access.ts). */
  path: string;
  /** The route it matched, e.g. "PUT /api/v2/environments/{org}", or "other". */
  route: string;
  /** The status sent; null when no answer was sent (reset, hang, client gone). */
  status: number | null;
  durationMs: number;
  /** The injected fault, when one was (the last one, when latency came before another). */
  fault?: FaultKind | 'throttle';
  /** The latency injected, when some was: the wait drawn, not the time it took. */
  latencyMs?: number;
}

/** Which limit a connection cut with 408 broke: the head's or the whole request's. */
export type TimeoutKind = 'headers' | 'request';

export interface EmulatorStats {
  /** API requests received since start or the last reset (admin requests are not counted). */
  total: number;
  /** Received but not yet answered or abandoned. */
  inFlight: number;
  byMethod: Record<string, number>;
  /** Keyed by status code; requests without an answer are not here. */
  byStatus: Record<string, number>;
  byRoute: Record<string, number>;
  /** Faults injected, by kind (latency counts requests that were delayed). */
  faults: Record<FaultKind, number>;
  /** Requests answered 429 by the rate limit. */
  throttled: number;
  /**
   * Connections cut because the request head (`headers`) or the whole request (`request`) did not
   * arrive in time. A head that never arrived is no request, so it is counted only here.
   */
  timeouts: Record<TimeoutKind, number>;
  /** Live environments in the store, over all orgs. */
  environments: number;
}

type Counters = Omit<EmulatorStats, 'inFlight' | 'environments'>;

const zero = (): Counters => ({
  total: 0,
  byMethod: {},
  byStatus: {},
  byRoute: {},
  faults: { latency: 0, reset: 0, hang: 0, fail: 0, conflict: 0 },
  throttled: 0,
  timeouts: { headers: 0, request: 0 },
});

/** Counts into a plain object by key; from a Map, so any key stays an ordinary key. */
function bump(counts: Record<string, number>, key: string): Record<string, number> {
  return Object.fromEntries(new Map(Object.entries(counts)).set(key, (counts[key] ?? 0) + 1));
}

export class RequestStats {
  readonly #capacity: number;
  #log: RequestLogEntry[] = [];
  #counters = zero();
  #inFlight = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** Counts an arriving request. */
  received(method: string, route: string): void {
    const counters = this.#counters;
    counters.total += 1;
    counters.byMethod = bump(counters.byMethod, method);
    counters.byRoute = bump(counters.byRoute, route);
    this.#inFlight += 1;
  }

  injected(kind: FaultKind): void {
    this.#counters.faults[kind] += 1;
  }

  throttled(): void {
    this.#counters.throttled += 1;
  }

  /** Counts a connection cut by a server timeout. */
  timedOut(kind: TimeoutKind): void {
    this.#counters.timeouts[kind] += 1;
  }

  /** Records the end of a request counted by `received`, keeping the last `capacity` of them. */
  completed(entry: RequestLogEntry): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (entry.status !== null)
      this.#counters.byStatus = bump(this.#counters.byStatus, String(entry.status));
    this.#log.push(entry);
    if (this.#log.length > this.#capacity) this.#log.shift();
  }

  /** The most recent `limit` (at least 1) entries, oldest first. */
  recent(limit: number): RequestLogEntry[] {
    return this.#log.slice(-limit).map((entry) => ({ ...entry }));
  }

  snapshot(environments: number): EmulatorStats {
    return { ...structuredClone(this.#counters), inFlight: this.#inFlight, environments };
  }

  /** Zeroes the counters and empties the log; `inFlight` is a gauge and is kept. */
  reset(): void {
    this.#log = [];
    this.#counters = zero();
  }
}
