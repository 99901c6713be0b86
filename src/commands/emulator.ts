/** `envsync emulator`: the emulator until SIGTERM or SIGINT; its flags have no variable or key. */
import { formatDuration } from '../config/duration.ts';
import { durationMs, integer, LIST, oneOf, parser, text, texts } from '../config/parsers.ts';
import {
  resolveValues,
  type Flags,
  type GROUPS,
  type Raw,
  type SettingsTable,
} from '../config/setting.ts';
import { LOG_LEVELS, SETTINGS } from '../config/settings.ts';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  NAME_PATTERN,
  MAX_TIMEOUT_MS,
  PROFILES,
  startEmulator,
  type FaultSettings,
  type TokenGrant,
} from '../emulator/index.ts';
import { ConfigError, errorMessage } from '../runtime/errors.ts';
import { createLogger } from '../runtime/log.ts';
import { logOutput, type CommandContext } from './context.ts';
import { handleStopSignals } from './signals.ts';

/** `TOKEN` or `TOKEN=org1,org2`: a token ending in base64 padding ("abc==") stays whole. */
export function parseTokenFlag(raw: string): TokenGrant {
  const mark = raw.lastIndexOf('=');
  const orgList = mark < 0 ? '' : raw.slice(mark + 1);
  const limited = orgList !== '' && orgList.split(',').every((org) => NAME_PATTERN.test(org));
  const token = limited ? raw.slice(0, mark) : raw;
  if (!/^\S+$/.test(token))
    throw new ConfigError(`--token: the token must not be empty or contain spaces`);
  return { token, orgs: limited ? orgList.split(',') : null };
}

/** `NAME` (every org: `*`) or `ORG/NAME`: an environment its listing shows as a placeholder. */
export function parsePlaceholder(raw: string): [string, string] {
  const [org = '', name = '', ...rest] = raw.includes('/') ? raw.split('/') : ['*', raw];
  if (rest.length > 0 || !(org === '*' || NAME_PATTERN.test(org)) || !NAME_PATTERN.test(name)) {
    throw new ConfigError(
      `--fault-placeholder: "${raw}" is not NAME or ORG/NAME (${NAME_PATTERN.source})`,
    );
  }
  return [org, name];
}

/** `MS` or `MIN-MAX`, whole milliseconds. */
export function parseLatency(raw: string): FaultSettings['latencyMs'] {
  const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(raw);
  if (match === null)
    throw new ConfigError(`--latency: "${raw}" is not MS or MIN-MAX (whole milliseconds)`);
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : Number(match[2]);
  if (min > max) throw new ConfigError(`--latency: minimum ${min} is above maximum ${max}`);
  if (max > 600_000) throw new ConfigError(`--latency: ${max} is above 600000 ms`);
  return { min, max };
}

/** A plain decimal from 0 to `max` (`0.25`, `.5`, `3`; not `0x1`, `1e-1`, `Infinity` or blank). */
function decimal(max: number, what: string) {
  return (raw: Raw, name: string): number => {
    const value = Number(raw);
    if (typeof raw !== 'string' || !/^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*$/.test(raw) || value > max)
      throw new ConfigError(`${name}: ${JSON.stringify(raw)} must be ${what}`);
    return value;
  };
}

function host(raw: Raw, name: string): string {
  const given = text(raw, name);
  if (given.trim() === '') throw new ConfigError(`${name}: must not be empty`);
  return given;
}

const orgNames = parser(
  (raw, name) =>
    texts(raw, name).map((org) => {
      if (!NAME_PATTERN.test(org)) {
        throw new ConfigError(
          `${name}: "${org}" is not an organization name (${NAME_PATTERN.source})`,
        );
      }
      return org;
    }),
  LIST,
);
const tokenGrants = parser((raw, name) => texts(raw, name).map(parseTokenFlag), LIST);
const placeholderList = parser((raw, name) => texts(raw, name).map(parsePlaceholder), LIST);
const latency = (raw: Raw, name: string) => parseLatency(text(raw, name));
const requestRate = decimal(1_000_000, 'a number of requests per second (0 = off)');

/** A flag of this command, in its help's `group`. */
const flagIn = <const G extends keyof typeof GROUPS, const F extends string>(group: G, flag: F) =>
  ({ flag, commands: ['emulator'], group }) as const;

/** A fault that meets a share of the API requests, none by default. */
const share = <const F extends string>(flag: F, what: string) =>
  ({
    ...flagIn('faults', flag),
    help: `share of API requests ${what} (0 to 1)`,
    parse: decimal(1, 'a number from 0 to 1'),
    defaultText: '0',
  }) as const;

