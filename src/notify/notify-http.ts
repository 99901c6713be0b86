import { Agent } from 'undici';
import type { AttemptResult } from './notify-policy.ts';

/** One POST of a notification; resolves with how it ended, never rejects. */
export type SendNotification = (
  url: URL,
  body: string,
  headers: Readonly<Record<string, string>>,
  signal: AbortSignal,
) => Promise<AttemptResult>;

/** How many bytes of a receiver's answer are read (and thrown away) before the connection is reused. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Names a failed request without its URL (which may hold a credential). */
function errorName(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    return reason instanceof Error && reason.message !== '' ? reason.message : 'aborted';
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : 'error';
}

/**
 * POSTs over undici, with a pool of its own (closed with `close`). Redirects are not followed:
 * a notification goes where it was configured to, or not at all.
 */
export function undiciSender(): { send: SendNotification; close: () => Promise<void> } {
  const agent = new Agent({ keepAliveTimeout: 4_000, connections: 4 });
  return {
    async send(url, body, headers, signal) {
      try {
        const answer = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          body,
          headers,
          signal,
        });
        await answer.body.dump({ limit: MAX_ANSWER_BYTES }).catch(() => undefined);
        const retryAfter = answer.headers['retry-after'];
        return {
          kind: 'answer',
          status: answer.statusCode,
          retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
        };
      } catch (error) {
        return { kind: 'error', message: errorName(error, signal) };
      }
    },
    async close() {
      await agent.destroy().catch(() => undefined);
    },
  };
}
