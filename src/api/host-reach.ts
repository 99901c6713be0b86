/**
 * Whether the API's host can be reached, as one client learns it from its own attempts: the
 * decisions, pure. A wrong port or host name fails every request the same way, and trying each
 * org's requests against it only multiplies the connections and DNS lookups (a burst of lookups
 * can even make a resolver drop some, each then waiting out its own timeout). So:
 *
 * - the first attempt refused, or whose host name did not resolve, makes the host `suspect`, and
 *   its request the probe: it alone is tried again (its quick retry, retry-policy.ts);
 * - meanwhile the other requests wait for the probe's verdict before they send anything;
 * - the probe failing so again makes the host `down`: every request still to send fails at once,
 *   not sent; any answer (of any status) makes it `reachable` again, and so does the probe ending
 *   some other way (cancelled, stopped by the deadline): then nothing is known, and requests go.
 *
 * The client (api/reach.ts) carries this out. `E` is the client's error type, compared by
 * identity: the probe is the request whose previous attempt failed with the error that raised the
 * suspicion.
 */
import { hostUnreachable, type Failure, type RetryPolicy } from '../core/retry-policy.ts';

export type HostReach<E> =
  | { readonly kind: 'reachable' }
  | { readonly kind: 'suspect'; readonly probe: E }
  | { readonly kind: 'down'; readonly failure: E };

export const REACHABLE: HostReach<never> = { kind: 'reachable' };

/**
 * Before an attempt, given the request's previous attempt's error (`after`, undefined for a first
 * attempt) and whether it has waited for a verdict already (`waited`: a wait ends at its bound,
 * probeWaitMs, or with its request's own waits, and is not begun twice): send it, wait for the
 * probe's verdict, or refuse it (not sent).
 */
export function beforeAttempt<E>(
  reach: HostReach<E>,
  after: unknown,
  waited: boolean,
): 'send' | 'wait' | 'refuse' {
  if (reach.kind === 'down') return 'refuse';
  if (reach.kind === 'suspect' && after !== reach.probe && !waited) return 'wait';
  return 'send';
}

/** After an attempt failed: the first failure that says the host cannot be reached raises the suspicion. */
export function afterAttemptFailed<E extends Failure>(
  reach: HostReach<E>,
  failure: E,
): HostReach<E> {
  return reach.kind === 'reachable' && hostUnreachable(failure)
    ? { kind: 'suspect', probe: failure }
    : reach;
}

/**
 * After a request failed for good with `failure` (undefined: not a request failure), its previous
 * attempt having failed with `after`: an unreachable host is confirmed; the probe ending any
 * other way leaves nothing known.
 */
export function afterRequestFailed<E extends Failure>(
  reach: HostReach<E>,
  failure: E | undefined,
  after: unknown,
): HostReach<E> {
  if (reach.kind === 'down') return reach;
  if (failure !== undefined && hostUnreachable(failure)) return { kind: 'down', failure };
  if (reach.kind === 'suspect' && after === reach.probe) return REACHABLE;
  return reach;
}

/**
 * The longest a request waits for the probe's verdict: the probe's backoff at its longest, then
 * its attempt at --timeout. Past it the request goes on as if nothing were known, so a probe
 * held up elsewhere (at a throttled gate) never holds the others for longer.
 */
export function probeWaitMs(policy: RetryPolicy, timeoutMs: number): number {
  return Math.min(2 * policy.minDelayMs, policy.maxDelayMs) + timeoutMs;
}
