import { AbortError } from 'p-retry';
import type { Clock } from '../core/clock.ts';
import type { ClientEvents } from './client-types.ts';
import { ApiError } from './errors.ts';
import type { RequestGate } from './gate.ts';
import type { RequestBody } from './policy-documents.ts';
import { connectTimeoutMs, type ConnectionPool } from './pool.ts';
import { connectionError, type HostReach } from './reach.ts';
import { readBody, ResponseTooLargeError, type RawResponse } from './response.ts';
import type { SendLimits } from './send-limits.ts';

/** The methods envsync sends: the listing, the upsert, and the kosli dialect's operations. */
export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH';

/**
 * One attempt of a request: a slot at the gate, then the request with a timeout of its own, the
 * whole body read. A failure it knows to be final is thrown wrapped in p-retry's AbortError; any
 * other is left to the retry policy.
 */
export type Attempt = (
  org: string,
  method: HttpMethod,
  path: string,
  /** What a PUT sends (JSON, or a policy upload's multipart form). */
  body: RequestBody | undefined,
  /** Ends the request, waiting for the gate or in flight, with its reason. */
  cancel: AbortSignal | undefined,
  /** Ends the gate's waits (the client stopping, and `cancel`). */
  waits: AbortSignal | undefined,
  /** The previous attempt's error, if any. */
  after: unknown,
) => Promise<RawResponse>;

export function attempts(options: {
  readonly pool: ConnectionPool;
  readonly gate: RequestGate;
  readonly limits: SendLimits;
  /** Whether the host can be reached: no attempt is sent once it cannot (api/reach.ts). */
  readonly reach: HostReach;
  /** The API's address (host:port), for the errors of a failed connection. */
  readonly host: string;
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly maxBytes: number;
  /** The token of the request's org (client-types.ts). */
  readonly getToken: (org: string) => string;
  readonly events?: ClientEvents | undefined;
}): Attempt {
  const { pool, gate, limits, reach, clock, timeoutMs, maxBytes, events } = options;
  // Answers refused as too large, by path: never downloaded again by this client.
  const tooLarge = new Map<string, ApiError>();

  return async (org, method, path, body, cancel, waits, after) => {
    const refused = tooLarge.get(path);
    if (refused !== undefined) throw new AbortError(refused);
    const acquire = async () => {
      try {
        // Waiting for a slot ends with `cancel`, as a request in flight does. The gate's pauses
        // are the server's (a 429's Retry-After, then pacing): throttled time, ended by shutdown.
        await gate.acquire(cancel, (ms) =>
          limits.waitBeforeSending(org, method, path, ms, waits, true, after),
        );
      } catch (error) {
        if (cancel?.aborted) throw cancel.reason;
        const final = error instanceof ApiError ? error : limits.stopping(method, path, after);
        throw final === undefined ? error : new AbortError(final);
      }
    };
    // A slot, but not while the host is known unreachable; while it is suspect, after the probe's
    // verdict.
    const unreachable = await reach.admit(method, path, after, waits, acquire, () =>
      gate.release(),
    );
    if (unreachable !== undefined) throw new AbortError(unreachable);
    // No request is started after the deadline; a shutdown lets those that need no wait go out.
    const final = limits.pastDeadline(method, path, 0, after);
    if (final !== undefined) {
      gate.release();
      throw new AbortError(final);
    }
    const started = clock.now();
    // One controller per attempt, aborted by the timeout or by `cancel`. (AbortSignal.timeout and
    // AbortSignal.any do the same with a weak reference and a finalizer per request: 3-4x the
    // cost, and garbage the collector must track.)
    const controller = new AbortController();
    let timedOut = false;
    const timer = clock.setTimer(
      timeoutMs,
      () => {
        timedOut = true;
        controller.abort(new Error(`no answer within ${timeoutMs} ms`));
      },
      // A request in flight keeps the process alive by its socket; its timer need not.
      { unref: true },
    );
    const onCancel = () => controller.abort(cancel?.reason);
    if (cancel?.aborted) onCancel();
    else cancel?.addEventListener('abort', onCancel, { once: true });
    let status: number | undefined;
    try {
      const response = await pool.request({
        method,
        path,
        signal: controller.signal,
        headers: {
          authorization: `Bearer ${options.getToken(org)}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': body.contentType }),
        },
        ...(body === undefined ? {} : { body: body.bytes }),
      });
      status = response.statusCode;
      reach.answered();
      const text = await readBody(response, maxBytes);
      events?.request?.(method, response.statusCode, clock.now() - started);
      return { status: response.statusCode, headers: response.headers, text };
    } catch (error) {
      events?.request?.(method, 'error', clock.now() - started);
      if (cancel?.aborted) throw cancel.reason;
      if (error instanceof ResponseTooLargeError) {
        // Final: another attempt, round or page would only download it again.
        const size = error.declared === undefined ? '' : ` (it announced ${error.declared})`;
        const tooBig = new ApiError(
          'too-large',
          `${method} ${path}: the answer is larger than ${maxBytes} bytes${size}, the limit set by --max-response-bytes; it is not read again in this run (raise --max-response-bytes if the org is really this large)`,
          { method, path, status, cause: error },
        );
        tooLarge.set(path, tooBig);
        throw new AbortError(tooBig);
      }
      const code = (error as { code?: string }).code ?? '';
      const context = { method, path, cause: error };
      if (code === 'UND_ERR_CONNECT_TIMEOUT') {
        const within = connectTimeoutMs(timeoutMs);
        const what = `no connection to ${options.host} within ${within} ms`;
        throw new ApiError('timeout', `${method} ${path}: ${what}`, context);
      }
      if (timedOut || /timeout/i.test(code)) {
        const what = `no answer within ${timeoutMs} ms (--timeout)`;
        throw new ApiError('timeout', `${method} ${path}: ${what}`, context);
      }
      const failed = connectionError(method, path, error, options.host);
      reach.attemptFailed(failed);
      throw failed;
    } finally {
      timer.cancel();
      cancel?.removeEventListener('abort', onCancel);
      gate.release();
    }
  };
}
