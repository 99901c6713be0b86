/** Why a request to the Environments API failed, as the retry policy and the reports read it. */
export type FailureKind =
  | 'http' // a status that is not success
  | 'auth' // 401 or 403: the token was refused
  | 'network' // the connection failed or was reset
  | 'timeout' // no complete answer within --timeout
  | 'invalid-response' // a success status with a body envsync cannot read
  | 'redirect' // a 3xx: envsync does not follow redirects
  | 'too-large' // larger than --max-response-bytes: final, never read again in the run
  | 'deadline' // not sent: the run's --deadline passed, or would pass during the wait before it
  | 'stopped'; // not sent: the process is shutting down (SIGTERM, SIGINT)

export interface Failure {
  readonly kind: FailureKind;
  readonly status?: number | undefined;
  /** The delay the server asked for (Retry-After), in milliseconds. */
  readonly retryAfterMs?: number | undefined;
  /** The system's code for a connection that failed: ECONNREFUSED, ENOTFOUND, a certificate's. */
  readonly code?: string | undefined;
}

/**
 * What a failed connection says of the API's address rather than of one request (a wrong
 * --api-url looks like one of these, and waiting does not cure it).
 */
type Unreachable = 'refused' | 'dns' | 'tls';

const UNREACHABLE_CODES: ReadonlyMap<string, Unreachable> = new Map([
  ['ECONNREFUSED', 'refused'],
  ['ENOTFOUND', 'dns'],
  ['EAI_AGAIN', 'dns'],
  // Node's and OpenSSL's names for a certificate that cannot be verified.
  ...(
    'CERT_HAS_EXPIRED CERT_NOT_YET_VALID CERT_REJECTED CERT_REVOKED CERT_SIGNATURE_FAILURE ' +
    'CERT_UNTRUSTED DEPTH_ZERO_SELF_SIGNED_CERT ERR_TLS_CERT_ALTNAME_INVALID HOSTNAME_MISMATCH ' +
    'INVALID_CA SELF_SIGNED_CERT_IN_CHAIN UNABLE_TO_GET_ISSUER_CERT ' +
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY UNABLE_TO_VERIFY_LEAF_SIGNATURE'
  )
    .split(' ')
    .map((code): [string, Unreachable] => [code, 'tls']),
]);

/** Which of the unreachable kinds a failed connection is, if it is one. */
export function unreachable(failure: Failure | undefined): Unreachable | undefined {
  if (failure?.kind !== 'network' || failure.code === undefined) return undefined;
  return UNREACHABLE_CODES.get(failure.code);
}
