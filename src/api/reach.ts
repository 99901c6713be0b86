import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import { ApiError } from './errors.ts';
import { hostUnreachable } from './retry-policy.ts';

/** The API's address as a failed connection names it: host and port, the port always given. */
export function addressOf(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

/**
 * Whether the API's host can be reached, as one client learns it: the first attempt refused (or
 * unresolved) makes its request the probe, which alone tries again while the others wait for its
 * verdict (each at most `waitMs`); failing again, the host is down and nothing more is sent.
 */
export class HostReach {
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #waitMs: number;
  #down: ApiError | undefined;
  /** The error of the probe's last attempt (its retry's `after`), and its waiters' wake-up. */
  #probe: { error: ApiError; verdict: Promise<void>; wake: () => void } | undefined;

  constructor(logger: Logger, clock: Clock, waitMs: number) {
    this.#logger = logger;
    this.#clock = clock;
    this.#waitMs = waitMs;
  }

  /** Holding a slot, waits once for a probe not its own; or the error of an attempt not sent. */
  async admit(
    request: { method: string; path: string; after: unknown; waits: AbortSignal | undefined },
    acquire: () => Promise<void>,
    release: () => void,
  ): Promise<ApiError | undefined> {
    const { method, path, after, waits } = request;
    for (let waited = false; ; waited = true) {
      await acquire();
      const [down, probe] = [this.#down, this.#probe];
      if (down === undefined && (probe === undefined || probe.error === after || waited))
        return undefined;
      release();
      if (down !== undefined) {
        const why = `not sent${after === undefined ? '' : ' again'}: an earlier request found the API unreachable`;
        const context = { method, path, code: down.code, host: down.host };
        return new ApiError('network', `${method} ${path}: ${why}: ${reasonOf(down)}`, context);
      }
      await this.#waitForVerdict(waits);
    }
  }

  /** A connection failed: the first refused or unresolved makes its request the probe. */
  attemptFailed(error: ApiError): void {
    if (this.#down !== undefined || this.#probe !== undefined || !hostUnreachable(error)) return;
    let wake = () => {};
    const verdict = new Promise<void>((resolve) => (wake = resolve));
    this.#probe = { error, verdict, wake };
  }

  /** A request failed for good with `error` (`after`: its previous attempt's error). */
  failed(error: unknown, after: unknown): void {
    if (this.#down !== undefined) return;
    if (error instanceof ApiError && hostUnreachable(error)) {
      this.#down = error;
      // Debug only: the report (or the daemon's pass line) says it once for every org it failed.
      this.#logger.debug(
        { code: error.code, host: error.host },
        `the API cannot be reached: ${reasonOf(error)}; the requests still to come fail at once, without being sent`,
      );
      this.#endProbe();
    } else if (after !== undefined && after === this.#probe?.error) this.#endProbe();
  }

  /** An answer came (of any status): the host can be reached. */
  answered(): void {
    this.#down = undefined;
    this.#endProbe();
  }

  #endProbe(): void {
    this.#probe?.wake();
    this.#probe = undefined;
  }

  async #waitForVerdict(signal: AbortSignal | undefined): Promise<void> {
    const verdict = this.#probe?.verdict;
    if (verdict === undefined || signal?.aborted === true) return;
    let end = () => {};
    const bound = new Promise<void>((resolve) => (end = resolve));
    // Not unref'd: were the probe lost, the request would still go on at the bound.
    const timer = this.#clock.setTimer(this.#waitMs, end);
    signal?.addEventListener('abort', end, { once: true });
    await Promise.race([verdict, bound]);
    timer.cancel();
    signal?.removeEventListener('abort', end);
  }
}

/** An error's message without its `METHOD path: ` start. */
function reasonOf({ message, method, path }: ApiError): string {
  const start = `${method} ${path}: `;
  return message.startsWith(start) ? message.slice(start.length) : message;
}
