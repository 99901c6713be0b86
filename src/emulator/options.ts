/**
 * The emulator's public option types and their defaults. Kept free of I/O so the command, the
 * server and the tests agree on one definition.
 */
import type { Logger } from 'pino';

/**
 * `spec` answers exactly what the contract shows; `kosli` answers as production is seen to
 * (docs/api-behaviour.md).
 */
export type Profile = 'spec' | 'kosli';

export const PROFILES: readonly Profile[] = ['spec', 'kosli'];

/** Fault injection settings; every rate is a probability from 0 to 1. */
export interface FaultSettings {
  /** Added delay per request, drawn uniformly from min..max (whole milliseconds); 0,0 = none. */
  latencyMs: { min: number; max: number };
  /** Share of requests answered 503 with a JSON `{"message": ...}` body. */
  failRate: number;
  /** Share of requests whose socket is destroyed without an answer. */
  resetRate: number;
  /** Share of requests never answered (until the client gives up or the emulator shuts down). */
  hangRate: number;
  /** Requests per second allowed by a token bucket (burst = max(1, rate)); 0 = off. */
  rateLimit: number;
  /**
   * A listing that shows what it should not: per org, entries listed as given besides the org's
   * environments (another org's environment, an empty name), in name order, in every shape and on
   * every page. Not drawn: every listing of the org shows them.
   */
  listingExtra: Record<string, Record<string, unknown>[]>;
  /** Listing entries are shown without their `org` field (the extra entries stay as given). */
  listingOmitOrg: boolean;
  /**
   * Writes answered as if done, and not done: each is the route of an operation that changes the
   * store (`environments` for the PUT, `archive`, `rename`, `policies`, `tags`,
   * `policy-documents` for an upload). So a client's check that its writes took can be tried.
   */
  ignoredWrites: IgnorableWrite[];
}

/** The writes `ignoredWrites` may name: the routes that change the store. */
export const IGNORABLE_WRITES = [
  'environments',
  'archive',
  'rename',
  'policies',
  'tags',
  'policy-documents',
] as const;
export type IgnorableWrite = (typeof IGNORABLE_WRITES)[number];

/** The faults the API routes apply themselves (not drawn), as they read them. */
export type RouteFaults = Pick<FaultSettings, 'listingExtra' | 'listingOmitOrg' | 'ignoredWrites'>;

/**
 * Waits out injected latency: resolves after `ms`, or early once `signal` aborts (the emulator is
 * closing; it stops waiting then in any case).
 */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** One accepted token; `orgs: null` means every org. */
export interface TokenGrant {
  token: string;
  orgs: readonly string[] | null;
}

export interface EmulatorOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** Port; default 8080, 0 picks a free port. */
  port?: number;
  /** The orgs that exist. Empty or undefined: every syntactically valid org exists. */
  orgs?: readonly string[];
  /** The accepted tokens. Empty or undefined: any syntactically valid Bearer token is accepted. */
  tokens?: readonly TokenGrant[];
  /** Default 'spec'. */
  profile?: Profile;
  /** Seed of the fault PRNG; default: random (logged, so a run can be replayed). */
  seed?: number;
  faults?: Partial<FaultSettings>;
  /** Persist the store to this JSON file (atomic, coalesced writes) and load it at start. */
  dataFile?: string;
  /** Default: silent. */
  logger?: Logger;
  /** Wall clock in epoch milliseconds, for timestamps in the store; default Date.now. */
  now?: () => number;
  /** How injected latency is waited out; default a timer. Tests pass their own to hold a request. */
  sleep?: Sleep;
  /** Size of the recent-request ring buffer; default 1000. */
  requestLogSize?: number;
  /** The whole request head must arrive within this (slowloris protection); default 10 s. */
  headersTimeoutMs?: number;
  /** The whole request, body included, must arrive within this; default 30 s. */
  requestTimeoutMs?: number;
  /** Idle keep-alive connections are closed after this; default 5 s. */
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;
/** Largest accepted API request body: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Largest accepted admin request body (a whole store can be big). */
export const MAX_ADMIN_BODY_BYTES = 64 * 1024 * 1024;
/** Default timeouts of the server (`EmulatorOptions`). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Upper bound for every server timeout: one hour. */
export const MAX_TIMEOUT_MS = 3_600_000;
/** Upper bound for injected latency, so a typo cannot park a request for a day. */
export const MAX_LATENCY_MS = 600_000;

export const NO_FAULTS: FaultSettings = {
  latencyMs: { min: 0, max: 0 },
  failRate: 0,
  resetRate: 0,
  hangRate: 0,
  rateLimit: 0,
  listingExtra: {},
  listingOmitOrg: false,
  ignoredWrites: [],
};

/** A copy of per-org listing entries (each entry copied deeply, through JSON). */
function copyExtra(extra: FaultSettings['listingExtra']): FaultSettings['listingExtra'] {
  return JSON.parse(JSON.stringify(extra)) as FaultSettings['listingExtra'];
}

/** Returns complete fault settings: `NO_FAULTS` overlaid with `partial` (a fresh object). */
export function completeFaults(partial: Partial<FaultSettings> | undefined): FaultSettings {
  return {
    latencyMs: { ...(partial?.latencyMs ?? NO_FAULTS.latencyMs) },
    failRate: partial?.failRate ?? NO_FAULTS.failRate,
    resetRate: partial?.resetRate ?? NO_FAULTS.resetRate,
    hangRate: partial?.hangRate ?? NO_FAULTS.hangRate,
    rateLimit: partial?.rateLimit ?? NO_FAULTS.rateLimit,
    listingExtra: copyExtra(partial?.listingExtra ?? NO_FAULTS.listingExtra),
    listingOmitOrg: partial?.listingOmitOrg ?? NO_FAULTS.listingOmitOrg,
    ignoredWrites: [...(partial?.ignoredWrites ?? NO_FAULTS.ignoredWrites)],
  };
}
