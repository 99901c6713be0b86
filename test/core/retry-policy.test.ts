import { describe, expect, it } from 'vitest';
import { ApiError, failureOf } from '../../src/api/errors.ts';
import {
  backoffDelayMs,
  classifyAnswer,
  DEFAULT_RETRY_POLICY,
  extraWaitMs,
  fitsDeadline,
  isRetryableStatus,
  hostUnreachable,
  isTransient,
  mayRetry,
  parseRetryAfter,
  retryWait,
  unreachable,
  UNREACHABLE_RETRIES,
  usesRetry,
  type Failure,
} from '../../src/core/retry-policy.ts';

describe('retry policy', () => {
  it.each([
    [408, true],
    [409, true],
    [425, true],
    [429, true],
    [500, true],
    [502, true],
    [503, true],
    [504, true],
    [501, false],
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [405, false],
    [413, false],
    [422, false],
  ])('status %i retryable: %s', (status, expected) => {
    expect(isRetryableStatus(status)).toBe(expected);
  });

  it('retries network errors and timeouts, never unknown errors', () => {
    expect(isTransient(failureOf(new ApiError('network', 'x', { method: 'GET', path: '/' })))).toBe(
      true,
    );
    expect(isTransient(failureOf(new ApiError('timeout', 'x', { method: 'GET', path: '/' })))).toBe(
      true,
    );
    expect(
      isTransient(failureOf(new ApiError('auth', 'x', { method: 'GET', path: '/', status: 401 }))),
    ).toBe(false);
    expect(
      isTransient(failureOf(new ApiError('invalid-response', 'x', { method: 'GET', path: '/' }))),
    ).toBe(false);
    expect(isTransient(failureOf(new Error('boom')))).toBe(false);
  });

  it('reads Retry-After as seconds or an HTTP date, capped and never negative', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(parseRetryAfter('3', now, 60_000)).toBe(3000);
    expect(parseRetryAfter('0.5', now, 60_000)).toBe(500);
    expect(parseRetryAfter('3600', now, 60_000)).toBe(60_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:05 GMT', now, 60_000)).toBe(5000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now, 60_000)).toBe(0);
    expect(parseRetryAfter('soon', now, 60_000)).toBeUndefined();
    expect(parseRetryAfter(undefined, now, 60_000)).toBeUndefined();
  });
});

describe('classifyAnswer', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  it.each([
    [200, undefined, { kind: 'success' }],
    [201, undefined, { kind: 'success' }],
    [204, undefined, { kind: 'success' }],
    [301, undefined, { kind: 'redirect' }],
    [307, undefined, { kind: 'redirect' }],
    [401, undefined, { kind: 'auth' }],
    [403, undefined, { kind: 'auth' }],
    [400, undefined, { kind: 'http', retry: false, retryAfterMs: undefined }],
    [404, undefined, { kind: 'http', retry: false, retryAfterMs: undefined }],
    [429, '2', { kind: 'http', retry: true, retryAfterMs: 2000 }],
    [503, '1.5', { kind: 'http', retry: true, retryAfterMs: 1500 }],
    [503, '999999', { kind: 'http', retry: true, retryAfterMs: 120_000 }],
    [501, undefined, { kind: 'http', retry: false, retryAfterMs: undefined }],
  ] as const)('%i (Retry-After %s) is %o', (status, retryAfter, verdict) => {
    expect(classifyAnswer(status, retryAfter, now, DEFAULT_RETRY_POLICY)).toEqual(verdict);
  });
});

describe('usesRetry and extraWaitMs', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, maxThrottledAttempts: 2 };
  const throttled = { kind: 'http', status: 429, retryAfterMs: 5000 } as const;
  const unavailable = { kind: 'http', status: 503, retryAfterMs: 5000 } as const;
  it.each([
    ['a 429 within the allowance', throttled, 1, false],
    ['the last 429 of the allowance', throttled, 2, false],
    ['a 429 past the allowance', throttled, 3, true],
    ['a 503', unavailable, 0, true],
    ['a network error', { kind: 'network' } as const, 0, true],
    ['something that is not a request failure', undefined, 0, true],
  ])('%s uses a retry: %s', (_title, failure, throttledSoFar, expected) => {
    expect(usesRetry(failure, throttledSoFar, policy)).toBe(expected);
  });
  it.each([
    ["a 503's Retry-After longer than the backoff", unavailable, 1000, 4000],
    ["a 503's Retry-After shorter than the backoff", unavailable, 8000, 0],
    ["a 429's Retry-After (the gate waits, not the request)", throttled, 1000, 0],
    ['no Retry-After', { kind: 'http', status: 502 } as const, 1000, 0],
    ['not a request failure', undefined, 1000, 0],
  ])('%s: waits %i ms more', (_title, failure, backoff, expected) => {
    expect(extraWaitMs(failure, backoff)).toBe(expected);
  });
});

