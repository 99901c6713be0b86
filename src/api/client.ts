/** The Environments API client: a keep-alive pool, one gate (gate.ts), p-retry's attempts. */
import { StringDecoder } from 'node:string_decoder';
import * as tls from 'node:tls';
import pRetry, { AbortError } from 'p-retry';
import type { Logger } from 'pino';
import { Pool, type Dispatcher, type FormData } from 'undici';
import { formatDuration } from '../config/duration.ts';
import type { Settings } from '../config/settings.ts';
import type { Clock } from '../core/clock.ts';
import { describeDialect, dialectOfShape, resolveDialect } from '../core/dialect.ts';
import type { DialectSetting, ListingShape, ResolvedDialect } from '../core/dialect.ts';
import { FIELD_LIST } from '../core/fields.ts';
import type { Mask } from '../core/mask.ts';
import type { DesiredEnvironment, TagRequests } from '../core/model.ts';
import { NAME_PATTERN } from '../core/names.ts';
import type { ObservedPolicyDocument } from '../core/policy-documents.ts';
import { unreachable } from '../core/request-failure.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { ApiError, failureOf } from './errors.ts';
import { RequestGate } from './gate.ts';
import { readAllPages } from './listing.ts';
import { policyUploadBody, readPolicyDocuments, type PolicyUpload } from './policy-documents.ts';
import { addressOf, HostReach } from './reach.ts';
import { quoted, serverMessage, type RawResponse } from './response.ts';
import * as retry from './retry-policy.ts';

export interface ClientEvents {
  request?(method: string, status: number | 'error', durationMs: number): void;
  retry?(method: string, reason: string): void;
  throttled?(): void;
  /** A stretch of time requests waited because the server asked, as it ends. */
  throttledFor?(ms: number): void;
}

export interface ClientOptions {
  /** The API's base address: requests go to `{base}/api/v2/...` and nowhere else. */
  readonly apiUrl: URL;
  /** The token of an org, read as each request is sent; it throws for an org that has none. */
  readonly getToken: (org: string) => string;
  readonly mask?: Mask | undefined;
  readonly concurrency: number;
  /** --timeout, per attempt (its connection included). */
  readonly timeoutMs: number;
  readonly policy: retry.RetryPolicy;
  readonly logger: Logger;
  readonly clock: Clock;
  /** --ca-file's certificates, trusted beside the default ones. */
  readonly ca?: string | undefined;
  /** Aborts everything: waits and the requests in flight. */
  readonly signal?: AbortSignal | undefined;
  /** A stop: every wait ends at once, its request not sent; requests that need none still go. */
  readonly stop?: AbortSignal | undefined;
  /** --deadline, from the client's creation: no request starts, and no wait begins, past it. */
  readonly deadlineMs?: number | undefined;
  readonly events?: ClientEvents | undefined;
  readonly dialect?: DialectSetting | undefined;
  readonly maxResponseBytes?: number | undefined;
  /** A pool and gate that outlive the client (the daemon's): the pace learned carries over. */
  readonly transport?: Transport | undefined;
}

export type Transport = { readonly pool: Pool; readonly gate: RequestGate };

/** The default of --max-response-bytes: one listing this large fits a 256 MiB pod with room. */
const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** The PUT body of an environment: its name and every field it declares, by wire name. */
export function putBody(env: DesiredEnvironment): Record<string, unknown> {
  const body: Record<string, unknown> = { name: env.name };
  for (const spec of FIELD_LIST)
    if (env[spec.name] !== undefined) body[spec.wireName] = env[spec.name];
  return body;
}

/** How long a connection (DNS, TCP, TLS) may take: --timeout, at most undici's own 10 s. */
const connectTimeoutMs = (timeoutMs: number) => Math.min(timeoutMs, 10_000);

