/** What the API client takes and offers, and the PUT body it sends. */
import type { ConnectionPool } from './pool.ts';
import type { Logger } from 'pino';
import { FIELD_LIST } from '../core/fields.ts';
import type { DialectSetting, ResolvedDialect } from '../core/dialect.ts';
import type { Mask } from '../core/mask.ts';
import type { DesiredEnvironment, ObservedEnvironment, TagRequests } from '../core/model.ts';
import type { ObservedPolicyDocument } from '../core/policy-documents.ts';
import type { PolicyUpload } from './policy-documents.ts';
import type { RetryPolicy } from '../core/retry-policy.ts';
import type { GateClock, RequestGate } from './gate.ts';

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
  /** A stretch of time during which requests waited because the server asked, as it ends. */
  throttledFor?(ms: number): void;
}

export interface ClientOptions {
  /**
   * The API's base address; requests go to `{base}/api/v2/environments/{org}`, and in the kosli
   * dialect to `.../{org}/{name}/policies`, `{base}/api/v2/tags/{org}/environment/{name}` and
   * `{base}/api/v2/policies/{org}`.
   */
  readonly apiUrl: URL;
  /**
   * The token of a request's org, read when each request is sent, so a rotated token is picked
   * up; it throws for an org that has none, whose request is then not sent. Never logged.
   */
  readonly getToken: (org: string) => string;
  /**
   * Masks the secrets (every token getToken may give) in the service's text before it is cut
   * for a message, so that a cut leaves no piece of one (the data is read as it came).
   */
  readonly mask?: Mask | undefined;
  readonly concurrency: number;
  readonly timeoutMs: number;
  readonly policy: RetryPolicy;
  readonly logger: Logger;
  readonly clock: GateClock;
  /** PEM text of extra CA certificates to trust (--ca-file). */
  readonly ca?: string | undefined;
  /** Aborts everything: waits and the requests in flight. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Shutdown: every wait (backoff, Retry-After, the gate's pause) ends at once, and its request
   * fails as not sent; requests that need no wait still go out, so a healthy pass finishes.
   */
  readonly stop?: AbortSignal | undefined;
  /**
   * The run's deadline (--deadline), from the client's creation: after it no request is started,
   * and no wait is begun that would end after it. Requests in flight finish, within --timeout.
   */
  readonly deadlineMs?: number | undefined;
  readonly events?: ClientEvents | undefined;
  /** `--api-dialect`: a dialect, or `auto` (default) to read it from the first listing's shape. */
  readonly dialect?: DialectSetting | undefined;
  /** An answer larger than this is refused, final (default: client.ts's DEFAULT_MAX_RESPONSE_BYTES). */
  readonly maxResponseBytes?: number | undefined;
  /**
   * Connections and the request gate that outlive this client (the daemon's, for its whole life):
   * the open connections and the pace learned from the service's Retry-After carry over from one
   * pass to the next. The client does not close them. Without it, the client has its own.
   */
  readonly transport?: Transport | undefined;
}

/** What a client sends through: the keep-alive pool and the gate every request waits at. */
export interface Transport {
  readonly pool: ConnectionPool;
  readonly gate: RequestGate;
}

/**
 * The Environments API, as envsync uses it: list an org, put one environment, and in the kosli
 * dialect attach and detach its policies, set and remove its tags, and read and upload the org's
 * policy documents. `signal` cancels a request
 * (while it waits for the gate, or in flight).
 */
export interface EnvironmentsClient {
  listEnvironments(org: string): Promise<ObservedEnvironment[]>;
  putEnvironment(org: string, env: DesiredEnvironment, signal?: AbortSignal): Promise<void>;
  /** The org's policy documents (`GET /api/v2/policies/{org}`; the `kosli` dialect only). */
  listPolicyDocuments(org: string): Promise<ObservedPolicyDocument[]>;
  /** Creates or updates one policy document (`PUT /api/v2/policies/{org}`, a multipart form). */
  putPolicyDocument(org: string, upload: PolicyUpload, signal?: AbortSignal): Promise<void>;
  /** `POST .../{org}/{env}/policies` with `{"policy_names": names}`. */
  attachPolicies(
    org: string,
    env: string,
    names: readonly string[],
    signal?: AbortSignal,
  ): Promise<void>;
  /** `DELETE .../{org}/{env}/policies` with `{"policy_names": names}`. */
  detachPolicies(
    org: string,
    env: string,
    names: readonly string[],
    signal?: AbortSignal,
  ): Promise<void>;
  /** `PUT .../{org}/{from}/rename` with `{"new_name": to}`: the environment keeps its history. */
  renameEnvironment(org: string, from: string, to: string, signal?: AbortSignal): Promise<void>;
  /**
   * `PUT .../{org}/{env}/archive` with `{}`. Resolves `false` when the service answers 404 (it
   * does not have the environment, or archived it already): the environment is gone either way.
   */
  archiveEnvironment(org: string, env: string, signal?: AbortSignal): Promise<boolean>;
  /** `PATCH /api/v2/tags/{org}/environment/{env}` with `set_tags` and `remove_tags`. */
  patchTags(org: string, env: string, tags: TagRequests, signal?: AbortSignal): Promise<void>;
  readonly gate: RequestGate;
  /** False once the deadline has passed or the client was stopped: no new round should start. */
  canSend(): boolean;
  /**
   * The dialect this client uses: the one `--api-dialect` names, or under `auto` the one the
   * first listing's shape says (undefined until a listing was read).
   */
  dialect(): ResolvedDialect | undefined;
  /** Milliseconds spent throttled, for one org or (without one) for the whole client. */
  throttledMs(org?: string): number;
  close(): Promise<void>;
}
