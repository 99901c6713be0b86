/**
 * Time spent throttled: waiting because the server asked (a 429's pause at the gate, a
 * Retry-After before a retry). Counted as wall time while at least one request waits, for the
 * whole client and for each org, so requests that wait together count once.
 */
interface Span {
  waiting: number;
  since: number;
  totalMs: number;
}

export class ThrottleMeter {
  readonly #now: () => number;
  readonly #onSpanEnd: ((ms: number) => void) | undefined;
  readonly #all: Span = { waiting: 0, since: 0, totalMs: 0 };
  readonly #orgs = new Map<string, Span>();

  /** `onSpanEnd` hears each stretch of throttled time of the whole client as it ends. */
  constructor(now: () => number, onSpanEnd?: (ms: number) => void) {
    this.#now = now;
    this.#onSpanEnd = onSpanEnd;
  }

  /** Waits with `wait`, counting the time as throttled for `org` and for the client. */
  async measure<T>(org: string, wait: () => Promise<T>): Promise<T> {
    let span = this.#orgs.get(org);
    if (span === undefined) {
      span = { waiting: 0, since: 0, totalMs: 0 };
      this.#orgs.set(org, span);
    }
    const now = this.#now();
    enter(this.#all, now);
    enter(span, now);
    try {
      return await wait();
    } finally {
      const end = this.#now();
      leave(span, end);
      const ms = leave(this.#all, end);
      if (ms !== undefined) this.#onSpanEnd?.(ms);
    }
  }

  /** Milliseconds throttled so far, for one org or (without one) for the whole client. */
  totalMs(org?: string): number {
    const span = org === undefined ? this.#all : this.#orgs.get(org);
    if (span === undefined) return 0;
    return Math.round(span.totalMs + (span.waiting > 0 ? this.#now() - span.since : 0));
  }
}

function enter(span: Span, now: number): void {
  if (span.waiting++ === 0) span.since = now;
}

/** Ends one wait; returns the stretch's length when it was the last one waiting. */
function leave(span: Span, now: number): number | undefined {
  if (--span.waiting > 0) return undefined;
  const ms = Math.max(0, now - span.since);
  span.totalMs += ms;
  return ms;
}
