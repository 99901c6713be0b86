import type { Failure, FailureKind } from '../core/retry-policy.ts';

export type { FailureKind as ApiErrorKind } from '../core/retry-policy.ts';

/** An error from the API client, with context and never the token. */
export class ApiError extends Error implements Failure {
  override name = 'ApiError';
  readonly kind: FailureKind;
  readonly method: string;
  /** The request path (no query string with secrets: envsync puts none there). */
  readonly path: string;
  readonly status: number | undefined;
  /** Delay the server asked for (Retry-After), in milliseconds. */
  readonly retryAfterMs: number | undefined;
  /** The system's code for a connection that failed (ECONNREFUSED, ENOTFOUND, ...). */
  readonly code: string | undefined;
  /** For a connection that failed: the API's address (host:port) it was to. */
  readonly host: string | undefined;

  constructor(
    kind: FailureKind,
    message: string,
    context: {
      method: string;
      path: string;
      status?: number | undefined;
      retryAfterMs?: number | undefined;
      code?: string | undefined;
      host?: string | undefined;
      cause?: unknown;
    },
  ) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.kind = kind;
    this.method = context.method;
    this.path = context.path;
    this.status = context.status;
    this.retryAfterMs = context.retryAfterMs;
    this.code = context.code;
    this.host = context.host;
  }
}

/** The facts of a request failure, for the retry policy; undefined for anything else. */
export function failureOf(error: unknown): Failure | undefined {
  return error instanceof ApiError ? error : undefined;
}
