import pRetry, { AbortError } from 'p-retry';
import { tls } from '../runtime/builtins.ts';
import { Pool } from './undici.ts';
import { NAME_PATTERN } from '../core/names.ts';
import { compileScrub, type Scrub } from '../core/redact.ts';
import {
  classifyAnswer,
  fitsDeadline,
  isThrottled,
  isTransient,
  retryWait,
  usesRetry,
} from '../core/retry-policy.ts';
import { formatDuration } from '../config/duration.ts';
import type { ClientOptions, EnvironmentsClient } from './client-types.ts';
import { putBody } from './client-types.ts';
import { ApiError, failureOf } from './errors.ts';
import { RequestGate } from './gate.ts';
import { readAllPages } from './list-pages.ts';
import { readBody, ResponseTooLargeError, serverMessage, type RawResponse } from './response.ts';
import { ThrottleMeter } from './throttle-meter.ts';

export type { ClientEvents, ClientOptions, EnvironmentsClient } from './client-types.ts';
export { putBody } from './client-types.ts';

/** The default of --max-response-bytes: one listing this large fits a 256 MiB pod with room. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** `; the last attempt: <its error>` after a failed attempt, else nothing. */
function lastAttempt(after: unknown): string {
  return after instanceof Error ? `; the last attempt: ${after.message}` : '';
}

