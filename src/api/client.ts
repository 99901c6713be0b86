import { getCACertificates } from 'node:tls';
import pRetry, { AbortError } from 'p-retry';
import type { Logger } from 'pino';
import { Pool } from 'undici';
import { FIELD_LIST } from '../core/fields.ts';
import type { DesiredEnvironment, ObservedEnvironment } from '../core/model.ts';
import { NAME_PATTERN } from '../core/names.ts';
import { compileScrub, type Scrub } from '../core/redact.ts';
import {
  classifyAnswer,
  extraWaitMs,
  isThrottled,
  isTransient,
  usesRetry,
  type RetryPolicy,
} from '../core/retry-policy.ts';
import { ApiError, failureOf } from './errors.ts';
import { RequestGate, type GateClock } from './gate.ts';
import { readListing } from './listing.ts';
import { excerpt, readBody, repeatedName, serverMessage, type RawResponse } from './response.ts';

/** A listing is never followed past this many pages. */
const MAX_PAGES = 10_000;

/** The PUT body of an environment: its name and every field it declares, by wire name. */
export function putBody(env: DesiredEnvironment): Record<string, unknown> {
  const body: Record<string, unknown> = { name: env.name };
  for (const spec of FIELD_LIST) {
    const value = env[spec.name];
    if (value !== undefined) body[spec.wireName] = value;
  }
  return body;
}

/** Hooks for metrics; every one optional. */
export interface ClientEvents {
  request?(method: string, status: number | 'error', durationMs: number): void;
  retry?(method: string, reason: string): void;
  throttled?(): void;
}

export interface ClientOptions {
  /** The API's base address; requests go to `{base}/api/v2/environments/{org}` only. */
  readonly apiUrl: URL;
  /** Read when each request is sent, so a rotated token is picked up. Never logged. */
  readonly getToken: () => string;
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly policy: RetryPolicy;
  readonly logger: Logger;
  readonly clock: GateClock;
  /** PEM text of extra CA certificates to trust (--ca-file). */
  readonly ca?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly events?: ClientEvents | undefined;
  /** A listing page larger than this is refused (default 256 MiB). */
  readonly maxResponseBytes?: number | undefined;
}

/** The Environments API, as envsync uses it: list an org, put one environment. */
export interface EnvironmentsClient {
  listEnvironments(org: string): Promise<ObservedEnvironment[]>;
  /** `signal` cancels this PUT (while it waits for the gate, or in flight). */
  putEnvironment(org: string, env: DesiredEnvironment, signal?: AbortSignal): Promise<void>;
  readonly gate: RequestGate;
  close(): Promise<void>;
}

