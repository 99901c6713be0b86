/**
 * The retry policy as data and pure decisions: which answers are retried, which failures another
 * attempt may cure (and which say the API's address is wrong), how Retry-After is read and how
 * long to wait. The client (api/client.ts) only
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
  /** The system's code for a connection that failed: ECONNREFUSED, ENOTFOUND, a certificate's. */
  readonly code?: string | undefined;
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
 * What a failed connection says of the API's address itself rather than of one request: nothing
 * listens there (`refused`), its host name does not resolve (`dns`), or its certificate cannot be
 * verified (`tls`). A wrong --api-url looks like one of these, and waiting does not cure it.
 */
export type Unreachable = 'refused' | 'dns' | 'tls';

const UNREACHABLE_CODES: ReadonlyMap<string, Unreachable> = new Map([
  ['ECONNREFUSED', 'refused'],
  ['ENOTFOUND', 'dns'],
  ['EAI_AGAIN', 'dns'],
  // Node's and OpenSSL's names for a certificate that cannot be verified.
  ...[
    'CERT_HAS_EXPIRED',
    'CERT_NOT_YET_VALID',
    'CERT_REJECTED',
    'CERT_REVOKED',
    'CERT_SIGNATURE_FAILURE',
    'CERT_UNTRUSTED',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'ERR_TLS_CERT_ALTNAME_INVALID',
    'HOSTNAME_MISMATCH',
    'INVALID_CA',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'UNABLE_TO_GET_ISSUER_CERT',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  ].map((code): [string, Unreachable] => [code, 'tls']),
]);

/** Which of the unreachable kinds a failed connection is, if it is one. */
export function unreachable(failure: Failure | undefined): Unreachable | undefined {
  if (failure?.kind !== 'network' || failure.code === undefined) return undefined;
  return UNREACHABLE_CODES.get(failure.code);
}

/**
 * Retries of a request whose connection was refused or whose host name did not resolve: one, in
 * case the service was restarting or the resolver hiccuped, then the request fails. A wrong port
 * or host fails the run in seconds, instead of after every backoff of --retries and every round.
 */
export const UNREACHABLE_RETRIES = 1;

/**
 * True for a failure another attempt may cure after a backoff, and another round of the org's
 * pass too (network errors, timeouts, retryable statuses): transient. An unreachable address
 * (above) is not: a refused connection or a name that does not resolve gets only its quick retry
 * (`mayRetry`), a certificate none. Anything else, and anything that is not a request failure at
 * all, is final.
 */
export function isTransient(failure: Failure | undefined): boolean {
  if (failure === undefined) return false;
  if (failure.kind === 'network') return unreachable(failure) === undefined;
  if (failure.kind === 'timeout') return true;
  return (
    failure.kind === 'http' && failure.status !== undefined && isRetryableStatus(failure.status)
  );
}

/**
 * Whether another attempt of a request follows `failure`, after `retriesConsumed` of its retries
 * (the count of --retries, which bounds every failure, is the client's): a transient failure is
 * retried, a refused connection or an unresolved name only while fewer than UNREACHABLE_RETRIES
 * were used, anything else never.
 */
export function mayRetry(failure: Failure | undefined, retriesConsumed: number): boolean {
  const reach = unreachable(failure);
  if (reach === 'refused' || reach === 'dns') return retriesConsumed < UNREACHABLE_RETRIES;
  return isTransient(failure);
}

/**
 * True when a request's last failure shows the API's host cannot be reached at all (refused, or
 * its name does not resolve): the client then fails its later requests without sending them,
 * until an answer comes. A certificate's failure is not among them: each attempt fails at once,
 * on its own, without a wait.
 */
export function hostUnreachable(failure: Failure | undefined): boolean {
  const reach = unreachable(failure);
  return reach === 'refused' || reach === 'dns';
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