/** The keep-alive connections to the API: one request each at a time, TLS always verified. */
export function connectionPool(
  origin: string,
  { concurrency, timeoutMs, ca }: Pick<ClientOptions, 'concurrency' | 'timeoutMs' | 'ca'>,
): Pool {
  return new Pool(origin, {
    connections: Math.max(1, concurrency),
    pipelining: 1,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: {
      timeout: connectTimeoutMs(timeoutMs),
      // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED=0 in the environment cannot turn it off.
      rejectUnauthorized: true,
      // --ca-file adds to the default trust store; node's `ca` alone would replace it.
      ...(ca === undefined ? {} : { ca: [...tls.getCACertificates('default'), ca] }),
    },
  });
}

/** The client as the settings describe it, on the real clock unless one is passed. */
export function clientFromSettings(
  settings: Settings,
  options: Omit<ClientOptions, 'concurrency' | 'timeoutMs' | 'policy' | 'clock'> & {
    clock?: Clock | undefined;
  },
): EnvironmentsClient {
  const { retries, retryDelayMs: minDelayMs, maxRetryAfterMs } = settings;
  return createClient({
    ...options,
    clock: options.clock ?? systemClock,
    concurrency: settings.concurrency,
    timeoutMs: settings.timeoutMs,
    deadlineMs: settings.deadlineMs,
    maxResponseBytes: settings.maxResponseBytes,
    dialect: settings.apiDialect,
    policy: { ...retry.DEFAULT_RETRY_POLICY, retries, minDelayMs, maxRetryAfterMs },
  });
}

/** A request: `cancel` ends it, `waits` its waits (a stop too); `after`: its last error. */
interface Request {
  readonly org: string;
  readonly method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH';
  readonly path: string;
  readonly body: string | FormData | undefined;
  readonly cancel: AbortSignal | undefined;
  readonly waits: AbortSignal | undefined;
  after: unknown;
}

const either = (a: AbortSignal | undefined, b: AbortSignal | undefined) =>
  a !== undefined && b !== undefined ? AbortSignal.any([a, b]) : (a ?? b);

/** The Environments API, as envsync uses it; `signal` cancels a request, waiting or in flight. */
export type EnvironmentsClient = ReturnType<typeof createClient>;

