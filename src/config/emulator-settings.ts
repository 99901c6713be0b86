/**
 * The emulator's own settings: part of the one settings table (see settings-table.ts), kept in
 * their own module because their defaults and checks come from the emulator, which only
 * `envsync emulator` (and `run --emulator`) should pay for loading. Flags only: no environment
 * variable or config file key. Bad values are usage errors naming the flag.
 */
import { parseDuration, formatDuration } from './duration.ts';
import { LOG_LEVELS } from './formats.ts';
import { texts, type Raw } from './parsers.ts';
import type { SettingsTable } from './setting.ts';
import { UsageError } from '../runtime/errors.ts';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  NAME_PATTERN,
  PROFILES,
  type FaultSettings,
  type Profile,
  type TokenGrant,
} from '../emulator/index.ts';

const MAX_LATENCY_MS = 600_000;

function word(raw: Raw, name: string): string {
  if (typeof raw !== 'string') throw new UsageError(`${name}: a value is needed`);
  return raw;
}

/** A whole number from `min` to `max`. */
function wholeNumber(max: number): (raw: Raw, name: string) => number {
  return (raw, name) => {
    const text = word(raw, name);
    if (!/^\d+$/.test(text.trim()))
      throw new UsageError(`${name}: "${text}" is not a whole number`);
    const value = Number(text);
    if (value > max) throw new UsageError(`${name}: ${value} is out of range (0 to ${max})`);
    return value;
  };
}

/** A plain decimal (`0.25`, `.5`, `3`): not `0x1`, `1e-1`, `Infinity` or blank, which Number() reads. */
const DECIMAL = /^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*$/;

/** A probability from 0 to 1. */
function rate(raw: Raw, name: string): number {
  const text = word(raw, name);
  const value = Number(text);
  if (!DECIMAL.test(text) || value < 0 || value > 1) {
    throw new UsageError(`${name}: "${text}" must be a number from 0 to 1`);
  }
  return value;
}

function rateLimit(raw: Raw, name: string): number {
  const text = word(raw, name);
  const value = Number(text);
  if (!DECIMAL.test(text) || value < 0 || value > 1_000_000) {
    throw new UsageError(`${name}: "${text}" must be a number of requests per second (0 = off)`);
  }
  return value;
}

/** A positive duration (`500ms`, `10s`, `1m`) of at most one hour, in milliseconds. */
function timeout(raw: Raw, name: string): number {
  const text = word(raw, name);
  const ms = parseDuration(text);
  if (ms === undefined || ms < 1 || ms > MAX_TIMEOUT_MS) {
    throw new UsageError(`${name}: "${text}" must be a duration from 1ms to 1h (e.g. 500ms, 10s)`);
  }
  return ms;
}

function choice<const T extends string>(allowed: readonly T[]): (raw: Raw, name: string) => T {
  return (raw, name) => {
    const found = allowed.find((value) => value === raw);
    if (found === undefined) {
      throw new UsageError(`${name}: "${String(raw)}" is not one of ${allowed.join(', ')}`);
    }
    return found;
  };
}

/** Org names by the emulator's name rule (the service's rule for environment names). */
const ORG_NAME = NAME_PATTERN;

function orgNames(raw: Raw, name: string): readonly string[] {
  return texts(raw, name).map((org) => {
    if (!ORG_NAME.test(org)) {
      throw new UsageError(`${name}: "${org}" is not an organization name (${ORG_NAME.source})`);
    }
    return org;
  });
}

/**
 * `TOKEN` or `TOKEN=org1,org2`. The split is at the last "=" followed by a valid org list, so a
 * token ending in base64 padding ("abc==") stays whole.
 */
export function parseTokenFlag(raw: string): TokenGrant {
  const mark = raw.lastIndexOf('=');
  const orgList = mark < 0 ? '' : raw.slice(mark + 1);
  const limited = orgList !== '' && orgList.split(',').every((org) => ORG_NAME.test(org));
  const token = limited ? raw.slice(0, mark) : raw;
  if (!/^\S+$/.test(token)) {
    throw new UsageError(`--token: the token must not be empty or contain spaces`);
  }
  return { token, orgs: limited ? orgList.split(',') : null };
}

/** `NAME` (every org, `*`) or `ORG/NAME`: an org and the environment its listing shows as a placeholder. */
export function parsePlaceholder(raw: string): [string, string] {
  const [org = '', name = '', ...rest] = raw.includes('/') ? raw.split('/') : ['*', raw];
  if (rest.length > 0 || !(org === '*' || ORG_NAME.test(org)) || !ORG_NAME.test(name)) {
    throw new UsageError(
      `--fault-placeholder: "${raw}" is not NAME or ORG/NAME (${ORG_NAME.source})`,
    );
  }
  return [org, name];
}

/** `MS` or `MIN-MAX`, whole milliseconds. */
export function parseLatency(raw: string): FaultSettings['latencyMs'] {
  const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(raw);
  if (match === null) {
    throw new UsageError(`--latency: "${raw}" is not MS or MIN-MAX (whole milliseconds)`);
  }
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : Number(match[2]);
  if (min > max) throw new UsageError(`--latency: minimum ${min} is above maximum ${max}`);
  if (max > MAX_LATENCY_MS) throw new UsageError(`--latency: ${max} is above ${MAX_LATENCY_MS} ms`);
  return { min, max };
}