/** Creates a client over one keep-alive pool, one shared gate and the retry policy. */
export function createClient(options: ClientOptions): EnvironmentsClient {
  const { apiUrl, clock, logger, policy, events } = options;
  const basePath = apiUrl.pathname.replace(/\/+$/, '');
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const gate = new RequestGate(options.concurrency, clock);
  // Service text is scrubbed of the token it was sent as soon as it is read, before it is cut,
  // parsed or put into a message: nothing downstream ever holds it (docs/security.md).
  let scrubbing: { token: string; scrub: Scrub } | undefined;
  const scrubbed = (text: string): string => {
    const token = options.getToken();
    if (scrubbing?.token !== token) scrubbing = { token, scrub: compileScrub([token]) };
    return scrubbing.scrub(text);
  };
  const deadlineAt =
    options.deadlineMs === undefined ? undefined : clock.now() + options.deadlineMs;
  const meter = new ThrottleMeter(
    () => clock.now(),
    (ms) => events?.throttledFor?.(ms),
  );
  // What ends every wait: shutdown (`stop`) or the abort of everything (`signal`).
  const waitsEnd =
    options.stop && options.signal
      ? AbortSignal.any([options.stop, options.signal])
      : (options.stop ?? options.signal);
  // Answers refused as too large, by path: never downloaded again by this client.
  const tooLarge = new Map<string, ApiError>();
  const pool = new Pool(apiUrl.origin, {
    connections: Math.max(1, options.concurrency),
    pipelining: 1,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: {
      // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment cannot turn verification off.
      rejectUnauthorized: true,
      // --ca-file adds to the default trust store; node's `ca` alone would replace it.
      ...(options.ca === undefined
        ? {}
        : { ca: [...tls().getCACertificates('default'), options.ca] }),
    },
  });

  // Org names go into the path only after this check, and percent-encoded.
  const orgPath = (org: string) => {
    if (!NAME_PATTERN.test(org))
      throw new Error(`refusing to use org name ${JSON.stringify(org)} in a URL`);
    return `${basePath}/api/v2/environments/${encodeURIComponent(org)}`;
  };

  /** The final error of a request the deadline leaves no time for; undefined if there is time. */
  function pastDeadline(method: string, path: string, waitMs: number, after?: unknown) {
    if (fitsDeadline(clock.now(), waitMs, deadlineAt)) return undefined;
    const when =
      waitMs > 0
        ? `would pass during the ${Math.ceil(waitMs / 1000)} s wait before sending`
        : 'passed';
    return new ApiError(
      'deadline',
      `${method} ${path}: not sent${after === undefined ? '' : ' again'}: the run's deadline (--deadline ${formatDuration(options.deadlineMs ?? 0)}) ${when}${lastAttempt(after)}`,
      { method, path },
    );
  }

  /** The final error of a request that would have to wait while the client stops; else undefined. */
  function stopping(method: string, path: string, after?: unknown) {
    if (options.stop?.aborted !== true) return undefined;
    return new ApiError(
      'stopped',
      `${method} ${path}: not sent${after === undefined ? '' : ' again'}: envsync is shutting down${lastAttempt(after)}`,
      { method, path },
    );
  }

  /**
   * Waits `ms` before a request or its next attempt, unless that would pass the deadline or the
   * client is stopping (a wait ends at once then): throws the final error saying it was not sent.
   */
  async function waitBeforeSending(
    org: string,
    method: string,
    path: string,
    ms: number,
    signal: AbortSignal | undefined,
    throttled: boolean,
    after?: unknown,
  ): Promise<void> {
    const refused = stopping(method, path, after) ?? pastDeadline(method, path, ms, after);
    if (refused !== undefined) throw refused;
    const sleep = () => clock.sleep(ms, signal);
    try {
      await (throttled ? meter.measure(org, sleep) : sleep());
    } catch (error) {
      throw stopping(method, path, after) ?? error;
    }
  }

  /** One attempt: through the gate, with a timeout, the whole body read. */
  async function attempt(
    org: string,
    method: 'GET' | 'PUT',
    path: string,
    body: string | undefined,
    cancel: AbortSignal | undefined,
    waits: AbortSignal | undefined,
    /** The previous attempt's error, if any. */
    after: unknown,
  ): Promise<RawResponse> {
    const refused = tooLarge.get(path);
    if (refused !== undefined) throw new AbortError(refused);
    try {
      // Waiting for a slot ends with `cancel`, as a request in flight does. The gate's pauses are
      // the server's (a 429's Retry-After, then pacing): throttled time, ended by shutdown too.
      await gate.acquire(cancel, (ms) =>
        waitBeforeSending(org, method, path, ms, waits, true, after),
      );
    } catch (error) {
      if (cancel?.aborted) throw cancel.reason;
      const final = error instanceof ApiError ? error : stopping(method, path, after);
      throw final === undefined ? error : new AbortError(final);
    }
    // No request is started after the deadline; a shutdown lets those that need no wait go out.
    const final = pastDeadline(method, path, 0, after);
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
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    timer.unref();
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
          authorization: `Bearer ${options.getToken()}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body }),
      });
      status = response.statusCode;
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
      if (/timeout/i.test((error as { code?: string }).code ?? '')) timedOut = true;
      const reason =
        (error as { code?: string }).code ??
        (error instanceof Error ? error.message : String(error));
      throw new ApiError(
        timedOut ? 'timeout' : 'network',
        timedOut
          ? `${method} ${path}: no answer within ${options.timeoutMs} ms (--timeout)`
          : `${method} ${path}: connection failed (${reason})`,
        { method, path, cause: error },
      );
    } finally {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onCancel);
      gate.release();
    }
  }

  /** Carries out the retry policy's verdict on an answer: returns it on success, else throws. */
  function classify(method: string, path: string, response: RawResponse): RawResponse {
    const { status } = response;
    const verdict = classifyAnswer(status, response.headers['retry-after'], clock.now(), policy);
    if (verdict.kind === 'success') {
      gate.succeeded();
      return response;
    }
    const context = { method, path, status };
    if (verdict.kind === 'redirect') {
      throw new AbortError(
        new ApiError(
          'redirect',
          `${method} ${path}: the API answered ${status} (a redirect); envsync does not follow redirects: set --api-url to the final address`,
          context,
        ),
      );
    }
    const message = serverMessage(scrubbed(response.text));
    if (verdict.kind === 'auth') {
      throw new AbortError(
        new ApiError(
          'auth',
          `${method} ${path}: the token was refused (${status}): ${message}`,
          context,
        ),
      );
    }
    const { retryAfterMs } = verdict;
    if (status === 429) {
      events?.throttled?.();
      gate.throttled(retryAfterMs ?? policy.minDelayMs);
      logger.debug(
        { method, path, retryAfterMs, limit: gate.limit, paceMs: Math.round(gate.interval) },
        'throttled (429): every request pauses, then paces',
      );
    }
    const error = new ApiError('http', `${method} ${path}: ${status} ${message}`, {
      ...context,
      retryAfterMs,
    });
    if (verdict.retry) throw error;
    throw new AbortError(error);
  }

  async function send(
    org: string,
    method: 'GET' | 'PUT',
    path: string,
    body?: string,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    // One signal for the whole request: the client's (shutdown) and the caller's (this org).
    const cancel =
      options.signal && signal
        ? AbortSignal.any([options.signal, signal])
        : (signal ?? options.signal);
    // What ends this request's waits: the client stopping, and `cancel`.
    const waits = signal && waitsEnd ? AbortSignal.any([waitsEnd, signal]) : (signal ?? waitsEnd);
    let throttledAttempts = 0;
    let consumedRetry = true;
    let lastError: unknown;
    return pRetry(
      async () =>
        classify(method, path, await attempt(org, method, path, body, cancel, waits, lastError)),
      {
        retries: policy.retries,
        // No delay of p-retry's own: the waits are ours (below), on the clock passed in, ended by
        // shutdown, and never begun when they would pass the deadline.
        minTimeout: 0,
        ...(cancel ? { signal: cancel } : {}),
        shouldConsumeRetry: ({ error }) => {
          const failure = failureOf(error);
          if (isThrottled(failure)) throttledAttempts++;
          consumedRetry = usesRetry(failure, throttledAttempts, policy);
          return consumedRetry;
        },
        // Called only when another attempt may follow: waits for it, or throws why not.
        shouldRetry: async ({ error, attemptNumber, retriesConsumed }) => {
          const failure = failureOf(error);
          if (!isTransient(failure)) return false;
          lastError = error;
          const wait = retryWait(failure, consumedRetry, retriesConsumed, policy, Math.random());
          events?.retry?.(
            method,
            error instanceof ApiError ? String(error.status ?? error.kind) : 'error',
          );
          logger.warn(
            {
              method,
              path,
              attempt: attemptNumber,
              status: (error as ApiError).status,
              retryDelay: wait.waitMs,
            },
            `retrying: ${error.message}`,
          );
          await waitBeforeSending(
            org,
            method,
            path,
            wait.waitMs,
            waits,
            wait.throttledMs > 0,
            error,
          );
          return true;
        },
      },
    );
  }

  return {
    gate,
    listEnvironments(org) {
      const path = orgPath(org);
      return readAllPages(path, (url) => send(org, 'GET', url), scrubbed);
    },
    async putEnvironment(org, env, signal) {
      await send(org, 'PUT', orgPath(org), JSON.stringify(putBody(env)), signal);
    },
    canSend() {
      return options.stop?.aborted !== true && fitsDeadline(clock.now(), 0, deadlineAt);
    },
    throttledMs(org) {
      return meter.totalMs(org);
    },
    async close() {
      await pool.close();
    },
  };
}