export const settings = {
  host: {
    ...flagIn('server', '--host HOST'),
    help: 'interface to listen on',
    parse: host,
    default: DEFAULT_HOST,
  },
  port: {
    ...flagIn('server', '--port PORT'),
    help: 'port; 0 picks a free one (read it from the "listening on" line)',
    parse: integer(0, 65535),
    default: String(DEFAULT_PORT),
  },
  dataFile: {
    ...flagIn('server', '--data FILE'),
    help: 'persist the store in FILE (loaded at start, written atomically)',
    parse: text,
    defaultText: 'in memory',
  },
  headersTimeoutMs: {
    ...flagIn('server', '--headers-timeout DURATION'),
    help: 'the request head must arrive within this (1ms to 1h), else 408',
    parse: durationMs(MAX_TIMEOUT_MS),
    default: formatDuration(DEFAULT_HEADERS_TIMEOUT_MS),
  },
  requestTimeoutMs: {
    ...flagIn('server', '--request-timeout DURATION'),
    help: 'the whole request, body included, must arrive within this (at least --headers-timeout), else 408',
    parse: durationMs(MAX_TIMEOUT_MS),
    defaultText: `${formatDuration(DEFAULT_REQUEST_TIMEOUT_MS)}, or --headers-timeout if longer`,
  },
  emulatorOrgs: {
    ...flagIn('access', '--org NAME'),
    help: 'an organization that exists',
    parse: orgNames,
    default: [],
    defaultText: 'every org exists',
  },
  tokens: {
    ...flagIn('access', '--token TOKEN[=ORGS]'),
    help: 'an accepted Bearer token, optionally limited to the comma-separated ORGS',
    parse: tokenGrants,
    default: [],
    defaultText: 'any well-formed token',
  },
  profile: {
    ...flagIn('access', '--profile NAME'),
    help: 'spec (answers as the spec shows) or kosli (as the production service does)',
    parse: oneOf(PROFILES),
    default: 'spec',
  },
  seed: {
    ...flagIn('faults', '--seed N'),
    help: 'seed of the fault injection PRNG (0 to 4294967295)',
    parse: integer(0, 0xffffffff),
    defaultText: 'random, logged',
  },
  latency: {
    ...flagIn('faults', '--latency MS|MIN-MAX'),
    help: 'added delay per API request, drawn from MIN..MAX milliseconds',
    parse: latency,
    defaultText: '0',
  },
  failRate: share('--fail-rate P', 'answered 503'),
  resetRate: share('--reset-rate P', 'whose connection is dropped'),
  hangRate: share('--hang-rate P', 'never answered'),
  rateLimit: {
    ...flagIn('faults', '--rate-limit RPS'),
    help: 'API requests per second (token bucket); over it: 429',
    parse: requestRate,
    defaultText: '0, off',
  },
  placeholders: {
    ...flagIn('faults', '--fault-placeholder [ORG/]NAME'),
    help: "the listing shows the service's placeholder in place of environment NAME (of ORG; else of every org)",
    parse: placeholderList,
    default: [],
    defaultText: 'none',
  },
  emulatorLogLevel: {
    ...flagIn('general', '--log-level LEVEL'),
    help: 'fatal, error, warn, info, debug (one line per request), trace or silent',
    parse: oneOf(LOG_LEVELS),
    default: 'info',
  },
} as const satisfies SettingsTable;

/** `envsync emulator`. */
export async function run(ctx: CommandContext, flags: Flags): Promise<number> {
  const options = resolveValues(settings, { flags, env: ctx.env });
  const { latency: latencyMs, failRate, resetRate, hangRate, rateLimit } = options;
  const rates = { latencyMs, failRate, resetRate, hangRate, rateLimit };
  const given = Object.entries(rates).filter(([, value]) => value !== undefined);
  const placeholders: Record<string, string[]> = {};
  for (const [org, name] of options.placeholders) (placeholders[org] ??= []).push(name);
  const faults = { ...(Object.fromEntries(given) as Partial<FaultSettings>), placeholders };
  const headersTimeoutMs = options.headersTimeoutMs;
  const requestTimeoutMs =
    options.requestTimeoutMs ?? Math.max(DEFAULT_REQUEST_TIMEOUT_MS, headersTimeoutMs);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `--headers-timeout: ${headersTimeoutMs} ms is longer than --request-timeout (${requestTimeoutMs} ms)`,
    );
  }
  const { logFormat } = resolveValues({ logFormat: SETTINGS.logFormat }, { flags, env: ctx.env });
  const level = options.emulatorLogLevel;
  const { output } = logOutput(ctx, { logLevel: level, logFormat }, { oneShot: false });
  const logger = createLogger(level, ctx.stderr, { name: 'envsync-emulator' }, output);

  // Before anything a supervisor may wait for: from then on, a signal stops it gracefully.
  const signals = handleStopSignals();
  const emulator = await startEmulator({
    host: options.host,
    port: options.port,
    orgs: options.emulatorOrgs,
    tokens: options.tokens,
    profile: options.profile,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    faults,
    ...(options.dataFile === undefined ? {} : { dataFile: options.dataFile }),
    headersTimeoutMs,
    requestTimeoutMs,
    logger,
  }).catch((error: unknown) => {
    signals.dispose();
    throw error;
  });
  ctx.stdout.write(`listening on ${emulator.url}\n`);

  const signal = await signals.stopped;
  logger.info({ signal }, 'signal received');
  try {
    await emulator.close();
  } catch (error) {
    ctx.stderr.write(`envsync emulator: shutdown failed: ${errorMessage(error)}\n`);
    return 1;
  }
  return 0;
}
