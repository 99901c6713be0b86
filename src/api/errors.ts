/** Why a request to the Environments API failed, as data the retry policy and reports can use. */
export type ApiErrorKind =
  | 'http' // the server answered with a status that is not success
  | 'auth' // 401 or 403: the token was refused
  | 'network' // the connection failed or was reset
  | 'timeout' // no complete answer within --timeout
  | 'invalid-response' // a success status with a body envsync cannot read
  | 'redirect'; // a 3xx: envsync does not follow redirects

/** An error from the API client, with context and never the token. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly kind: ApiErrorKind;
  readonly method: string;
  /** The request path (no query string with secrets: envsync puts none there). */
  readonly path: string;
  readonly status: number | undefined;
  /** Delay the server asked for (Retry-After), in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(
    kind: ApiErrorKind,
    message: string,
    context: {
      method: string;
      path: string;
      status?: number | undefined;
      retryAfterMs?: number | undefined;
      cause?: unknown;
    },
  ) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.kind = kind;
    this.method = context.method;
    this.path = context.path;
    this.status = context.status;
    this.retryAfterMs = context.retryAfterMs;
  }
}
