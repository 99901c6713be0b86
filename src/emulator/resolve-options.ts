/**
 * `EmulatorOptions` checked and completed. The CLI has checked its flags already; this guards
 * library callers, so a bad option fails at start with a ConfigError naming it.
 */
import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import { ConfigError } from '../runtime/errors.ts';
import { createLogger } from '../runtime/log.ts';
import { orgPatternFor } from './names.ts';
import type { EmulatorOptions, FaultSettings, Profile, Sleep } from './options.ts';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  NO_FAULTS,
  PROFILES,
} from './options.ts';
import { validateFaultPatch } from './validate-fault-patch.ts';

/** Every option with its default applied. */
export interface ResolvedOptions {
  readonly host: string;
  readonly port: number;
  /** null: every org exists. */
  readonly orgs: ReadonlySet<string> | null;
  /** null: any well-formed token; a token's set null: every org. */
  readonly tokens: ReadonlyMap<string, ReadonlySet<string> | null> | null;
  readonly profile: Profile;
  readonly seed: number;
  readonly faults: FaultSettings;
  readonly dataFile: string | undefined;
  readonly logger: Logger;
  readonly now: () => number;
  readonly sleep: Sleep;
  readonly requestLogSize: number;
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
}

function isWhole(value: number, min: number, max: number): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}

/** A timer that also ends when `signal` aborts. */
function timerSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const wake = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    signal.addEventListener('abort', wake, { once: true });
  });
}

function resolveTokens(
  grants: EmulatorOptions['tokens'],
  orgPattern: RegExp,
): Map<string, ReadonlySet<string> | null> | null {
  if (grants === undefined || grants.length === 0) return null;
  const tokens = new Map<string, ReadonlySet<string> | null>();
  for (const grant of grants) {
    if (!/^\S+$/.test(grant.token))
      throw new ConfigError('emulator: a token is empty or has whitespace');
    for (const org of grant.orgs ?? []) {
      if (!orgPattern.test(org)) {
        throw new ConfigError(`emulator: token org "${org}" does not match ${orgPattern.source}`);
      }
    }
    // The same token given twice gets the union of its grants; null (all orgs) wins.
    const before = tokens.get(grant.token);
    if (grant.orgs === null || before === null) tokens.set(grant.token, null);
    else tokens.set(grant.token, new Set([...(before ?? []), ...grant.orgs]));
  }
  return tokens;
}

function resolveTimeouts(
  options: EmulatorOptions,
): Pick<ResolvedOptions, 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs'> {
  const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  for (const [name, value] of [
    ['headersTimeoutMs', headersTimeoutMs],
    ['requestTimeoutMs', requestTimeoutMs],
    ['keepAliveTimeoutMs', keepAliveTimeoutMs],
  ] as const) {
    if (!isWhole(value, 1, MAX_TIMEOUT_MS))
      throw new ConfigError(`emulator: ${name} ${value} is not 1..${MAX_TIMEOUT_MS}`);
  }
  // node:http refuses a head timeout longer than the whole-request timeout.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `emulator: headersTimeoutMs ${headersTimeoutMs} is above requestTimeoutMs ${requestTimeoutMs}`,
    );
  }
  return { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs };
}

/** Checks `options` and fills in the defaults; throws a ConfigError naming the first bad one. */
export function resolveOptions(options: EmulatorOptions): ResolvedOptions {
  const host = options.host ?? DEFAULT_HOST;
  if (host.trim() === '') throw new ConfigError('emulator: host must not be empty');
  const port = options.port ?? DEFAULT_PORT;
  if (!isWhole(port, 0, 65535)) throw new ConfigError(`emulator: port ${port} is not 0..65535`);
  const profile = options.profile ?? 'spec';
  if (!PROFILES.includes(profile)) {
    throw new ConfigError(`emulator: profile "${profile}" is not one of ${PROFILES.join(', ')}`);
  }
  // An org the profile's paths cannot name could never be reached.
  const orgPattern = orgPatternFor(profile);
  for (const org of options.orgs ?? []) {
    if (!orgPattern.test(org))
      throw new ConfigError(`emulator: org "${org}" does not match ${orgPattern.source}`);
  }
  const orgs = options.orgs !== undefined && options.orgs.length > 0 ? new Set(options.orgs) : null;
  const tokens = resolveTokens(options.tokens, orgPattern);
  const seed = options.seed ?? randomInt(0, 2 ** 32);
  if (!isWhole(seed, 0, 0xffffffff))
    throw new ConfigError(`emulator: seed ${seed} is not 0..4294967295`);
  const faults = validateFaultPatch(options.faults ?? {}, NO_FAULTS);
  if (!faults.ok) {
    const problems = Object.entries(faults.errors).map(([key, reason]) => `${key} ${reason}`);
    throw new ConfigError(`emulator: invalid faults: ${problems.join('; ')}`);
  }
  const requestLogSize = options.requestLogSize ?? 1000;
  if (!isWhole(requestLogSize, 1, 1_000_000)) {
    throw new ConfigError(`emulator: requestLogSize ${requestLogSize} is not 1..1000000`);
  }
  return {
    host,
    port,
    orgs,
    tokens,
    profile,
    seed,
    faults: faults.value.settings,
    dataFile: options.dataFile,
    logger: options.logger ?? createLogger('silent', process.stderr),
    now: options.now ?? Date.now,
    sleep: options.sleep ?? timerSleep,
    requestLogSize,
    ...resolveTimeouts(options),
  };
}
