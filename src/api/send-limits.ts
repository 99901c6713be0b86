import type { Clock } from '../core/clock.ts';
import { fitsDeadline } from '../core/retry-policy.ts';
import { formatDuration } from '../config/duration.ts';
import { ApiError } from './errors.ts';
import type { ThrottleMeter } from './throttle-meter.ts';

/**
 * What keeps a request from being sent: the run's deadline (--deadline) and shutdown. Both are
 * checked before every wait and every attempt, and a request they stop fails final, saying that
 * it was not sent and, for a retry, how its last attempt ended.
 */
export interface SendLimits {
  /** The final error of a request the deadline leaves no time for; undefined if there is time. */
  pastDeadline(method: string, path: string, waitMs: number, after?: unknown): ApiError | undefined;
  /** The final error of a request that would have to wait while the client stops; else undefined. */
  stopping(method: string, path: string, after?: unknown): ApiError | undefined;
  /**
   * Waits `ms` before a request or its next attempt, unless that would pass the deadline or the
   * client is stopping (a wait ends at once then): throws the final error saying it was not sent.
   * A wait the server asked for (`throttled`) is counted as throttled time for `org`.
   */
  waitBeforeSending(
    org: string,
    method: string,
    path: string,
    ms: number,
    signal: AbortSignal | undefined,
    throttled: boolean,
    after?: unknown,
  ): Promise<void>;
  /** False once the deadline has passed or the client was stopped. */
  canSend(): boolean;
}

/** `; the last attempt: <its error>` after a failed attempt, else nothing. */
function lastAttempt(after: unknown): string {
  return after instanceof Error ? `; the last attempt: ${after.message}` : '';
}

/** The limits of a client created now: the deadline counts from this call. */
export function sendLimits(options: {
  readonly clock: Clock;
  readonly meter: ThrottleMeter;
  readonly deadlineMs?: number | undefined;
  readonly stop?: AbortSignal | undefined;
}): SendLimits {
  const { clock, meter, deadlineMs, stop } = options;
  const deadlineAt = deadlineMs === undefined ? undefined : clock.now() + deadlineMs;

  function pastDeadline(method: string, path: string, waitMs: number, after?: unknown) {
    if (fitsDeadline(clock.now(), waitMs, deadlineAt)) return undefined;
    const when =
      waitMs > 0
        ? `would pass during the ${Math.ceil(waitMs / 1000)} s wait before sending`
        : 'passed';
    return new ApiError(
      'deadline',
      `${method} ${path}: not sent${after === undefined ? '' : ' again'}: the run's deadline (--deadline ${formatDuration(deadlineMs ?? 0)}) ${when}${lastAttempt(after)}`,
      { method, path },
    );
  }

  function stopping(method: string, path: string, after?: unknown) {
    if (stop?.aborted !== true) return undefined;
    return new ApiError(
      'stopped',
      `${method} ${path}: not sent${after === undefined ? '' : ' again'}: envsync is shutting down${lastAttempt(after)}`,
      { method, path },
    );
  }

  return {
    pastDeadline,
    stopping,
    async waitBeforeSending(org, method, path, ms, signal, throttled, after) {
      const refused = stopping(method, path, after) ?? pastDeadline(method, path, ms, after);
      if (refused !== undefined) throw refused;
      const sleep = () => clock.sleep(ms, signal);
      try {
        await (throttled ? meter.measure(org, sleep) : sleep());
      } catch (error) {
        throw stopping(method, path, after) ?? error;
      }
    },
    canSend() {
      return stop?.aborted !== true && fitsDeadline(clock.now(), 0, deadlineAt);
    },
  };
}
