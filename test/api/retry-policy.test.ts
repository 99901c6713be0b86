import { describe, expect, it } from 'vitest';
import {
  backoff,
  DEFAULT_RETRY_POLICY,
  hostUnreachable,
  isRetriedStatus,
  isTransient,
  mayRetry,
  parseRetryAfter,
  retryAfterWaitMs,
  usesRetry,
} from '../../src/api/retry-policy.ts';
import { unreachable, type Failure } from '../../src/core/request-failure.ts';

const network = (code: string | undefined): Failure => ({ kind: 'network', code });
const [T, F] = [true, false];

describe('the retry policy', () => {
  it.each([
    [[408, 409, 425, 429, 500, 502, 503, 504, 599], true],
    [[501, 400, 401, 403, 404, 405, 413, 422, 600, 200, 304], false],
  ])('statuses %j are retried: %s', (statuses, expected) => {
    for (const status of statuses) expect(isRetriedStatus(status), String(status)).toBe(expected);
  });

  // [failure, transient (a backoff, and another round), retried after 0 / 1 / 3 retries, host unreachable]
  it.each([
    ['refused', network('ECONNREFUSED'), F, [T, F, F], T],
    ['not resolved', network('ENOTFOUND'), F, [T, F, F], T],
    ['resolver gave no answer', network('EAI_AGAIN'), F, [T, F, F], T],
    ['certificate', network('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), F, [F, F, F], F],
    ['reset', network('ECONNRESET'), T, [T, T, T], F],
    ['network without a code', network(undefined), T, [T, T, T], F],
    ['timeout', { kind: 'timeout' }, T, [T, T, T], F],
    ['503', { kind: 'http', status: 503 }, T, [T, T, T], F],
    ['429', { kind: 'http', status: 429 }, T, [T, T, T], F],
    ['404', { kind: 'http', status: 404 }, F, [F, F, F], F],
    ['401', { kind: 'auth', status: 401 }, F, [F, F, F], F],
    ['invalid response', { kind: 'invalid-response' }, F, [F, F, F], F],
    ['deadline', { kind: 'deadline' }, F, [F, F, F], F],
    ['stopped', { kind: 'stopped' }, F, [F, F, F], F],
    ['too large', { kind: 'too-large' }, F, [F, F, F], F],
    ['not a request failure', undefined, F, [F, F, F], F],
  ] as const)(
    '%s: transient %s, retried %j, host unreachable %s',
    (_t, failure, transient, retried, down) => {
      expect(isTransient(failure)).toBe(transient);
      expect([0, 1, 3].map((consumed) => mayRetry('PUT', failure, consumed))).toEqual(retried);
      expect(hostUnreachable(failure)).toBe(down);
    },
  );

  it('retries every method envsync sends, and no other', () => {
    for (const method of ['GET', 'PUT', 'POST', 'DELETE', 'PATCH'])
      expect(mayRetry(method, network('ECONNRESET'), 0)).toBe(true);
    expect(mayRetry('CONNECT', network('ECONNRESET'), 0)).toBe(false);
  });

  it("reads the unreachable kinds from a failed connection's code, and only from one", () => {
    const codes = {
      ECONNREFUSED: 'refused',
      ENOTFOUND: 'dns',
      EAI_AGAIN: 'dns',
      UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls',
      DEPTH_ZERO_SELF_SIGNED_CERT: 'tls',
      CERT_HAS_EXPIRED: 'tls',
      ERR_TLS_CERT_ALTNAME_INVALID: 'tls',
      ECONNRESET: undefined,
      EHOSTUNREACH: undefined,
      constructor: undefined,
    };
    for (const [code, kind] of Object.entries(codes)) expect(unreachable(network(code))).toBe(kind);
    expect(unreachable({ kind: 'timeout', code: 'ECONNREFUSED' })).toBeUndefined();
  });

  it('a 429 uses no retry up to its allowance; anything else uses one', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxThrottledAttempts: 2 };
    const throttled = { kind: 'http', status: 429 } as const;
    expect([1, 2, 3].map((count) => usesRetry(throttled, count, policy))).toEqual([F, F, T]);
    expect(usesRetry({ kind: 'http', status: 503 }, 0, policy)).toBe(true);
    expect(usesRetry(undefined, 0, policy)).toBe(true);
  });

  it.each([
    ["a 503's Retry-After longer than the backoff", 503, 5000, 1000, 4000],
    ["a 503's Retry-After shorter than the backoff", 503, 5000, 8000, 0],
    ["a 429's Retry-After (the gate waits, not the request)", 429, 5000, 1000, 0],
    ['no Retry-After', 502, undefined, 1000, 0],
  ] as const)('%s: waits %i ms more', (_t, status, retryAfterMs, backoffMs, expected) => {
    expect(retryAfterWaitMs({ kind: 'http', status, retryAfterMs }, backoffMs)).toBe(expected);
  });

  it('gives p-retry the backoff: --retry-delay doubling with jitter, up to 30 s, --retries', () => {
    expect(backoff({ ...DEFAULT_RETRY_POLICY, retries: 2, minDelayMs: 10 })).toEqual({
      retries: 2,
      minTimeout: 10,
      maxTimeout: 30_000,
      factor: 2,
      randomize: true,
    });
  });

  it.each([
    ['3', 3000],
    [['0.5', '9'], 500],
    ['3600', 60_000],
    ['Sun, 22 Nov 2026 10:00:05 GMT', 5000],
    ['Sun, 22 Nov 2026 09:00:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
    [undefined, undefined],
  ])(
    'reads Retry-After %j as seconds or an HTTP date, capped and never negative: %s',
    (header, ms) => {
      expect(parseRetryAfter(header, Date.parse('2026-11-22T10:00:00Z'), 60_000)).toBe(ms);
    },
  );
});
