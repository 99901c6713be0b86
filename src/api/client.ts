import pRetry from 'p-retry';
import { probeWaitMs } from './host-reach.ts';
import { NAME_PATTERN } from '../core/names.ts';
import { isThrottled, mayRetry, retryWait, unreachable, usesRetry } from '../core/retry-policy.ts';
import { answerCheck } from './answer.ts';
import { attempts, type HttpMethod } from './attempt.ts';
import type { ClientOptions, EnvironmentsClient } from './client-types.ts';
import { putBody } from './client-types.ts';
import {
  dialectOfShape,
  describeDialect,
  resolveDialect,
  type ListingShape,
} from '../core/dialect.ts';
import { ApiError, failureOf } from './errors.ts';
import { RequestGate } from './gate.ts';
import { readAllPages } from './list-pages.ts';
import { policyUploadBody, readPolicyDocuments, type RequestBody } from './policy-documents.ts';
import { connectionPool } from './pool.ts';
import { addressOf, HostReach } from './reach.ts';
import type { RawResponse } from './response.ts';
import { sendLimits } from './send-limits.ts';
import { ThrottleMeter } from './throttle-meter.ts';

export type { ClientEvents, ClientOptions, EnvironmentsClient } from './client-types.ts';
export { putBody } from './client-types.ts';

