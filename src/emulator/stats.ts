/** The counters and the ring buffer of recent requests of /_emulator/stats and /requests. */
import type { FaultKind } from './faults.ts';

/** One answered (or abandoned) API request; never its headers or body (docs/emulator.md). */
export interface RequestLogEntry {
  time: string;
  method: string;
  path: string;
  route: string;
  /** null when no answer was sent (reset, hang, client gone). */
  status: number | null;
  durationMs: number;
  /** The injected fault (the last one, when latency came before another). */
  fault?: FaultKind | 'throttle';
  /** The latency drawn, not the time it took. */
  latencyMs?: number;
}

export type TimeoutKind = 'headers' | 'request';
export type EmulatorStats = ReturnType<RequestStats['snapshot']>;

const zero = () => ({
  total: 0,
  byMethod: new Map<string, number>(),
  byStatus: new Map<string, number>(),
  byRoute: new Map<string, number>(),
  faults: { latency: 0, reset: 0, hang: 0, fail: 0, conflict: 0 },
  throttled: 0,
  timeouts: { headers: 0, request: 0 },
});

const bump = (counts: Map<string, number>, key: string) =>
  counts.set(key, (counts.get(key) ?? 0) + 1);

export class RequestStats {
  readonly #capacity: number;
  #log: RequestLogEntry[] = [];
  #counters = zero();
  #inFlight = 0;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  received(method: string, route: string): void {
    this.#counters.total += 1;
    bump(this.#counters.byMethod, method);
    bump(this.#counters.byRoute, route);
    this.#inFlight += 1;
  }

  injected(kind: FaultKind | 'throttled'): void {
    if (kind === 'throttled') this.#counters.throttled += 1;
    else this.#counters.faults[kind] += 1;
  }

  timedOut(kind: TimeoutKind): void {
    this.#counters.timeouts[kind] += 1;
  }

  completed(entry: RequestLogEntry): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (entry.status !== null) bump(this.#counters.byStatus, String(entry.status));
    this.#log.push(entry);
    if (this.#log.length > this.#capacity) this.#log.shift();
  }

  recent(limit: number): RequestLogEntry[] {
    return this.#log.slice(-limit).map((entry) => ({ ...entry }));
  }

  snapshot(environments: number) {
    const { total, byMethod, byStatus, byRoute, faults, throttled, timeouts } = this.#counters;
    return {
      total,
      inFlight: this.#inFlight,
      byMethod: Object.fromEntries(byMethod),
      byStatus: Object.fromEntries(byStatus),
      byRoute: Object.fromEntries(byRoute),
      faults: { ...faults },
      throttled,
      timeouts: { ...timeouts },
      environments,
    };
  }

  /** Zeroes the counters and empties the log; `inFlight` is a gauge and is kept. */
  reset(): void {
    this.#log = [];
    this.#counters = zero();
  }
}