/** Creates a client over one keep-alive pool, one shared gate and the retry policy. */
export function createClient(options: ClientOptions): EnvironmentsClient {
  const { apiUrl, clock, logger, policy, events } = options;
  const basePath = apiUrl.pathname.replace(/\/+$/, '');
  const maxBytes = options.maxResponseBytes ?? 256 * 1024 * 1024;
  const gate = new RequestGate(options.concurrency, clock);
  // Service text is scrubbed of the token it was sent as soon as it is read, before it is cut,
  // parsed or put into a message: nothing downstream ever holds it (docs/security.md).
  let scrubbing: { token: string; scrub: Scrub } | undefined;
  const scrubbed = (text: string): string => {
    const token = options.getToken();
    if (scrubbing?.token !== token) scrubbing = { token, scrub: compileScrub([token]) };
    return scrubbing.scrub(text);
  };
  const pool = new Pool(apiUrl.origin, {
    connections: Math.max(1, options.concurrency),
    pipelining: 1,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: {
      // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment cannot turn verification off.
      rejectUnauthorized: true,
      // --ca-file adds to the default trust store; node's `ca` alone would replace it.
      ...(options.ca === undefined ? {} : { ca: [...getCACertificates('default'), options.ca] }),
    },
  });

  // Org names go into the path only after this check, and percent-encoded.
  const orgPath = (org: string) => {
    if (!NAME_PATTERN.test(org))
      throw new Error(`refusing to use org name ${JSON.stringify(org)} in a URL`);
    return `${basePath}/api/v2/environments/${encodeURIComponent(org)}`;
  };

  /** One attempt: through the gate, with a timeout, the whole body read. */
  async function attempt(
    method: 'GET' | 'PUT',
    path: string,
    body: string | undefined,
    cancel: AbortSignal | undefined,
  ): Promise<RawResponse> {
    await gate.acquire(cancel);
    const started = clock.now();
    // One controller per attempt, aborted by the timeout or by `cancel`. (AbortSignal.timeout and
    // AbortSignal.any do the same with a weak reference and a finalizer per request: 3-4x the
    // cost, and garbage the collector must track.)
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    timer.unref();
    const onCancel = () => controller.abort(cancel?.reason);
    if (cancel?.aborted) onCancel();
    else cancel?.addEventListener('abort', onCancel, { once: true });
    try {
      const response = await pool.request({
        method,
        path,
        signal: controller.signal,
        headers: {
          authorization: `Bearer ${options.getToken()}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body }),
      });
      const text = await readBody(response, maxBytes);
      events?.request?.(method, response.statusCode, clock.now() - started);
      return { status: response.statusCode, headers: response.headers, text };
    } catch (error) {
      events?.request?.(method, 'error', clock.now() - started);
      if (cancel?.aborted) throw cancel.reason;
      if (/timeout/i.test((error as { code?: string }).code ?? '')) timedOut = true;
      const reason =
        (error as { code?: string }).code ??
        (error instanceof Error ? error.message : String(error));
      throw new ApiError(
        timedOut ? 'timeout' : 'network',
        timedOut
          ? `${method} ${path}: no answer within ${options.timeoutMs} ms (--timeout)`
          : `${method} ${path}: connection failed (${reason})`,
        { method, path, cause: error },
      );
    } finally {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onCancel);
      gate.release();
    }
  }

  /** Carries out the retry policy's verdict on an answer: returns it on success, else throws. */
  function classify(method: string, path: string, response: RawResponse): RawResponse {
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
    const message = serverMessage(scrubbed(response.text));
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
  }

  async function send(
    method: 'GET' | 'PUT',
    path: string,
    body?: string,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    // One signal for the whole request: the client's (shutdown) and the caller's (this org).
    const cancel =
      options.signal && signal
        ? AbortSignal.any([options.signal, signal])
        : (signal ?? options.signal);
    let throttledAttempts = 0;
    return pRetry(async () => classify(method, path, await attempt(method, path, body, cancel)), {
      retries: policy.retries,
      factor: 2,
      minTimeout: policy.minDelayMs,
      maxTimeout: policy.maxDelayMs,
      randomize: true,
      ...(cancel ? { signal: cancel } : {}),
      shouldConsumeRetry: ({ error }) => {
        const failure = failureOf(error);
        if (isThrottled(failure)) throttledAttempts++;
        return usesRetry(failure, throttledAttempts, policy);
      },
      shouldRetry: ({ error }) => isTransient(failureOf(error)),
      onFailedAttempt: async ({ error, attemptNumber, retryDelay }) => {
        if (!isTransient(failureOf(error))) return;
        events?.retry?.(
          method,
          error instanceof ApiError ? String(error.status ?? error.kind) : 'error',
        );
        logger.warn(
          { method, path, attempt: attemptNumber, status: (error as ApiError).status, retryDelay },
          `retrying: ${error.message}`,
        );
        const extra = extraWaitMs(failureOf(error), retryDelay);
        if (extra > 0) await clock.sleep(extra, cancel);
      },
    });
  }

  function parseJson(method: string, path: string, response: RawResponse): unknown {
    const text = scrubbed(response.text);
    try {
      return JSON.parse(text);
    } catch {
      const type = response.headers['content-type'];
      throw new ApiError(
        'invalid-response',
        `${method} ${path}: the listing is not JSON (${response.status}, content-type ${String(type ?? 'none')}): ${excerpt(text, 120) || '(empty body)'}`,
        { method, path, status: response.status },
      );
    }
  }

  return {
    gate,
    async listEnvironments(org) {
      const path = orgPath(org);
      const first = await send('GET', path);
      const read = (response: RawResponse, url: string) => {
        try {
          return readListing(parseJson('GET', url, response));
        } catch (error) {
          if (error instanceof ApiError) throw error;
          throw new ApiError('invalid-response', `GET ${url}: ${(error as Error).message}`, {
            method: 'GET',
            path: url,
            status: response.status,
          });
        }
      };
      const page = read(first, path);
      const environments = page.environments; // a fresh array: more pages are appended to it
      if (page.paging !== undefined) {
        const { perPage } = page.paging;
        const totalPages = Math.min(page.paging.totalPages, MAX_PAGES);
        for (let next = page.paging.page + 1; next <= totalPages; next++) {
          const url = `${path}?page=${next}&per_page=${perPage}`;
          environments.push(...read(await send('GET', url), url).environments);
        }
        if (
          page.paging.totalCount !== undefined &&
          environments.length !== page.paging.totalCount
        ) {
          throw new ApiError(
            'invalid-response',
            `GET ${path}: the paginated listing announced ${page.paging.totalCount} environments but its pages held ${environments.length} (it changed while envsync read it); run again`,
            { method: 'GET', path },
          );
        }
      }
      const twice = repeatedName(environments);
      if (twice !== undefined) {
        throw new ApiError(
          'invalid-response',
          `GET ${path}: the listing shows environment "${twice}" twice; run again`,
          { method: 'GET', path },
        );
      }
      return environments;
    },
    async putEnvironment(org, env, signal) {
      await send('PUT', orgPath(org), JSON.stringify(putBody(env)), signal);
    },
    async close() {
      await pool.close();
    },
  };
}
