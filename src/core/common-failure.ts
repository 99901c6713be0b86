/**
 * One reason for every org. When every org that was sent a request failed the same way, and that
 * way is about the API's address or the token rather than about any org (a refused connection, a
 * host name that does not resolve, a certificate that cannot be verified, the token refused), the
 * outputs say it once, with what to check, instead of once per org: a hundred identical lines
 * hide the one thing to fix. Pure.
 */
import { unreachable, type Failure } from './request-failure.ts';

/** The reasons an org can fail for that are not the org's own. */
export type FailureCauseKind = 'refused' | 'dns' | 'tls' | 'unauthorized' | 'forbidden';

/** Why an org failed as a whole, when the reason is the API's address or the token. */
export interface FailureCause {
  readonly kind: FailureCauseKind;
  /** ECONNREFUSED, ENOTFOUND, EAI_AGAIN or a certificate's code; `401` or `403` for the token. */
  readonly code: string;
  /** The API's address (host:port) the connection was to; absent for the token. */
  readonly host?: string;
}

/** The cause of a request's failure, when it is one of those above. */
export function failureCause(
  failure: (Failure & { readonly host?: string | undefined }) | undefined,
): FailureCause | undefined {
  if (failure === undefined) return undefined;
  if (failure.kind === 'auth') {
    if (failure.status === 401) return { kind: 'unauthorized', code: '401' };
    if (failure.status === 403) return { kind: 'forbidden', code: '403' };
    return undefined;
  }
  const kind = unreachable(failure);
  if (kind === undefined || failure.code === undefined) return undefined;
  return {
    kind,
    code: failure.code,
    ...(failure.host === undefined ? {} : { host: failure.host }),
  };
}

/** Every org failed for one cause: the orgs, and the cause said once with what to check. */
export interface CommonFailure extends FailureCause {
  /** The orgs that failed so (every org sent a request). */
  readonly orgs: readonly string[];
  readonly message: string;
  readonly hint: string;
}

/** What the decision reads of an org's outcome. */
export interface OrgOutcome {
  readonly org: string;
  readonly status: 'ok' | 'invalid' | 'failed';
  readonly cause?: FailureCause | undefined;
}

function sameCause(a: FailureCause | undefined, b: FailureCause): boolean {
  return a !== undefined && a.kind === b.kind && a.code === b.code && a.host === b.host;
}

/**
 * The cause every org failed for, when there is one: every org that was sent a request (invalid
 * ones are not) failed, and for the same cause. A 403 counts only on two orgs or more: one org
 * refused is most likely that org's permission, which its own error says.
 */
export function commonFailure(orgs: readonly OrgOutcome[]): CommonFailure | undefined {
  const sent = orgs.filter((o) => o.status !== 'invalid');
  const first = sent[0]?.cause;
  if (first === undefined) return undefined;
  if (!sent.every((o) => o.status === 'failed' && sameCause(o.cause, first))) return undefined;
  if (first.kind === 'forbidden' && sent.length < 2) return undefined;
  const names = sent.map((o) => o.org);
  const who =
    names.length === 1
      ? `org ${names[0]} failed`
      : `all ${names.length} orgs${sent.length < orgs.length ? ' with valid manifests' : ''} failed the same way`;
  return {
    ...first,
    orgs: names,
    message: `${who}: ${reasonOf(first)}`,
    hint: HINTS[first.kind],
  };
}

/** What went wrong, in the words a per-org error would use. */
const REASONS: Record<FailureCauseKind, (cause: FailureCause, host: string) => string> = {
  refused: (cause, host) => `the API at ${host} refused the connection (${cause.code})`,
  dns: (cause, host) =>
    cause.code === 'ENOTFOUND'
      ? `the API's host name ${hostName(host)} does not resolve (${cause.code})`
      : `the API's host name ${hostName(host)} could not be resolved (${cause.code})`,
  tls: (cause, host) =>
    `the TLS certificate of the API at ${host} cannot be verified (${cause.code})`,
  unauthorized: (cause) => `the token was refused (${cause.code})`,
  forbidden: (cause) => `the token was refused (${cause.code})`,
};

function reasonOf(cause: FailureCause): string {
  return REASONS[cause.kind](cause, cause.host ?? 'the --api-url address');
}

/** What to check. */
const HINTS: Record<FailureCauseKind, string> = {
  refused:
    'Is --api-url right? Nothing accepts connections at that address: a wrong host or port, or the service is down.',
  dns: 'Is --api-url right? Check the host name, and that DNS resolves it where envsync runs.',
  tls: 'Is --api-url right? For a service behind a private CA, add the CA with --ca-file (verification cannot be turned off).',
  unauthorized:
    'Is the token for this API? Check ENVSYNC_TOKEN, --token-file or --token-dir, and --api-url.',
  forbidden: 'Is the token for this API? It is allowed none of these orgs.',
};

/** `host` of `host:port` (an IPv6 address keeps its brackets). */
function hostName(address: string): string {
  return address.replace(/:\d+$/, '');
}

/**
 * Whether a cause is never about one org (the address, or a token the API does not know), so that
 * a log line per org would only repeat it: a 403 may be that org's permission, and is not.
 */
export function neverAboutTheOrg(cause: FailureCause | undefined): boolean {
  return cause !== undefined && cause.kind !== 'forbidden';
}

/**
 * The orgs that failed for a cause never about the org, one line per cause (there is one, unless
 * the address changed between two requests), for a pass some of whose orgs did not fail so; no
 * hint, as the other orgs show the address and token can be right.
 */
export function failuresSaidOnce(orgs: readonly OrgOutcome[]): string[] {
  const groups: { cause: FailureCause; orgs: string[] }[] = [];
  for (const { org, status, cause } of orgs) {
    if (status !== 'failed' || cause === undefined || !neverAboutTheOrg(cause)) continue;
    const group = groups.find((g) => sameCause(cause, g.cause));
    if (group === undefined) groups.push({ cause, orgs: [org] });
    else group.orgs.push(org);
  }
  return groups.map(
    ({ cause, orgs: names }) =>
      `${names.length === 1 ? `org ${names[0]}` : `${names.length} orgs`} failed: ${reasonOf(cause)}${names.length === 1 ? '' : ` (${someNames(names)})`}`,
  );
}

/** Names for a line of text: all of them up to `max`, then how many more. */
export function someNames(names: readonly string[], max = 20): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

/**
 * Whether an org's own section may be left out of an output that says `failure` once at its top:
 * the org is one of those it names, and has nothing else to show.
 */
export function saidOnce(
  failure: CommonFailure | undefined,
  org: {
    readonly org: string;
    readonly changes: readonly unknown[];
    readonly errors: readonly unknown[];
    readonly archives?: readonly unknown[] | undefined;
    readonly policyDocuments?: readonly unknown[] | undefined;
  },
): boolean {
  return (
    failure !== undefined &&
    failure.orgs.includes(org.org) &&
    org.changes.length === 0 &&
    org.errors.length === 0 &&
    (org.archives ?? []).length === 0 &&
    (org.policyDocuments ?? []).length === 0
  );
}
