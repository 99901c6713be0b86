/**
 * The retry policy, as data and pure decisions: which failures another attempt may cure, how
 * Retry-After is read, and the backoff p-retry waits. What the production service's own client
 * does, which this follows: docs/api-behaviour.md.
 */
import type { Options } from 'p-retry';
import { unreachable, type Failure } from '../core/request-failure.ts';

export interface RetryPolicy {
  /** Retries after the first attempt (--retries), for failures other than throttling. */
  readonly retries: number;
  /** The first backoff (--retry-delay), doubling each retry with a jitter of x1 to x2. */
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  /** The longest Retry-After honoured (--max-retry-after); a longer one is waited this long. */
  readonly maxRetryAfterMs: number;
  /** A 429 does not use up a retry, up to this many times per request. */
  readonly maxThrottledAttempts: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 4,
  minDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
  maxThrottledAttempts: 20,
};

/** p-retry's options for the policy: it counts the attempts and waits the backoff. */
export function backoff({ retries, minDelayMs, maxDelayMs }: RetryPolicy): Options {
  return { retries, minTimeout: minDelayMs, maxTimeout: maxDelayMs, factor: 2, randomize: true };
}

/** Statuses another attempt may cure: 408, 409 (a lock), 425, 429, and every 5xx but 501. */
export function isRetriedStatus(status: number): boolean {
  return [408, 409, 425, 429].includes(status) || (status >= 500 && status < 600 && status !== 501);
}

/** Methods retried: all envsync sends, each idempotent (an upsert, an operation by name). */
const RETRIED_METHODS: ReadonlySet<string> = new Set(['GET', 'PUT', 'POST', 'DELETE', 'PATCH']);

/**
 * True for a failure that another attempt, and another round of the org's pass, may cure: a
 * network error (not an unreachable address), a timeout, a retried status.
 */
export function isTransient(failure: Failure | undefined): boolean {
  if (failure?.kind === 'network') return unreachable(failure) === undefined;
  if (failure?.kind === 'http') return isRetriedStatus(failure.status ?? 0);
  return failure?.kind === 'timeout';
}

/** True when a failure shows the API's host cannot be reached at all (refused, or no DNS). */
export function hostUnreachable(failure: Failure | undefined): boolean {
  return ['refused', 'dns'].includes(unreachable(failure) ?? '');
}

/**
 * Whether another attempt follows a failure of a `method` request, after `retriesConsumed`. An
 * unreachable host gets one retry, in case the service was restarting: a wrong --api-url fails in
 * seconds, not after every backoff and round.
 */
export function mayRetry(method: string, failure: Failure | undefined, retriesConsumed: number) {
  if (!RETRIED_METHODS.has(method)) return false;
  if (hostUnreachable(failure)) return retriesConsumed < 1;
  return isTransient(failure);
}

/** True for a 429: the server asked everyone to slow down (the shared gate pauses them all). */
export function isThrottled(failure: Failure | undefined): boolean {
  return failure?.status === 429;
}

/** Whether a failure uses up a retry: a 429 does not, up to `maxThrottledAttempts` (`throttled`). */
export function usesRetry(failure: Failure | undefined, throttled: number, policy: RetryPolicy) {
  return !(isThrottled(failure) && throttled <= policy.maxThrottledAttempts);
}

/**
 * What to wait beyond p-retry's backoff: the rest of a longer Retry-After (a 503's, for this
 * request only; a 429's pauses every request at the shared gate instead).
 */
export function retryAfterWaitMs(failure: Failure | undefined, backoffMs: number): number {
  if (failure === undefined || isThrottled(failure)) return 0;
  return Math.max(0, (failure.retryAfterMs ?? 0) - backoffMs);
}

/**
 * Reads a Retry-After header (delta-seconds or an HTTP date) as milliseconds from `nowMs`, at
 * least 0 and at most `maxMs`; undefined when absent or unreadable.
 */
export function parseRetryAfter(
  header: string | string[] | undefined,
  nowMs: number,
  maxMs: number,
): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  const ms = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value) - nowMs;
  return Number.isNaN(ms) ? undefined : Math.min(Math.max(0, Math.ceil(ms)), maxMs);
}
