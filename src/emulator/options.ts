/** The emulator's options, their defaults and their check (for library callers: a ConfigError). */
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ConfigError } from '../runtime/errors.ts';
import { createLogger } from '../runtime/log.ts';
import { NO_FAULTS, patchFaults, type FaultSettings } from './faults.ts';
import { NAME_PATTERN } from './validation.ts';

/** `spec`: what the contract shows; `kosli`: the service today (docs/api-behaviour.md). */
export type Profile = 'spec' | 'kosli';
export const PROFILES: readonly Profile[] = ['spec', 'kosli'];

/** Waits out injected latency and create holds: `ms`, or less once `signal` aborts (closing). */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;
export type TokenGrant = { token: string; orgs: readonly string[] | null };

/** The options of `startEmulator`, as docs/emulator.md describes the flags they mirror. */
export interface EmulatorOptions {
  host?: string;
  port?: number;
  /** The orgs that exist. None: every org with a valid name exists. */
  orgs?: readonly string[];
  /** The accepted tokens. None: any well-formed Bearer token is accepted. */
  tokens?: readonly TokenGrant[];
  profile?: Profile;
  /** Seed of the fault PRNG; default: random (logged, so a run can be replayed). */
  seed?: number;
  faults?: Partial<FaultSettings>;
  dataFile?: string;
  logger?: Logger;
  /** Wall clock in epoch milliseconds, for timestamps in the store. */
  now?: () => number;
  /** How injected waits are waited out; default a timer. Tests pass their own to hold a request. */
  sleep?: Sleep;
  requestLogSize?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const MAX_TIMEOUT_MS = 3_600_000;

function whole(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new ConfigError(`emulator: ${name} ${value} is not ${min}..${max}`);
  return value;
}

/** An org the paths cannot name could never be reached. */
function orgName(org: string, what: string): string {
  if (!NAME_PATTERN.test(org))
    throw new ConfigError(`emulator: ${what} "${org}" does not match ${NAME_PATTERN.source}`);
  return org;
}

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

export function resolveOptions(options: EmulatorOptions) {
  const host = options.host ?? DEFAULT_HOST;
  if (host.trim() === '') throw new ConfigError('emulator: host must not be empty');
  const profile = options.profile ?? 'spec';
  if (!PROFILES.includes(profile))
    throw new ConfigError(`emulator: profile "${profile}" is not one of ${PROFILES.join(', ')}`);
  const orgs = (options.orgs ?? []).map((org) => orgName(org, 'org'));
  const faults = patchFaults(options.faults ?? {}, NO_FAULTS);
  if (!faults.ok) {
    const problems = Object.entries(faults.errors).map(([key, reason]) => `${key} ${reason}`);
    throw new ConfigError(`emulator: invalid faults: ${problems.join('; ')}`);
  }
  type Timeout = 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs';
  const timeout = (name: Timeout, fallback: number) =>
    whole(name, options[name] ?? fallback, 1, MAX_TIMEOUT_MS);
  const headersTimeoutMs = timeout('headersTimeoutMs', DEFAULT_HEADERS_TIMEOUT_MS);
  const requestTimeoutMs = timeout('requestTimeoutMs', DEFAULT_REQUEST_TIMEOUT_MS);
  // node:http refuses a head timeout longer than the whole-request timeout.
  if (headersTimeoutMs > requestTimeoutMs) {
    const text = `headersTimeoutMs ${headersTimeoutMs} is above requestTimeoutMs ${requestTimeoutMs}`;
    throw new ConfigError(`emulator: ${text}`);
  }
  const sleepFor: Sleep = (ms, signal) => sleep(ms, undefined, { signal }).catch(() => undefined);
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
    sleep: options.sleep ?? sleepFor,
    requestLogSize: whole('requestLogSize', options.requestLogSize ?? 1000, 1, 1_000_000),
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: timeout('keepAliveTimeoutMs', 5_000),
  };
}