describe('bounded waits', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, minDelayMs: 1000, maxDelayMs: 30_000 };

  it('backoff doubles per retry, with a jitter of 1 to 2, up to the maximum', () => {
    expect(backoffDelayMs(0, policy, 0)).toBe(1000);
    expect(backoffDelayMs(0, policy, 0.5)).toBe(1500);
    expect(backoffDelayMs(2, policy, 0)).toBe(4000);
    expect(backoffDelayMs(10, policy, 0.9)).toBe(30_000);
    expect(backoffDelayMs(3, { ...policy, minDelayMs: 0 }, 0.5)).toBe(0);
  });

  it.each([
    [
      'a 503 with a longer Retry-After waits it, all of it throttled',
      { kind: 'http', status: 503, retryAfterMs: 5000 },
      true,
      { waitMs: 5000, throttledMs: 5000 },
    ],
    [
      'a 503 with a shorter Retry-After waits the backoff, not throttled',
      { kind: 'http', status: 503, retryAfterMs: 10 },
      true,
      { waitMs: 1000, throttledMs: 0 },
    ],
    ['a timeout waits the backoff', { kind: 'timeout' }, true, { waitMs: 1000, throttledMs: 0 }],
    [
      'a 429 that used no retry waits only at the gate',
      { kind: 'http', status: 429, retryAfterMs: 5000 },
      false,
      { waitMs: 0, throttledMs: 0 },
    ],
    [
      'a 429 past its free attempts waits the backoff (and the gate)',
      { kind: 'http', status: 429, retryAfterMs: 5000 },
      true,
      { waitMs: 1000, throttledMs: 0 },
    ],
  ] as const)('%s', (_title, failure, consumed, expected) => {
    expect(retryWait(failure, consumed, 0, policy, 0)).toEqual(expected);
  });

  it('a wait that would end at or after the deadline does not fit; no deadline fits all', () => {
    expect(fitsDeadline(1000, 0, 2000)).toBe(true);
    expect(fitsDeadline(1000, 999, 2000)).toBe(true);
    expect(fitsDeadline(1000, 1000, 2000)).toBe(false);
    expect(fitsDeadline(2000, 0, 2000)).toBe(false);
    expect(fitsDeadline(2000, 10 ** 9, undefined)).toBe(true);
  });

  it.each(['deadline', 'stopped', 'too-large'] as const)(
    'a %s failure is final: never another attempt or round',
    (kind) => {
      expect(isTransient({ kind })).toBe(false);
    },
  );

  it('a Retry-After over --max-retry-after is capped to it', () => {
    expect(parseRetryAfter('3600', 0, 120_000)).toBe(120_000);
    expect(parseRetryAfter('3600', 0, 5000)).toBe(5000);
  });
});

describe('an address that cannot be reached fails fast', () => {
  const network = (code: string | undefined): Failure => ({ kind: 'network', code });

  it.each([
    ['ECONNREFUSED', 'refused'],
    ['ENOTFOUND', 'dns'],
    ['EAI_AGAIN', 'dns'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'tls'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'tls'],
    ['CERT_HAS_EXPIRED', 'tls'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls'],
    ['ECONNRESET', undefined],
    ['EPIPE', undefined],
    ['UND_ERR_SOCKET', undefined],
    ['EHOSTUNREACH', undefined],
    ['constructor', undefined],
    [undefined, undefined],
  ] as const)('a connection that failed with %s is unreachable: %s', (code, expected) => {
    expect(unreachable(network(code))).toBe(expected);
  });

  it('only a connection failure is read for its code', () => {
    expect(unreachable({ kind: 'timeout', code: 'ECONNREFUSED' })).toBeUndefined();
    expect(unreachable({ kind: 'http', status: 503, code: 'ECONNREFUSED' })).toBeUndefined();
    expect(unreachable(undefined)).toBeUndefined();
  });

  // [failure, transient (a backoff, and another round), retried after 0 / 1 / 3 retries, host unreachable]
  it.each([
    ['refused', network('ECONNREFUSED'), false, [true, false, false], true],
    ['not resolved', network('ENOTFOUND'), false, [true, false, false], true],
    ['resolver gave no answer', network('EAI_AGAIN'), false, [true, false, false], true],
    [
      'certificate',
      network('UNABLE_TO_VERIFY_LEAF_SIGNATURE'),
      false,
      [false, false, false],
      false,
    ],
    ['reset', network('ECONNRESET'), true, [true, true, true], false],
    ['network without a code', network(undefined), true, [true, true, true], false],
    ['timeout', { kind: 'timeout' }, true, [true, true, true], false],
    ['503', { kind: 'http', status: 503 }, true, [true, true, true], false],
    ['429', { kind: 'http', status: 429 }, true, [true, true, true], false],
    ['404', { kind: 'http', status: 404 }, false, [false, false, false], false],
    ['401', { kind: 'auth', status: 401 }, false, [false, false, false], false],
    ['no failure', undefined, false, [false, false, false], false],
  ] as const)(
    '%s: transient %s, retried %j, host unreachable %s',
    (_t, failure, transient, retried, down) => {
      expect(isTransient(failure)).toBe(transient);
      expect([0, 1, 3].map((consumed) => mayRetry(failure, consumed))).toEqual(retried);
      expect(hostUnreachable(failure)).toBe(down);
    },
  );

  it('a refused connection gets one quick retry, not the backoffs of --retries', () => {
    expect(UNREACHABLE_RETRIES).toBe(1);
    // Its wait is the first backoff: --retry-delay, with jitter.
    const wait = retryWait(network('ECONNREFUSED'), true, 0, DEFAULT_RETRY_POLICY, 0.5);
    expect(wait).toEqual({ waitMs: 1500, throttledMs: 0 });
  });
});
