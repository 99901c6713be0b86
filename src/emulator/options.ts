/**
 * The emulator's options, their defaults, and their check at start: the CLI has checked its flags
 * already; this guards library callers, so a bad option fails with a ConfigError naming it.
 */
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ConfigError } from '../runtime/errors.ts';
import { createLogger } from '../runtime/log.ts';
import { NO_FAULTS, patchFaults, type FaultSettings } from './faults.ts';
import { NAME_PATTERN } from './validation.ts';

/**
 * `spec` answers exactly what the contract shows; `kosli` answers as the production service does
 * today (docs/api-behaviour.md).
 */
export type Profile = 'spec' | 'kosli';
export const PROFILES: readonly Profile[] = ['spec', 'kosli'];

/**
 * Waits out injected latency and create holds: resolves after `ms`, or early once `signal` aborts
 * (the emulator is closing; it stops waiting then in any case).
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
  /** The orgs that exist. Empty or undefined: every org with a valid name exists. */
  orgs?: readonly string[];
  /** The accepted tokens. Empty or undefined: any well-formed Bearer token is accepted. */
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
  /** How injected waits are waited out; default a timer. Tests pass their own to hold a request. */
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
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Upper bound for every server timeout: one hour. */
export const MAX_TIMEOUT_MS = 3_600_000;

function whole(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`emulator: ${name} ${value} is not ${min}..${max}`);
  }
  return value;
}

/** An org the paths cannot name could never be reached. */
function orgName(org: string, what: string): string {
  if (!NAME_PATTERN.test(org)) {
    throw new ConfigError(`emulator: ${what} "${org}" does not match ${NAME_PATTERN.source}`);
  }
  return org;
}

/** A timer that also ends when `signal` aborts. */
const timerSleep: Sleep = (ms, signal) => sleep(ms, undefined, { signal }).catch(() => undefined);

/** The same token given twice gets the union of its grants; null (every org) wins. */
function resolveTokens(grants: readonly TokenGrant[]) {
  const tokens = new Map<string, ReadonlySet<string> | null>();
  for (const { token, orgs } of grants) {
    if (!/^\S+$/.test(token)) throw new ConfigError('emulator: a token is empty or has whitespace');
    const before = tokens.get(token);
    const limited = orgs?.map((org) => orgName(org, 'token org'));
    tokens.set(
      token,
      limited === undefined || before === null ? null : new Set([...(before ?? []), ...limited]),
    );
  }
  return tokens.size > 0 ? tokens : null;
}

/** Checks `options` and fills in the defaults; throws a ConfigError naming the first bad one. */
export function resolveOptions(options: EmulatorOptions) {
  const host = options.host ?? DEFAULT_HOST;
  if (host.trim() === '') throw new ConfigError('emulator: host must not be empty');
  const profile = options.profile ?? 'spec';
  if (!PROFILES.includes(profile)) {
    throw new ConfigError(`emulator: profile "${profile}" is not one of ${PROFILES.join(', ')}`);
  }
  const orgs = (options.orgs ?? []).map((org) => orgName(org, 'org'));
  const faults = patchFaults(options.faults ?? {}, NO_FAULTS);
  if (!faults.ok) {
    const problems = Object.entries(faults.errors).map(([key, reason]) => `${key} ${reason}`);
    throw new ConfigError(`emulator: invalid faults: ${problems.join('; ')}`);
  }
  const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // node:http refuses a head timeout longer than the whole-request timeout.
  if (headersTimeoutMs > requestTimeoutMs) {
    const text = `headersTimeoutMs ${headersTimeoutMs} is above requestTimeoutMs ${requestTimeoutMs}`;
    throw new ConfigError(`emulator: ${text}`);
  }
  const keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  return {
    host,
    port: whole('port', options.port ?? DEFAULT_PORT, 0, 65535),
    orgs: orgs.length > 0 ? new Set(orgs) : null,
    tokens: resolveTokens(options.tokens ?? []),
    profile,
    seed: whole('seed', options.seed ?? randomInt(0, 2 ** 32), 0, 0xffffffff),
    faults: faults.value.settings,
    dataFile: options.dataFile,
    logger: options.logger ?? createLogger('silent', process.stderr),
    now: options.now ?? Date.now,
    sleep: options.sleep ?? timerSleep,
    requestLogSize: whole('requestLogSize', options.requestLogSize ?? 1000, 1, 1_000_000),
    headersTimeoutMs: whole('headersTimeoutMs', headersTimeoutMs, 1, MAX_TIMEOUT_MS),
    requestTimeoutMs: whole('requestTimeoutMs', requestTimeoutMs, 1, MAX_TIMEOUT_MS),
    keepAliveTimeoutMs: whole('keepAliveTimeoutMs', keepAliveTimeoutMs, 1, MAX_TIMEOUT_MS),
  };
}

/** Every option with its default applied. */
export type ResolvedOptions = ReturnType<typeof resolveOptions>;
