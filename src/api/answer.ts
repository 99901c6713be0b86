import { AbortError } from 'p-retry';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.ts';
import type { Mask } from '../core/mask.ts';
import { classifyAnswer, type RetryPolicy } from '../core/retry-policy.ts';
import type { ClientEvents } from './client-types.ts';
import { ApiError } from './errors.ts';
import type { RequestGate } from './gate.ts';
import { serverMessage, type RawResponse } from './response.ts';

/**
 * Carries out the retry policy's verdict on an answer (core/retry-policy.ts decides): returns a
 * success, tells the gate of a success or a 429, and throws anything else as an ApiError in the
 * server's own words (masked), wrapped in p-retry's AbortError when no attempt may follow.
 */
export type CheckAnswer = (method: string, path: string, response: RawResponse) => RawResponse;

export function answerCheck(options: {
  readonly clock: Clock;
  readonly policy: RetryPolicy;
  readonly gate: RequestGate;
  readonly mask: Mask;
  readonly logger: Logger;
  readonly events?: ClientEvents | undefined;
}): CheckAnswer {
  const { clock, policy, gate, mask, logger, events } = options;
  return (method, path, response) => {
    const { status } = response;
    const verdict = classifyAnswer(status, response.headers['retry-after'], clock.now(), policy);
    if (verdict.kind === 'success') {
      gate.succeeded();
      return response;
    }
    const context = { method, path, status };
    if (verdict.kind === 'redirect') {
      throw new AbortError(
        new ApiError(
          'redirect',
          `${method} ${path}: the API answered ${status} (a redirect); envsync does not follow redirects: set --api-url to the final address`,
          context,
        ),
      );
    }
    const message = serverMessage(response.text, mask);
    if (verdict.kind === 'auth') {
      throw new AbortError(
        new ApiError(
          'auth',
          `${method} ${path}: the token was refused (${status}): ${message}`,
          context,
        ),
      );
    }
    const { retryAfterMs } = verdict;
    if (status === 429) {
      events?.throttled?.();
      gate.throttled(retryAfterMs ?? policy.minDelayMs);
      logger.debug(
        { method, path, retryAfterMs, limit: gate.limit, paceMs: Math.round(gate.interval) },
        'throttled (429): every request pauses, then paces',
      );
    }
    const error = new ApiError('http', `${method} ${path}: ${status} ${message}`, {
      ...context,
      retryAfterMs,
    });
    if (verdict.retry) throw error;
    throw new AbortError(error);
  };
}