/** The default of --max-response-bytes: one listing this large fits a 256 MiB pod with room. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** Creates a client over one keep-alive pool, one shared gate and the retry policy. */
export function createClient(options: ClientOptions): EnvironmentsClient {
  const { apiUrl, clock, logger, policy, events } = options;
  const basePath = apiUrl.pathname.replace(/\/+$/, '');
  const gate = options.transport?.gate ?? new RequestGate(options.concurrency, clock);
  const mask = options.mask ?? ((text: string) => text);
  const meter = new ThrottleMeter(
    () => clock.now(),
    (ms) => events?.throttledFor?.(ms),
  );
  const limits = sendLimits({ clock, meter, deadlineMs: options.deadlineMs, stop: options.stop });
  // What ends every wait: shutdown (`stop`) or the abort of everything (`signal`).
  const waitsEnd =
    options.stop && options.signal
      ? AbortSignal.any([options.stop, options.signal])
      : (options.stop ?? options.signal);
  const pool = options.transport?.pool ?? connectionPool(apiUrl.origin, options);
  const reach = new HostReach({
    logger,
    clock,
    waitMs: probeWaitMs(policy, options.timeoutMs),
  });
  const attempt = attempts({
    pool,
    gate,
    limits,
    reach,
    host: addressOf(apiUrl),
    clock,
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    getToken: options.getToken,
    events,
  });
  const checkAnswer = answerCheck({ clock, policy, gate, mask, logger, events });

  // Org and environment names go into a path only after this check, and percent-encoded.
  const segment = (what: string, name: string) => {
    if (!NAME_PATTERN.test(name))
      throw new Error(`refusing to use ${what} name ${JSON.stringify(name)} in a URL`);
    return encodeURIComponent(name);
  };
  const orgPath = (org: string) => `${basePath}/api/v2/environments/${segment('org', org)}`;
  const policiesPath = (org: string, env: string) =>
    `${orgPath(org)}/${segment('environment', env)}/policies`;
  const tagsPath = (org: string, env: string) =>
    `${basePath}/api/v2/tags/${segment('org', org)}/environment/${segment('environment', env)}`;
  const documentsPath = (org: string) => `${basePath}/api/v2/policies/${segment('org', org)}`;
  const json = (value: unknown): RequestBody => ({
    bytes: JSON.stringify(value),
    contentType: 'application/json',
  });

  async function send(
    org: string,
    method: HttpMethod,
    path: string,
    body?: RequestBody,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    // An org with no token fails here, final and not retried: none of its requests is sent.
    options.getToken(org);
    // One signal for the whole request: the client's (shutdown) and the caller's (this org).
    const cancel =
      options.signal && signal
        ? AbortSignal.any([options.signal, signal])
        : (signal ?? options.signal);
    // What ends this request's waits: the client stopping, and `cancel`.
    const waits = signal && waitsEnd ? AbortSignal.any([waitsEnd, signal]) : (signal ?? waitsEnd);
    let throttledAttempts = 0;
    let consumedRetry = true;
    let lastError: unknown;
    return pRetry(
      async () =>
        checkAnswer(method, path, await attempt(org, method, path, body, cancel, waits, lastError)),
      {
        retries: policy.retries,
        // No delay of p-retry's own: the waits are ours (below), on the clock passed in, ended by
        // shutdown, and never begun when they would pass the deadline.
        minTimeout: 0,
        ...(cancel ? { signal: cancel } : {}),
        shouldConsumeRetry: ({ error }) => {
          const failure = failureOf(error);
          if (isThrottled(failure)) throttledAttempts++;
          consumedRetry = usesRetry(failure, throttledAttempts, policy);
          return consumedRetry;
        },
        // Called only when another attempt may follow: waits for it, or throws why not.
        shouldRetry: async ({ error, attemptNumber, retriesConsumed }) => {
          const failure = failureOf(error);
          if (!mayRetry(failure, retriesConsumed)) return false;
          lastError = error;
          const wait = retryWait(failure, consumedRetry, retriesConsumed, policy, Math.random());
          events?.retry?.(
            method,
            error instanceof ApiError ? String(error.status ?? error.kind) : 'error',
          );
          // The quick retry of an unreachable address is said once, when it fails (reach.ts).
          logger[unreachable(failure) === undefined ? 'warn' : 'debug'](
            {
              method,
              path,
              attempt: attemptNumber,
              status: (error as ApiError).status,
              retryDelay: wait.waitMs,
            },
            `retrying: ${error.message}`,
          );
          await limits.waitBeforeSending(
            org,
            method,
            path,
            wait.waitMs,
            waits,
            wait.throttledMs > 0,
            error,
          );
          return true;
        },
      },
    ).catch((error: unknown) => {
      // A request that failed for good on an unreachable host: its followers are not sent.
      reach.failed(error, lastError);
      throw error;
    });
  }

  // The first listing's shape, and the dialect it resolves, said once per client.
  const dialectSetting = options.dialect ?? 'auto';
  let firstShape: ListingShape | undefined;
  const noteShape = (shape: ListingShape) => {
    if (firstShape !== undefined) return;
    firstShape = shape;
    const resolved = resolveDialect(dialectSetting, shape);
    if (resolved === undefined) return;
    const disagrees = resolved.from === 'setting' && dialectOfShape(shape) !== resolved.dialect;
    logger[disagrees ? 'warn' : 'info'](
      { dialect: resolved.dialect, from: resolved.from, listingShape: shape },
      describeDialect(resolved, shape),
    );
  };

  return {
    gate,
    dialect() {
      return resolveDialect(dialectSetting, firstShape);
    },
    async listEnvironments(org) {
      const path = orgPath(org);
      const listing = await readAllPages(org, path, (url) => send(org, 'GET', url), mask);
      noteShape(listing.shape);
      const { unnamed } = listing;
      if (unnamed > 0) {
        // Once per listing, whatever its pages: the org is named (it passed orgPath's check).
        logger.warn(
          { org, path, skipped: unnamed },
          `org ${org}: the listing (GET ${path}) holds ${unnamed === 1 ? 'an entry' : `${unnamed} entries`} with an empty name; ` +
            `skipped: envsync neither compares nor changes ${unnamed === 1 ? 'it' : 'them'}. The service should not list such entries; report it if it goes on`,
        );
      }
      return listing.environments;
    },
    async putEnvironment(org, env, signal) {
      await send(org, 'PUT', orgPath(org), json(putBody(env)), signal);
    },
    async listPolicyDocuments(org) {
      const path = documentsPath(org);
      return readPolicyDocuments(path, await send(org, 'GET', path), mask);
    },
    async putPolicyDocument(org, upload, signal) {
      await send(org, 'PUT', documentsPath(org), policyUploadBody(upload), signal);
    },
    async attachPolicies(org, env, names, signal) {
      await send(org, 'POST', policiesPath(org, env), json({ policy_names: names }), signal);
    },
    async detachPolicies(org, env, names, signal) {
      await send(org, 'DELETE', policiesPath(org, env), json({ policy_names: names }), signal);
    },
    async renameEnvironment(org, from, to, signal) {
      const path = `${orgPath(org)}/${segment('environment', from)}/rename`;
      // The new name goes in the body only; it is checked like a name in a URL all the same.
      segment('environment', to);
      await send(org, 'PUT', path, json({ new_name: to }), signal);
    },
    async archiveEnvironment(org, env, signal) {
      const path = `${orgPath(org)}/${segment('environment', env)}/archive`;
      try {
        await send(org, 'PUT', path, json({}), signal);
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return false;
        throw error;
      }
    },
    async patchTags(org, env, tags, signal) {
      const body = json({
        ...(Object.keys(tags.set).length > 0 ? { set_tags: tags.set } : {}),
        ...(tags.remove.length > 0 ? { remove_tags: tags.remove } : {}),
      });
      await send(org, 'PATCH', tagsPath(org, env), body, signal);
    },
    canSend() {
      return limits.canSend();
    },
    throttledMs(org) {
      return meter.totalMs(org);
    },
    async close() {
      // A transport given in outlives the client: its owner closes it.
      if (options.transport === undefined) await pool.close();
    },
  };
}
