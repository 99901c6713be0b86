/**
 * The retry policy as data and pure decisions: which answers are retried, which failures another
 * attempt may cure, how Retry-After is read and how long to wait. The client (api/client.ts) only
 * carries these decisions out. What the production service's own client does, which this follows,
 * is in docs/api-behaviour.md.
 */

/** Why a request to the Environments API failed. */
export type FailureKind =
  | 'http' // the server answered with a status that is not success
  | 'auth' // 401 or 403: the token was refused
  | 'network' // the connection failed or was reset
  | 'timeout' // no complete answer within --timeout
  | 'invalid-response' // a success status with a body envsync cannot read
  | 'redirect' // a 3xx: envsync does not follow redirects
  | 'too-large' // an answer larger than --max-response-bytes: final, never read again in the run
  | 'deadline' // not sent: the run's --deadline passed, or would pass during the wait before it
  | 'stopped'; // not sent: the process is shutting down (SIGTERM, SIGINT)

/** The facts of a failed request the policy decides on. */
export interface Failure {
  readonly kind: FailureKind;
  readonly status?: number | undefined;
  /** Delay the server asked for (Retry-After), in milliseconds. */
  readonly retryAfterMs?: number | undefined;
}

export interface RetryPolicy {
  /** Retries after the first attempt for failures other than throttling. */
  readonly retries: number;
  /** First backoff delay; doubles each retry, with jitter (x1 to x2), up to `maxDelayMs`. */
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  /** Longest Retry-After honoured (--max-retry-after); a longer one is waited only this long. */
  readonly maxRetryAfterMs: number;
  /** A throttled (429) answer does not use up a retry, up to this many times per request. */
  readonly maxThrottledAttempts: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 4,
  minDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
  maxThrottledAttempts: 20,
};

/** Statuses worth another attempt: the request may succeed unchanged later. */
export function isRetryableStatus(status: number): boolean {
  return (
    status === 408 ||
    status === 409 ||
    status === 425 ||
    status === 429 ||
    (status >= 500 && status <= 599 && status !== 501)
  );
}

/**
 * True for a failure another attempt may cure (network errors, timeouts, retryable statuses):
 * transient. Anything else, and anything that is not a request failure at all, is final.
 */
export function isTransient(failure: Failure | undefined): boolean {
  if (failure === undefined) return false;
  if (failure.kind === 'network' || failure.kind === 'timeout') return true;
  return (
    failure.kind === 'http' && failure.status !== undefined && isRetryableStatus(failure.status)
  );
}

/** True for a 429: the server asked everyone to slow down. */
export function isThrottled(failure: Failure | undefined): boolean {
  return failure?.status === 429;
}

/** What an answer means for the request that got it. */
export type Verdict =
  | { readonly kind: 'success' }
  | { readonly kind: 'redirect' }
  | { readonly kind: 'auth' }
  /** Not a success; `retry` says whether another attempt may cure it. */
  | { readonly kind: 'http'; readonly retry: boolean; readonly retryAfterMs: number | undefined };

/** Classifies an answer by its status and Retry-After header. */
export function classifyAnswer(
  status: number,
  retryAfter: string | string[] | undefined,
  nowMs: number,
  policy: RetryPolicy,
): Verdict {
  if (status >= 200 && status <= 299) return { kind: 'success' };
  if (status >= 300 && status <= 399) return { kind: 'redirect' };
  if (status === 401 || status === 403) return { kind: 'auth' };
  return {
    kind: 'http',
    retry: isRetryableStatus(status),
    retryAfterMs: parseRetryAfter(retryAfter, nowMs, policy.maxRetryAfterMs),
  };
}

/**
 * Whether a failed attempt uses up one of the request's retries: a 429 is the server saying when
 * to come back, not a failure, up to `maxThrottledAttempts` of them (`throttledSoFar` counts this
 * one).
 */
export function usesRetry(
  failure: Failure | undefined,
  throttledSoFar: number,
  policy: RetryPolicy,
): boolean {
  return !(isThrottled(failure) && throttledSoFar <= policy.maxThrottledAttempts);
}

/**
 * How much longer than the backoff delay to wait before the next attempt: a 503's Retry-After is
 * for this request only (a 429's pauses every request, through the shared gate instead).
 */
export function extraWaitMs(failure: Failure | undefined, backoffMs: number): number {
  if (failure === undefined || isThrottled(failure)) return 0;
  return Math.max(0, (failure.retryAfterMs ?? 0) - backoffMs);
}

/**
 * Reads a Retry-After header (delta-seconds or an HTTP date) as milliseconds from `nowMs`;
 * undefined when absent or unreadable. Never negative; capped at `maxMs`.
 */
export function parseRetryAfter(
  header: string | string[] | undefined,
  nowMs: number,
  maxMs: number,
): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === '') return undefined;
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(value)) ms = Number(value) * 1000;
  else {
    const date = Date.parse(value);
    if (Number.isNaN(date)) return undefined;
    ms = date - nowMs;
  }
  return Math.min(Math.max(0, Math.ceil(ms)), maxMs);
}

/**
 * The backoff before the retry that follows `retriesConsumed` retries: `minDelayMs` doubling per
 * retry, times a jitter of 1 to 2 (`random` in [0, 1)), at most `maxDelayMs`.
 */
export function backoffDelayMs(
  retriesConsumed: number,
  policy: RetryPolicy,
  random: number,
): number {
  if (policy.minDelayMs <= 0) return 0;
  const delay = Math.round((1 + random) * policy.minDelayMs * 2 ** retriesConsumed);
  return Math.min(delay, policy.maxDelayMs);
}

/** The wait before another attempt, and how much of it the server asked for. */
export interface RetryWait {
  readonly waitMs: number;
  /** The part of the wait that is the server's Retry-After (time spent throttled). */
  readonly throttledMs: number;
}

/**
 * How long to wait before the next attempt after `failure`: a throttled attempt that used no
 * retry waits only at the shared gate (its pause is the 429's Retry-After); any other retry waits
 * its backoff, or the Retry-After of its answer (a 503's) when that is longer.
 */
export function retryWait(
  failure: Failure | undefined,
  consumedRetry: boolean,
  retriesConsumed: number,
  policy: RetryPolicy,
  random: number,
): RetryWait {
  if (!consumedRetry) return { waitMs: 0, throttledMs: 0 };
  const backoff = backoffDelayMs(retriesConsumed, policy, random);
  const extra = extraWaitMs(failure, backoff);
  return { waitMs: backoff + extra, throttledMs: extra > 0 ? backoff + extra : 0 };
}

/**
 * Whether a wait of `waitMs` starting at `nowMs` may begin: one that would end at or after the
 * run's deadline is never started (nor is a request once the deadline has passed, `waitMs` 0).
 */
export function fitsDeadline(
  nowMs: number,
  waitMs: number,
  deadlineAt: number | undefined,
): boolean {
  return deadlineAt === undefined || nowMs + waitMs < deadlineAt;
}
