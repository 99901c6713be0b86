/** Request counters and the ring buffer of recent requests behind /_emulator/stats and /requests. */
import type { FaultKind } from './faults.ts';

/** One answered (or abandoned) API request. Never carries headers or bodies. */
export interface RequestLogEntry {
  /** When the request arrived (ISO 8601). */
  time: string;
  method: string;
  /** Path and query as sent, a token in either [REDACTED] (request-tokens.ts). */
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

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

export class RequestStats {
  readonly #capacity: number;
  #log: RequestLogEntry[] = [];
  #next = 0;
  #total = 0;
  #inFlight = 0;
  #byMethod = new Map<string, number>();
  #byStatus = new Map<string, number>();
  #byRoute = new Map<string, number>();
  #faults: Record<FaultKind, number> = { latency: 0, reset: 0, hang: 0, fail: 0 };
  #throttled = 0;
  #timeouts: Record<TimeoutKind, number> = { headers: 0, request: 0 };

  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  /** Counts an arriving request. */
  received(method: string, route: string): void {
    this.#total += 1;
    this.#inFlight += 1;
    bump(this.#byMethod, method);
    bump(this.#byRoute, route);
  }

  injected(kind: FaultKind): void {
    this.#faults[kind] += 1;
  }

  throttled(): void {
    this.#throttled += 1;
  }

  /** Counts a connection cut by a server timeout. */
  timedOut(kind: TimeoutKind): void {
    this.#timeouts[kind] += 1;
  }

  /** Records the end of a request counted by `received`. */
  completed(entry: RequestLogEntry): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (entry.status !== null) bump(this.#byStatus, String(entry.status));
    if (this.#log.length < this.#capacity) this.#log.push(entry);
    else this.#log[this.#next] = entry;
    this.#next = (this.#next + 1) % this.#capacity;
  }

  /** The most recent `limit` entries, oldest first. */
  recent(limit: number): RequestLogEntry[] {
    const ordered =
      this.#log.length < this.#capacity
        ? [...this.#log]
        : [...this.#log.slice(this.#next), ...this.#log.slice(0, this.#next)];
    return ordered.slice(Math.max(0, ordered.length - limit)).map((entry) => ({ ...entry }));
  }

  snapshot(environments: number): EmulatorStats {
    return {
      total: this.#total,
      inFlight: this.#inFlight,
      byMethod: Object.fromEntries(this.#byMethod),
      byStatus: Object.fromEntries(this.#byStatus),
      byRoute: Object.fromEntries(this.#byRoute),
      faults: { ...this.#faults },
      throttled: this.#throttled,
      timeouts: { ...this.#timeouts },
      environments,
    };
  }

  /** Zeroes the counters and empties the log; `inFlight` is a gauge and is kept. */
  reset(): void {
    this.#log = [];
    this.#next = 0;
    this.#total = 0;
    this.#byMethod = new Map();
    this.#byStatus = new Map();
    this.#byRoute = new Map();
    this.#faults = { latency: 0, reset: 0, hang: 0, fail: 0 };
    this.#throttled = 0;
    this.#timeouts = { headers: 0, request: 0 };
  }
}
