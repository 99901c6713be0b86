import { describe, expect, it } from 'vitest';
import { ApiError, failureOf } from '../../src/api/errors.ts';
import {
  classifyAnswer,
  DEFAULT_RETRY_POLICY,
  extraWaitMs,
  isRetryableStatus,
  isTransient,
  parseRetryAfter,
  usesRetry,
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
