/** The retry policy, as data and pure decisions; docs/api-behaviour.md says why. */
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

/** A failure another attempt, and another round, may cure. */
export function isTransient(failure: Failure | undefined): boolean {
  if (failure?.kind === 'network') return unreachable(failure) === undefined;
  if (failure?.kind === 'http') return isRetriedStatus(failure.status ?? 0);
  return failure?.kind === 'timeout';
}

/** True when a failure shows the API's host cannot be reached at all (refused, or no DNS). */
export function hostUnreachable(failure: Failure | undefined): boolean {
  return ['refused', 'dns'].includes(unreachable(failure) ?? '');
}

/** Whether another attempt follows; an unreachable host gets one (the service may restart). */
export function mayRetry(method: string, failure: Failure | undefined, retriesConsumed: number) {
  if (!RETRIED_METHODS.has(method)) return false;
  if (hostUnreachable(failure)) return retriesConsumed < 1;
  return isTransient(failure);
}

/** True for a 429: the server asked everyone to slow down (the shared gate pauses them all). */
export function isThrottled(failure: Failure | undefined): boolean {
  return failure?.status === 429;
}

/** Whether a failure uses up a retry: a 429 does not, `maxThrottledAttempts` times. */
export function usesRetry(failure: Failure | undefined, throttled: number, policy: RetryPolicy) {
  return !(isThrottled(failure) && throttled <= policy.maxThrottledAttempts);
}

/** What to wait beyond the backoff: the rest of a 503's Retry-After (a 429's is the gate's). */
export function retryAfterWaitMs(failure: Failure | undefined, backoffMs: number): number {
  if (failure === undefined || isThrottled(failure)) return 0;
  return Math.max(0, (failure.retryAfterMs ?? 0) - backoffMs);
}

/** Retry-After (seconds or an HTTP date) as milliseconds from `nowMs`, from 0 to `maxMs`. */
export function parseRetryAfter(
  header: string | string[] | undefined,
  nowMs: number,
  maxMs: number,
): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  const ms = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value) - nowMs;
  return Number.isNaN(ms) ? undefined : Math.min(Math.max(0, Math.ceil(ms)), maxMs);
}
