import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import type { Clock } from '../core/clock.ts';
import type { Mask } from '../core/mask.ts';
import { DEFAULT_RETRY_POLICY } from '../core/retry-policy.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { createClient, type ClientEvents, type EnvironmentsClient } from './client.ts';
import type { Transport } from './client-types.ts';

/** The API client as the settings describe it, on the real clock unless one is passed. */
export function clientFromSettings(
  settings: Settings,
  options: {
    apiUrl: URL;
    getToken: (org: string) => string;
    mask?: Mask;
    logger: Logger;
    ca: string | undefined;
    signal?: AbortSignal;
    stop?: AbortSignal;
    events?: ClientEvents;
    clock?: Clock;
    transport?: Transport;
  },
): EnvironmentsClient {
  const { clock = systemClock, ...rest } = options;
  return createClient({
    ...rest,
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    deadlineMs: settings.deadlineMs,
    maxResponseBytes: settings.maxResponseBytes,
    dialect: settings.apiDialect,
    policy: {
      ...DEFAULT_RETRY_POLICY,
      retries: settings.retries,
      minDelayMs: settings.retryDelayMs,
      maxRetryAfterMs: settings.maxRetryAfterMs,
    },
    clock,
  });
}