export function createClient(options: ClientOptions) {
  const { apiUrl, clock, logger, policy, events, timeoutMs, stop, deadlineMs } = options;
  const basePath = apiUrl.pathname.replace(/\/+$/, '');
  const host = addressOf(apiUrl);
  const mask = options.mask ?? ((text: string) => text);
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const gate = options.transport?.gate ?? new RequestGate(options.concurrency, clock);
  const pool = options.transport?.pool ?? connectionPool(apiUrl.origin, options);
  // The others wait for the probe's verdict at most the probe's quick retry and one attempt.
  const probeWaitMs = Math.min(2 * policy.minDelayMs, policy.maxDelayMs) + timeoutMs;
  const reach = new HostReach(logger, clock, probeWaitMs);
  const meter = throttleMeter(clock, events);
  const deadlineAt = deadlineMs === undefined ? undefined : clock.now() + deadlineMs;
  // Answers refused as too large, by path: never downloaded again by this client.
  const tooLarge = new Map<string, ApiError>();
  const placeholdersSaid = new Set<string>();
  let conflicts = 0;

  const notSent = (kind: 'deadline' | 'stopped', r: Request, why: string) => {
    const again = r.after === undefined ? '' : ' again';
    const last = r.after instanceof Error ? `; the last attempt: ${r.after.message}` : '';
    const { method, path } = r;
    const message = `${method} ${path}: not sent${again}: ${why}${last}`;
    return new ApiError(kind, message, { method, path });
  };
  const pastDeadline = (r: Request, waitMs: number) => {
    if (deadlineAt === undefined || clock.now() + waitMs < deadlineAt) return undefined;
    const wait = `would pass during the ${Math.ceil(waitMs / 1000)} s wait before sending`;
    const deadline = `the run's deadline (--deadline ${formatDuration(deadlineMs ?? 0)})`;
    return notSent('deadline', r, `${deadline} ${waitMs > 0 ? wait : 'passed'}`);
  };
  const stopping = (r: Request) =>
    stop?.aborted === true ? notSent('stopped', r, 'envsync is shutting down') : undefined;
  /** Waits `ms` the server asked for (throttled time), unless the deadline or a stop refuse. */
  async function waitThrottled(r: Request, ms: number): Promise<void> {
    const refused = stopping(r) ?? pastDeadline(r, ms);
    if (refused !== undefined) throw refused;
    await meter
      .measure(r.org, () => clock.sleep(ms, r.waits))
      .catch((error: unknown) => {
        throw stopping(r) ?? error;
      });
  }

  /** One attempt: a slot at the gate, the request, its whole body; final errors are AbortErrors. */
  async function attempt(r: Request): Promise<RawResponse> {
    const { org, method, path, body, cancel } = r;
    const refused = tooLarge.get(path);
    if (refused !== undefined) throw new AbortError(refused);
    // The gate's pauses are the server's (a 429's Retry-After, then the pace): throttled time.
    const acquire = async () => {
      try {
        await gate.acquire(cancel, (ms) => waitThrottled(r, ms));
      } catch (error) {
        throw cancel?.aborted === true ? cancel.reason : new AbortError(error as ApiError);
      }
    };
    const notReached = await reach.admit(r, acquire, () => gate.release());
    if (notReached !== undefined) throw new AbortError(notReached);
    // No request starts after the deadline; a stop lets those that need no wait go out.
    const late = pastDeadline(r, 0);
    if (late !== undefined) {
      gate.release();
      throw new AbortError(late);
    }
    const started = clock.now();
    const timeout = new AbortController();
    // A request in flight keeps the process alive by its socket; its timer need not.
    const timer = clock.setTimer(timeoutMs, () => timeout.abort(), { unref: true });
    let status: number | undefined;
    const fail = (kind: 'too-large' | 'timeout', why: string, cause?: unknown) =>
      new ApiError(kind, `${method} ${path}: ${why}`, { method, path, status, cause });
    const tooBig = (declared?: number) => {
      const size = declared === undefined ? '' : ` (it announced ${declared})`;
      const error = fail(
        'too-large',
        `the answer is larger than ${maxBytes} bytes${size}, the limit set by --max-response-bytes; it is not read again in this run (raise --max-response-bytes if the org is really this large)`,
      );
      tooLarge.set(path, error);
      return new AbortError(error);
    };
    try {
      const response = await pool.request({
        method,
        path,
        signal: cancel === undefined ? timeout.signal : AbortSignal.any([timeout.signal, cancel]),
        headers: {
          authorization: `Bearer ${options.getToken(org)}`,
          accept: 'application/json',
          ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}),
        },
        ...(body === undefined ? {} : { body }),
      });
      status = response.statusCode;
      reach.answered();
      const text = await readBody(response, maxBytes, tooBig);
      events?.request?.(method, response.statusCode, clock.now() - started);
      return { status: response.statusCode, headers: response.headers, text };
    } catch (error) {
      events?.request?.(method, 'error', clock.now() - started);
      if (cancel?.aborted === true) throw cancel.reason;
      if (error instanceof AbortError) throw error;
      const code = (error as { code?: string }).code ?? '';
      if (code === 'UND_ERR_CONNECT_TIMEOUT') {
        const why = `no connection to ${host} within ${connectTimeoutMs(timeoutMs)} ms`;
        throw fail('timeout', why, error);
      }
      if (timeout.signal.aborted || /timeout/i.test(code))
        throw fail('timeout', `no answer within ${timeoutMs} ms (--timeout)`, error);
      const failed = connectionError(method, path, error, host);
      reach.attemptFailed(failed);
      throw failed;
    } finally {
      timer.cancel();
      gate.release();
    }
  }

  /** A success is returned; anything else is thrown in the server's words, masked. */
  function check({ method, path }: Request, response: RawResponse): RawResponse {
    const { status } = response;
    if (status >= 200 && status <= 299) {
      gate.succeeded();
      return response;
    }
    const fail = (kind: 'redirect' | 'auth' | 'http', why: string, retryAfterMs?: number) =>
      new ApiError(kind, `${method} ${path}: ${why}`, { method, path, status, retryAfterMs });
    if (status >= 300 && status <= 399) {
      const why = `the API answered ${status} (a redirect); envsync does not follow redirects: set --api-url to the final address`;
      throw new AbortError(fail('redirect', why));
    }
    const message = serverMessage(response.text, mask);
    if (status === 401 || status === 403)
      throw new AbortError(fail('auth', `the token was refused (${status}): ${message}`));
    const retryAfter = response.headers['retry-after'];
    const retryAfterMs = retry.parseRetryAfter(retryAfter, clock.now(), policy.maxRetryAfterMs);
    if (status === 429) {
      events?.throttled?.();
      gate.throttled(retryAfterMs ?? policy.minDelayMs);
      const pace = { limit: gate.limit, paceMs: Math.round(gate.interval) };
      logger.debug(
        { method, path, retryAfterMs, ...pace },
        'throttled (429): all pause, then pace',
      );
    }
    if (status === 409) conflicts++;
    const error = fail('http', `${status} ${message}`, retryAfterMs);
    throw retry.isRetriedStatus(status) ? error : new AbortError(error);
  }

  async function send(
    org: string,
    method: Request['method'],
    path: string,
    body?: string | FormData,
    signal?: AbortSignal,
  ): Promise<RawResponse> {
    // An org with no token fails here, final: none of its requests is sent.
    options.getToken(org);
    const cancel = either(options.signal, signal);
    const waits = either(stop, cancel);
    const r: Request = { org, method, path, body, cancel, waits, after: undefined };
    // p-retry's backoff ends with `cancel`, and with a stop while it waits; a stop during an
    // attempt is not its to end (a request that needs no wait goes out).
    const backoffEnds = new AbortController();
    let inAttempt = false;
    const onWaitsEnd = () => {
      if (cancel?.aborted === true) backoffEnds.abort(cancel.reason);
      else if (!inAttempt) backoffEnds.abort(stopping(r));
    };
    waits?.addEventListener('abort', onWaitsEnd);
    let throttled = 0;
    try {
      return await pRetry(
        async () => {
          inAttempt = true;
          return check(r, await attempt(r).finally(() => (inAttempt = false)));
        },
        {
          ...retry.backoff(policy),
          signal: backoffEnds.signal,
          shouldConsumeRetry: ({ error }) => {
            if (retry.isThrottled(failureOf(error))) throttled++;
            return retry.usesRetry(failureOf(error), throttled, policy);
          },
          shouldRetry: async ({ error, attemptNumber, retriesConsumed, retryDelay }) => {
            const failure = failureOf(error);
            if (!retry.mayRetry(method, failure, retriesConsumed)) return false;
            r.after = error;
            // A 503's Retry-After longer than the backoff is waited whole (a 429's, at the gate).
            const extra = retry.retryAfterWaitMs(failure, retryDelay);
            const refused = stopping(r) ?? pastDeadline(r, retryDelay + extra);
            if (refused !== undefined) throw refused;
            events?.retry?.(method, String(failure?.status ?? failure?.kind ?? 'error'));
            // The quick retry of an unreachable address is said once, when it fails (reach.ts).
            const said = { method, path, attempt: attemptNumber, status: failure?.status };
            logger[unreachable(failure) === undefined ? 'warn' : 'debug'](
              { ...said, retryDelay: retryDelay + extra },
              `retrying: ${error.message}`,
            );
            if (extra > 0) await waitThrottled(r, extra);
            return true;
          },
        },
      );
    } catch (error) {
      // Failed for good on an unreachable host: the requests still to come are not sent.
      reach.failed(error, r.after);
      throw error;
    } finally {
      waits?.removeEventListener('abort', onWaitsEnd);
    }
  }

  // Org and environment names go into a path only after this check, and percent-encoded.
  const segment = (what: string, name: string) => {
    if (NAME_PATTERN.test(name)) return encodeURIComponent(name);
    throw new Error(`refusing to use ${what} name ${JSON.stringify(name)} in a URL`);
  };
  const api = `${basePath}/api/v2`;
  const orgPath = (org: string) => `${api}/environments/${segment('org', org)}`;
  const envPath = (org: string, env: string, tail: string) =>
    `${orgPath(org)}/${segment('environment', env)}/${tail}`;
  const documentsPath = (org: string) => `${api}/policies/${segment('org', org)}`;
  const json = JSON.stringify;

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

  type Names = readonly string[];
  return {
    gate,
    /** The dialect in use: `--api-dialect`'s, or under `auto` the first listing's (none before). */
    dialect: (): ResolvedDialect | undefined => resolveDialect(dialectSetting, firstShape),
    /** The org's environments, and the names its placeholders stand for (each warned of once). */
    async listEnvironments(org: string) {
      const path = orgPath(org);
      const listing = await readAllPages(org, path, (url) => send(org, 'GET', url), mask);
      noteShape(listing.shape);
      const { unnamed: skipped } = listing;
      if (skipped > 0) {
        const one = skipped === 1;
        logger.warn(
          { org, path, skipped },
          `org ${org}: the listing (GET ${path}) holds ${one ? 'an entry' : `${skipped} entries`} with an empty name; ` +
            `skipped: envsync neither compares nor changes ${one ? 'it' : 'them'}. The service should not list such entries; report it if it goes on`,
        );
      }
      for (const name of listing.placeholders.filter((n) => !placeholdersSaid.has(`${org}/${n}`))) {
        placeholdersSaid.add(`${org}/${name}`);
        logger.warn(
          { org, path, environment: name },
          `org ${org}: the listing (GET ${path}) holds a placeholder, not a valid environment, for ${quoted(name)}: envsync compares nothing and sends nothing for that name, and goes on with the others`,
        );
      }
      return listing;
    },
    /** Whether the service says `env` was archived (a read answering 404 "has been archived"). */
    async wasArchived(org: string, env: string): Promise<boolean> {
      try {
        await send(org, 'GET', `${orgPath(org)}/${segment('environment', env)}`);
        return false;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404)
          return /has been archived/.test(error.message);
        throw error;
      }
    },
    async putEnvironment(org: string, env: DesiredEnvironment, signal?: AbortSignal) {
      await send(org, 'PUT', orgPath(org), json(putBody(env)), signal);
    },
    /** Sets the fields of `body` (wire names) on an existing environment, and no other. */
    async patchEnvironment(org: string, env: string, body: object, signal?: AbortSignal) {
      const path = `${orgPath(org)}/${segment('environment', env)}`;
      await send(org, 'PATCH', path, json(body), signal);
    },
    async listPolicyDocuments(org: string): Promise<ObservedPolicyDocument[]> {
      const path = documentsPath(org);
      return readPolicyDocuments(path, await send(org, 'GET', path), mask);
    },
    async putPolicyDocument(org: string, upload: PolicyUpload, signal?: AbortSignal) {
      await send(org, 'PUT', documentsPath(org), policyUploadBody(upload), signal);
    },
    async attachPolicies(org: string, env: string, names: Names, signal?: AbortSignal) {
      await send(org, 'POST', envPath(org, env, 'policies'), json({ policy_names: names }), signal);
    },
    async detachPolicies(org: string, env: string, names: Names, signal?: AbortSignal) {
      const path = envPath(org, env, 'policies');
      await send(org, 'DELETE', path, json({ policy_names: names }), signal);
    },
    async renameEnvironment(org: string, from: string, to: string, signal?: AbortSignal) {
      segment('environment', to); // the new name goes in the body, checked all the same
      await send(org, 'PUT', envPath(org, from, 'rename'), json({ new_name: to }), signal);
    },
    /** Archives an environment; `false` when the service answers 404 (it is gone already). */
    async archiveEnvironment(org: string, env: string, signal?: AbortSignal): Promise<boolean> {
      try {
        await send(org, 'PUT', envPath(org, env, 'archive'), '{}', signal);
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return false;
        throw error;
      }
    },
    async patchTags(org: string, env: string, { set, remove }: TagRequests, signal?: AbortSignal) {
      const path = `${api}/tags/${segment('org', org)}/environment/${segment('environment', env)}`;
      const body = {
        ...(Object.keys(set).length > 0 ? { set_tags: set } : {}),
        ...(remove.length > 0 ? { remove_tags: remove } : {}),
      };
      await send(org, 'PATCH', path, json(body), signal);
    },
    /** False once the deadline has passed or the client was stopped: no new round should start. */
    canSend: () => stop?.aborted !== true && (deadlineAt === undefined || clock.now() < deadlineAt),
    /** Milliseconds spent throttled, for one org or for the whole client. */
    throttledMs: (org?: string) => meter.totalMs(org),
    /** Answers 409 (a conflict, tried again) the client met. */
    conflicts: () => conflicts,
    async close(): Promise<void> {
      // A transport given in outlives the client: its owner closes it.
      if (options.transport === undefined) await pool.close();
    },
  };
}

