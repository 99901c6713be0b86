import { ApiError } from './errors.ts';

/**
 * The retry policy as data (issue 3; observed-behaviour.md: the service's own client retries
 * connection errors, 409, 429 and 5xx except 501, with backoff from 1 s to 30 s).
 */
export interface RetryPolicy {
  /** Retries after the first attempt for failures other than throttling. */
  readonly retries: number;
  /** First backoff delay; doubles each retry, with jitter (x1 to x2), up to `maxDelayMs`. */
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  /** Longest Retry-After honoured; a longer one is capped to this. */
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

/** True for failures another attempt may cure: network errors, timeouts and retryable statuses. */
export function isRetryable(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  if (error.kind === 'network' || error.kind === 'timeout') return true;
  return error.kind === 'http' && error.status !== undefined && isRetryableStatus(error.status);
}

/** True for a 429: the server asked everyone to slow down. */
export function isThrottled(error: unknown): boolean {
  return error instanceof ApiError && error.status === 429;
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
