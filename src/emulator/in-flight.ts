/**
 * The API and admin requests in flight, kept so a graceful close can let them finish: each is told
 * to close its connection, injected latency is cut short and hung requests are dropped.
 */
import { setMaxListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { Sleep } from './options.ts';

export class InFlight {
  readonly #active = new Set<ServerResponse>();
  readonly #hung = new Set<ServerResponse>();
  readonly #stopping = new AbortController();
  readonly #sleep: Sleep;

  constructor(sleep: Sleep) {
    this.#sleep = sleep;
    // Every delayed request listens for the close: many at once is normal, not a leak.
    setMaxListeners(0, this.#stopping.signal);
  }

  /** True once `stop` has been called. */
  get closing(): boolean {
    return this.#stopping.signal.aborted;
  }

  /** Requests received and not yet answered or abandoned. */
  get size(): number {
    return this.#active.size;
  }

  get hungCount(): number {
    return this.#hung.size;
  }

  /** Tracks `res` until it closes; `onDone` runs then (while closing, to drop idle sockets). */
  track(res: ServerResponse, onDone: () => void): void {
    this.#active.add(res);
    if (this.closing) res.setHeader('connection', 'close');
    res.once('close', () => {
      this.#active.delete(res);
      if (this.closing) onDone();
    });
  }

  /** Keeps `res` unanswered until its client gives up or the emulator closes. */
  hang(res: ServerResponse): void {
    this.#hung.add(res);
    res.once('close', () => this.#hung.delete(res));
    if (this.closing) res.destroy();
  }

  /** Waits out injected latency with the configured sleep; returns at once while closing. */
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

  /** Starts the graceful close: answers say `Connection: close`, sleeps end, hung requests drop. */
  stop(): void {
    this.#stopping.abort();
    for (const res of this.#active) if (!res.headersSent) res.setHeader('connection', 'close');
    for (const res of this.#hung) res.destroy();
  }
}
