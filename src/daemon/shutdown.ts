import type { Logger } from 'pino';
import type { ClientEvents } from '../api/client.ts';
import type { Clock } from '../core/clock.ts';

/** A retry this recent means the API is failing: a stopping daemon then waits for nothing. */
const RECENT_RETRY_MS = 60_000;
/** The shortest whole stop: time for the state write even with `--shutdown-timeout 0`. */
export const MIN_STOP_MS = 2_000;
/** What a stop keeps, at most, after the pass's requests are aborted: the state, the drain. */
const STOP_RESERVE_MS = 5_000;

/**
 * How a stop spends `--shutdown-timeout`: the pass in flight may finish within `passMs`; the state
 * and the notifications get what is left; at `hardMs` the process exits whatever it waits on.
 */
export function stopBudget(shutdownTimeoutMs: number): { passMs: number; hardMs: number } {
  const hardMs = Math.max(shutdownTimeoutMs, MIN_STOP_MS);
  const reserve = Math.min(STOP_RESERVE_MS, hardMs / 2);
  return { passMs: Math.min(shutdownTimeoutMs, hardMs - reserve), hardMs };
}

/**
 * A stop that never waits out a failing API: `stopping` ends every wait of the client at once; a
 * healthy pass may finish, but requests being retried (a retry just now, or after the stop) are
 * cancelled through `abort`, the client's own signal, as is whatever is left at the timeout.
 */
export class Shutdown {
  readonly #stopping = new AbortController();
  readonly #abort = new AbortController();
  readonly #clock: Clock;
  #lastRetryAt = -Infinity;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  get stopping(): AbortSignal {
    return this.#stopping.signal;
  }

  get abort(): AbortSignal {
    return this.#abort.signal;
  }

  /** The client's events, noting retries (and cancelling them once the daemon stops). */
  events(inner: ClientEvents): ClientEvents {
    return {
      ...inner,
      retry: (method, reason) => {
        inner.retry?.(method, reason);
        this.#lastRetryAt = this.#clock.now();
        if (this.#stopping.signal.aborted) this.#cancel();
      },
    };
  }

  /** Stops, and waits for `work` (the pass in flight), cancelling its requests at `timeoutMs`. */
  async stop(work: Promise<void>, timeoutMs: number, logger: Logger): Promise<void> {
    this.#stopping.abort(new Error('shutting down'));
    if (this.#clock.now() - this.#lastRetryAt < RECENT_RETRY_MS) this.#cancel();
    const timer = new AbortController();
    const timedOut = await Promise.race([
      work.then(() => false),
      this.#clock.sleep(timeoutMs, timer.signal).then(
        () => true,
        () => false,
      ),
    ]);
    timer.abort();
    if (!timedOut) return;
    logger.warn(
      { shutdownTimeoutMs: timeoutMs },
      'shutdown timeout: aborting the requests in flight',
    );
    this.#cancel();
    await work;
  }

  #cancel(): void {
    if (!this.#abort.signal.aborted)
      this.#abort.abort(new Error('cancelled: envsync is shutting down'));
  }
}