/** A failed connection's error: when the address is at fault, which part (port, name, TLS). */
function connectionError(method: string, path: string, error: unknown, host: string): ApiError {
  const raw = (error as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : undefined;
  const text = error instanceof Error ? error.message : String(error);
  const reason = code ?? text;
  const resolves = code === 'ENOTFOUND' ? 'does not resolve' : 'could not be resolved';
  const what = {
    refused: `connection refused by ${host} (${reason})`,
    dns: `the host name ${host.replace(/:\d+$/, '')} ${resolves} (${reason})`,
    tls: `the TLS certificate of ${host} cannot be verified (${reason}: ${text})`,
    other: `connection failed (${reason})`,
  }[unreachable({ kind: 'network', code }) ?? 'other'];
  const context = { method, path, cause: error, code, host };
  return new ApiError('network', `${method} ${path}: ${what}`, context);
}

/** Reads a whole body as text; one over `limit` bytes (announced, or as it streams) is refused. */
async function readBody(
  { body, headers }: Dispatcher.ResponseData,
  limit: number,
  tooLarge: (declared?: number) => Error,
): Promise<string> {
  const declared = Number(headers['content-length'] ?? Number.NaN);
  if (Number.isSafeInteger(declared) && declared > limit) {
    body.on('error', () => undefined); // the abort that dropping the connection reports
    body.destroy();
    throw tooLarge(declared);
  }
  const decoder = new StringDecoder('utf8');
  let text = '';
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if ((size += chunk.length) > limit) {
      body.destroy();
      throw tooLarge();
    }
    text += decoder.write(chunk);
  }
  return text + decoder.end();
}

/** Time spent waiting because the server asked, for the client and per org, overlaps once. */
function throttleMeter(clock: Clock, events: ClientEvents | undefined) {
  const spans = new Map<string | undefined, { waiting: number; since: number; totalMs: number }>();
  const span = (key: string | undefined) => {
    const found = spans.get(key) ?? { waiting: 0, since: 0, totalMs: 0 };
    spans.set(key, found);
    return found;
  };
  return {
    async measure(org: string, wait: () => Promise<void>): Promise<void> {
      const client = span(undefined);
      const both = [client, span(org)];
      for (const s of both) if (s.waiting++ === 0) s.since = clock.now();
      try {
        await wait();
      } finally {
        for (const s of both) {
          if (--s.waiting > 0) continue;
          const ms = Math.max(0, clock.now() - s.since);
          s.totalMs += ms;
          if (s === client) events?.throttledFor?.(ms);
        }
      }
    },
    totalMs(org?: string): number {
      const s = spans.get(org);
      if (s === undefined) return 0;
      return Math.round(s.totalMs + (s.waiting > 0 ? clock.now() - s.since : 0));
    },
  };
}
