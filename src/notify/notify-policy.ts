/**
 * How a notification is delivered: which answers are worth another attempt and how long to wait
 * before it. Pure: notify/notify.ts carries it out.
 */
import type { NotifyFormat } from './notify-format.ts';
import { parseRetryAfter } from '../api/retry-policy.ts';

/** How a notification ended, per receiver: the label of `envsync_notifications_total`. */
export type NotifyResult = 'delivered' | 'failed' | 'dropped' | 'abandoned';
export const NOTIFY_RESULTS: readonly NotifyResult[] = [
  'delivered',
  'failed',
  'dropped',
  'abandoned',
];

/** What `/status` shows of the notifications (never a URL's path or query). */
export interface NotifyStatus {
  targets: { url: string; format: NotifyFormat; queued: number; failing: string | null }[];
  delivered: number;
  failed: number;
  dropped: number;
  abandoned: number;
}

/** The delivery's limits (docs/notifications.md). */
export interface NotifyPolicy {
  /** Attempts per notification and receiver, the first included. */
  readonly maxAttempts: number;
  /** The wait after the first failed attempt; it doubles with each one. */
  readonly baseDelayMs: number;
  /** The longest wait between attempts, a Retry-After included. */
  readonly maxDelayMs: number;
  /** How long one POST may take. */
  readonly timeoutMs: number;
  /** Notifications waiting per receiver; the oldest is dropped for a new one beyond it. */
  readonly queueLimit: number;
  /** How long a stopping daemon waits for the queues to empty. */
  readonly drainMs: number;
}

export const DEFAULT_NOTIFY_POLICY: NotifyPolicy = {
  maxAttempts: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  timeoutMs: 10_000,
  queueLimit: 256,
  drainMs: 1_000,
};

/** How one attempt ended: an answer's status (and Retry-After), or no answer at all. */
export type AttemptResult =
  | { readonly kind: 'answer'; readonly status: number; readonly retryAfter?: string | undefined }
  | { readonly kind: 'error'; readonly message: string };

/**
 * Why an attempt failed: no answer or a busy receiver (408, 429, 5xx: tried again while attempts
 * remain), a redirect (never followed, never tried again), or any other answer (the receiver's
 * refusal, never tried again).
 */
export type AttemptFailure = 'transient' | 'redirect' | 'refused';

/** What follows an attempt. */
export type AttemptVerdict =
  | { readonly kind: 'delivered' }
  | {
      readonly kind: 'retry';
      readonly delayMs: number;
      readonly reason: string;
      readonly failure: AttemptFailure;
    }
  | { readonly kind: 'failed'; readonly reason: string; readonly failure: AttemptFailure };

function describe(result: AttemptResult): string {
  return result.kind === 'answer' ? `HTTP ${result.status}` : result.message;
}

/**
 * After attempt `attempt` (1 for the first): delivered on a 2xx; another attempt on no answer, a
 * 408, 429 or 5xx while attempts remain, after the Retry-After the receiver asked for (capped)
 * or a doubling backoff; failed otherwise (any other status is the receiver's refusal).
 */
export function judgeAttempt(
  result: AttemptResult,
  attempt: number,
  policy: NotifyPolicy,
  nowMs: number,
): AttemptVerdict {
  if (result.kind === 'answer' && result.status >= 200 && result.status < 300) {
    return { kind: 'delivered' };
  }
  const reason = describe(result);
  const failure: AttemptFailure =
    result.kind === 'error' ||
    result.status === 408 ||
    result.status === 429 ||
    result.status >= 500
      ? 'transient'
      : result.status >= 300 && result.status < 400
        ? 'redirect'
        : 'refused';
  if (failure !== 'transient' || attempt >= policy.maxAttempts)
    return { kind: 'failed', reason, failure };
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const asked =
    result.kind === 'answer'
      ? parseRetryAfter(result.retryAfter, nowMs, policy.maxDelayMs)
      : undefined;
  return { kind: 'retry', delayMs: asked ?? backoff, reason, failure };
}
