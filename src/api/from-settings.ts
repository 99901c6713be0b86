import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import { createClient, type ClientEvents, type EnvironmentsClient } from './client.ts';
import { DEFAULT_RETRY_POLICY } from './retry-policy.ts';

/** The API client as the settings describe it, on the real clock. */
export function clientFromSettings(
  settings: Settings,
  options: {
    apiUrl: URL;
    getToken: () => string;
    logger: Logger;
    ca: string | undefined;
    signal?: AbortSignal;
    events?: ClientEvents;
  },
): EnvironmentsClient {
  return createClient({
    ...options,
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    policy: {
      ...DEFAULT_RETRY_POLICY,
      retries: settings.retries,
      minDelayMs: settings.retryDelayMs,
    },
    clock: {
      now: () => Date.now(),
      sleep: (ms, signal) => sleep(ms, undefined, signal ? { signal } : {}),
    },
  });
}