/** The emulator's settings; ids are distinct from those of settings-table.ts. */
export const EMULATOR_SETTINGS = {
  host: {
    flag: 'host',
    type: 'string',
    value: 'HOST',
    commands: ['emulator'],
    group: 'server',
    help: 'interface to listen on',
    parse: (raw: Raw, name: string) => {
      const host = word(raw, name);
      if (host.trim() === '') throw new UsageError(`${name}: must not be empty`);
      return host;
    },
    default: DEFAULT_HOST,
  },
  port: {
    flag: 'port',
    type: 'string',
    value: 'PORT',
    commands: ['emulator'],
    group: 'server',
    help: 'port; 0 picks a free one (read it from the "listening on" line)',
    parse: wholeNumber(65535),
    default: String(DEFAULT_PORT),
  },
  dataFile: {
    flag: 'data',
    type: 'string',
    value: 'FILE',
    commands: ['emulator'],
    group: 'server',
    help: 'persist the store in FILE (loaded at start, written atomically)',
    parse: word,
    defaultText: 'in memory',
  },
  headersTimeoutMs: {
    flag: 'headers-timeout',
    type: 'string',
    value: 'DURATION',
    commands: ['emulator'],
    group: 'server',
    help: 'the request head must arrive within this (1ms to 1h), else 408',
    parse: timeout,
    default: formatDuration(DEFAULT_HEADERS_TIMEOUT_MS),
  },
  requestTimeoutMs: {
    flag: 'request-timeout',
    type: 'string',
    value: 'DURATION',
    commands: ['emulator'],
    group: 'server',
    help: 'the whole request, body included, must arrive within this (at least --headers-timeout), else 408',
    parse: timeout,
    defaultText: `${formatDuration(DEFAULT_REQUEST_TIMEOUT_MS)}, or --headers-timeout if longer`,
  },
  emulatorOrgs: {
    flag: 'org',
    type: 'string',
    repeatable: true,
    value: 'NAME',
    commands: ['emulator'],
    group: 'access',
    help: 'an organization that exists',
    parse: orgNames,
    default: [],
    defaultText: 'every org exists',
  },
  tokens: {
    flag: 'token',
    type: 'string',
    repeatable: true,
    value: 'TOKEN[=ORGS]',
    commands: ['emulator'],
    group: 'access',
    help: 'an accepted Bearer token, optionally limited to the comma-separated ORGS',
    parse: (raw: Raw, name: string) => texts(raw, name).map(parseTokenFlag),
    default: [],
    defaultText: 'any well-formed token',
  },
  profile: {
    flag: 'profile',
    type: 'string',
    value: 'NAME',
    commands: ['emulator'],
    group: 'access',
    help: 'spec (answers as the spec shows) or kosli (as the production service does)',
    parse: choice<Profile>(PROFILES),
    default: 'spec',
  },
  seed: {
    flag: 'seed',
    type: 'string',
    value: 'N',
    commands: ['emulator'],
    group: 'faults',
    help: 'seed of the fault injection PRNG (0 to 4294967295)',
    parse: wholeNumber(0xffffffff),
    defaultText: 'random, logged',
  },
  latency: {
    flag: 'latency',
    type: 'string',
    value: 'MS|MIN-MAX',
    commands: ['emulator'],
    group: 'faults',
    help: 'added delay per API request, drawn from MIN..MAX milliseconds',
    parse: (raw: Raw, name: string) => parseLatency(word(raw, name)),
    defaultText: '0',
  },
  failRate: {
    flag: 'fail-rate',
    type: 'string',
    value: 'P',
    commands: ['emulator'],
    group: 'faults',
    help: 'share of API requests answered 503 (0 to 1)',
    parse: rate,
    defaultText: '0',
  },
  resetRate: {
    flag: 'reset-rate',
    type: 'string',
    value: 'P',
    commands: ['emulator'],
    group: 'faults',
    help: 'share of API requests whose connection is dropped (0 to 1)',
    parse: rate,
    defaultText: '0',
  },
  hangRate: {
    flag: 'hang-rate',
    type: 'string',
    value: 'P',
    commands: ['emulator'],
    group: 'faults',
    help: 'share of API requests never answered (0 to 1)',
    parse: rate,
    defaultText: '0',
  },
  rateLimit: {
    flag: 'rate-limit',
    type: 'string',
    value: 'RPS',
    commands: ['emulator'],
    group: 'faults',
    help: 'API requests per second (token bucket); over it: 429',
    parse: rateLimit,
    defaultText: '0, off',
  },
  placeholders: {
    flag: 'fault-placeholder',
    type: 'string',
    repeatable: true,
    value: '[ORG/]NAME',
    commands: ['emulator'],
    group: 'faults',
    help: "the listing shows the service's placeholder in place of environment NAME (of ORG; else of every org)",
    parse: (raw: Raw, name: string) => texts(raw, name).map(parsePlaceholder),
    default: [],
    defaultText: 'none',
  },
  emulatorLogLevel: {
    flag: 'log-level',
    type: 'string',
    value: 'LEVEL',
    commands: ['emulator'],
    group: 'general',
    help: 'fatal, error, warn, info, debug (one line per request), trace or silent',
    parse: choice(LOG_LEVELS),
    default: 'info',
  },
} as const satisfies SettingsTable;
