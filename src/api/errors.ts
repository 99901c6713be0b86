import type { Failure, FailureKind } from '../core/request-failure.ts';

type Context = Pick<ApiError, 'method' | 'path'> &
  Partial<Pick<ApiError, 'status' | 'retryAfterMs' | 'code' | 'host'>>;

/** An error of the API client: what failed, with its context; never the token. */
export class ApiError extends Error implements Failure {
  override name = 'ApiError';
  readonly kind: FailureKind;
  declare readonly method: string;
  /** The request's path (envsync puts no secret in a query string). */
  declare readonly path: string;
  declare readonly status: number | undefined;
  declare readonly retryAfterMs: number | undefined;
  /** For a connection that failed: the system's code (ECONNREFUSED, ...), the API's host:port. */
  declare readonly code: string | undefined;
  declare readonly host: string | undefined;

  constructor(
    kind: FailureKind,
    message: string,
    { cause, ...context }: Context & { cause?: unknown },
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.kind = kind;
    Object.assign(this, context);
  }
}

/** The facts of a request failure, for the retry policy; undefined for anything else. */
export function failureOf(error: unknown): Failure | undefined {
  return error instanceof ApiError ? error : undefined;
}
