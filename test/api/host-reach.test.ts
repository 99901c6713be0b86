import { describe, expect, it } from 'vitest';
import {
  afterAttemptFailed,
  afterRequestFailed,
  beforeAttempt,
  probeWaitMs,
  REACHABLE,
  type HostReach,
} from '../../src/api/host-reach.ts';
import { DEFAULT_RETRY_POLICY, type Failure } from '../../src/core/retry-policy.ts';

// Failures are compared by identity, as the client's errors are.
const refused: Failure = { kind: 'network', code: 'ECONNREFUSED' };
const refusedAgain: Failure = { kind: 'network', code: 'ECONNREFUSED' };
const notFound: Failure = { kind: 'network', code: 'ENOTFOUND' };
const reset: Failure = { kind: 'network', code: 'ECONNRESET' };
const certificate: Failure = { kind: 'network', code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' };
const timeout: Failure = { kind: 'timeout' };
const deadline: Failure = { kind: 'deadline' };
const unavailable: Failure = { kind: 'http', status: 503 };

const suspect: HostReach<Failure> = { kind: 'suspect', probe: refused };
const down: HostReach<Failure> = { kind: 'down', failure: refusedAgain };

describe('the host reach of one client', () => {
  it.each([
    ['reachable: a first attempt is sent', REACHABLE, undefined, false, 'send'],
    ['reachable: a retry is sent', REACHABLE, reset, false, 'send'],
    ['suspect: a first attempt waits for the verdict', suspect, undefined, false, 'wait'],
    ["suspect: another request's retry waits too", suspect, refusedAgain, false, 'wait'],
    ['suspect: the probe, its retry, is sent', suspect, refused, false, 'send'],
    ['suspect still after a wait (its bound passed): sent', suspect, undefined, true, 'send'],
    ['down: a first attempt is not sent', down, undefined, false, 'refuse'],
    ['down: a retry is not sent either', down, reset, false, 'refuse'],
    ['down: nor one that waited', down, undefined, true, 'refuse'],
  ] as const)('%s', (_title, reach, after, waited, expected) => {
    expect(beforeAttempt(reach, after, waited)).toBe(expected);
  });

  it.each([
    [
      'a refused attempt makes it suspect, with that attempt the probe',
      REACHABLE,
      refused,
      suspect,
    ],
    ['an unresolved name too', REACHABLE, notFound, { kind: 'suspect', probe: notFound }],
    ['a reset does not', REACHABLE, reset, REACHABLE],
    ['a timeout does not', REACHABLE, timeout, REACHABLE],
    ['a certificate does not (it is final anyway)', REACHABLE, certificate, REACHABLE],
    ['a 503 does not', REACHABLE, unavailable, REACHABLE],
    ['suspect already: the probe stays', suspect, refusedAgain, suspect],
    ['down stays down', down, refused, down],
  ] as const)('after an attempt: %s', (_title, reach, failure, expected) => {
    expect(afterAttemptFailed(reach, failure)).toEqual(expected);
  });

  it.each([
    ['the probe refused again: down', suspect, refusedAgain, refused, down],
    ['a request refused with no retry to try: down', REACHABLE, refusedAgain, undefined, down],
    ['the probe stopped by the deadline: nothing known', suspect, deadline, refused, REACHABLE],
    [
      'the probe cancelled (not a request failure): nothing known',
      suspect,
      undefined,
      refused,
      REACHABLE,
    ],
    ['the probe timed out on its retry: nothing known', suspect, timeout, refused, REACHABLE],
    ["another request's failure leaves the suspicion", suspect, timeout, reset, suspect],
    [
      'a failure that says nothing of the host changes nothing',
      REACHABLE,
      unavailable,
      reset,
      REACHABLE,
    ],
    ['down stays down', down, deadline, refused, down],
  ] as const)('after a request failed: %s', (_title, reach, failure, after, expected) => {
    expect(afterRequestFailed(reach, failure, after)).toEqual(expected);
  });

  it('waits for the probe at most its longest backoff and one attempt', () => {
    expect(probeWaitMs(DEFAULT_RETRY_POLICY, 30_000)).toBe(32_000);
    expect(probeWaitMs({ ...DEFAULT_RETRY_POLICY, minDelayMs: 60_000 }, 30_000)).toBe(60_000);
  });
});
