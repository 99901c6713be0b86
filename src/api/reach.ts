import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.ts';
import {
  afterAttemptFailed,
  afterRequestFailed,
  beforeAttempt,
  REACHABLE,
  type HostReach as Reach,
} from './host-reach.ts';
import { unreachable } from '../core/retry-policy.ts';
import { ApiError } from './errors.ts';

/** The API's address as a failed connection names it: host and port, the port always given. */
export function addressOf(url: URL): string {
  const port = url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80';
  return `${url.hostname}:${port}`;
}

/**
 * The error of an attempt whose connection failed, with the system's code. When the code says
 * the address itself is at fault (core/retry-policy.ts's `unreachable`), the words say which
 * part: the port (refused), the host name (does not resolve) or the certificate.
 */
export function connectionError(
  method: string,
  path: string,
  error: unknown,
  host: string,
): ApiError {
  const raw = (error as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : undefined;
  const text = error instanceof Error ? error.message : String(error);
  const reason = code ?? text;
  const context = { method, path, cause: error, code, host };
  let what: string;
  switch (unreachable({ kind: 'network', code })) {
    case 'refused':
      what = `connection refused by ${host} (${reason})`;
      break;
    case 'dns':
      what = `the host name ${host.replace(/:\d+$/, '')} ${code === 'ENOTFOUND' ? 'does not resolve' : 'could not be resolved'} (${reason})`;
      break;
    case 'tls':
      what = `the TLS certificate of ${host} cannot be verified (${reason}: ${text})`;
      break;
    default:
      what = `connection failed (${reason})`;
  }
  return new ApiError('network', `${method} ${path}: ${what}`, context);
}

/**
 * Carries out api/host-reach.ts's decisions for one client: holds its state, makes the requests
 * that must wait for the probe's verdict wait (each at most `waitMs`, and no longer than its own
 * `signal`), and says why a request is not sent once the host is known unreachable.
 */
export class HostReach {
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #waitMs: number;
  #state: Reach<ApiError> = REACHABLE;
  /** Wakes the requests waiting for the probe's verdict. */
  #wake: (() => void) | undefined;
  #verdict: Promise<void> | undefined;

  constructor(options: { logger: Logger; clock: Clock; waitMs: number }) {
    this.#logger = options.logger;
    this.#clock = options.clock;
    this.#waitMs = options.waitMs;
  }

  /**
   * Takes an attempt (`after`: its request's previous attempt's error) to the point of sending:
   * while the host is suspect it first waits for the probe's verdict (once, bounded), then
   * `acquire`s its slot; when the host became suspect or unreachable meanwhile (while it waited
   * for the slot), it gives the slot back (`release`) and decides again. Resolves holding a slot,
   * or with the final error of an attempt not sent, holding none.
   */
  async admit(
    method: string,
    path: string,
    after: unknown,
    signal: AbortSignal | undefined,
    acquire: () => Promise<void>,
    release: () => void,
  ): Promise<ApiError | undefined> {
    let waited = false;
    for (;;) {
      const decision = beforeAttempt(this.#state, after, waited);
      if (decision === 'refuse') return this.#refusal(method, path, after);
      if (decision === 'wait') {
        waited = true;
        await this.#waitForVerdict(signal);
        continue;
      }
      await acquire();
      if (beforeAttempt(this.#state, after, waited) === 'send') return undefined;
      release();
    }
  }

  /** An attempt failed: the first one refused, or unresolved, makes the host suspect. */
  attemptFailed(error: ApiError): void {
    this.#set(afterAttemptFailed(this.#state, error));
  }

  /** A request failed for good (`after`: its previous attempt's error). */
  failed(error: unknown, after: unknown): void {
    const failure = error instanceof ApiError ? error : undefined;
    this.#set(afterRequestFailed(this.#state, failure, after));
  }

  /** An answer came (of any status): the host can be reached. */
  answered(): void {
    this.#set(REACHABLE);
  }

  #set(next: Reach<ApiError>): void {
    const previous = this.#state;
    if (next === previous) return;
    this.#state = next;
    if (next.kind === 'down') {
      // Debug only: the report (or the daemon's pass line) says it once for every org it failed.
      this.#logger.debug(
        { code: next.failure.code, host: next.failure.host },
        `the API cannot be reached: ${reasonOf(next.failure)}; the requests still to come fail at once, without being sent`,
      );
    }
    if (next.kind === 'suspect') {
      this.#verdict = new Promise((resolve) => (this.#wake = resolve));
    } else if (previous.kind === 'suspect') {
      this.#wake?.();
      this.#wake = undefined;
      this.#verdict = undefined;
    }
  }

  async #waitForVerdict(signal: AbortSignal | undefined): Promise<void> {
    const verdict = this.#verdict;
    if (verdict === undefined || signal?.aborted === true) return;
    let timer: Timer | undefined;
    let onAbort: (() => void) | undefined;
    try {
      await Promise.race([
        verdict,
        new Promise<void>((resolve) => {
          // Not unref'd: were the probe lost, the request would still go on at the bound, and
          // the process would not end with it pending.
          timer = this.#clock.setTimer(this.#waitMs, resolve);
          onAbort = resolve;
          signal?.addEventListener('abort', onAbort, { once: true });
        }),
      ]);
    } finally {
      timer?.cancel();
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
    }
  }

  #refusal(method: string, path: string, after: unknown): ApiError | undefined {
    if (this.#state.kind !== 'down') return undefined;
    const down = this.#state.failure;
    return new ApiError(
      'network',
      `${method} ${path}: not sent${after === undefined ? '' : ' again'}: an earlier request found the API unreachable: ${reasonOf(down)}`,
      { method, path, code: down.code, host: down.host },
    );
  }
}

/** An error's message without its `METHOD path: ` start. */
function reasonOf(error: ApiError): string {
  const start = `${error.method} ${error.path}: `;
  return error.message.startsWith(start) ? error.message.slice(start.length) : error.message;
}
