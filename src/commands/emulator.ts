/**
 * `envsync emulator`: runs the Environments API emulator until SIGTERM or SIGINT (issue 2).
 * The first stdout line is exactly `listening on http://HOST:PORT`; logs go to stderr.
 */
import type { ParseArgsOptionsConfig } from 'node:util';
import { pino } from 'pino';
import type { LevelWithSilent } from 'pino';
import { UsageError, errorMessage } from '../errors.ts';
import { parseDuration } from '../config/duration.ts';
import { startEmulator } from '../emulator/index.ts';
import type { FaultSettings, Profile, TokenGrant } from '../emulator/index.ts';
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  PROFILES,
} from '../emulator/index.ts';
import { parseFlags, parseInteger, parseRate } from './args.ts';
import type { CommandContext } from './context.ts';

const USAGE = `Usage: envsync emulator [flags]

Runs a local emulator of the Environments API. Its first line on stdout is
"listening on http://HOST:PORT"; logs go to stderr. SIGTERM or SIGINT stop it
gracefully (a second signal stops it at once).

Flags:
  --host HOST          interface to listen on (default ${DEFAULT_HOST})
  --port PORT          port (default ${DEFAULT_PORT}; 0 picks a free port)
  --org NAME           an organization that exists; repeatable (none: every org exists)
  --token TOKEN[=ORGS] an accepted Bearer token, optionally limited to the comma-separated
                       ORGS; repeatable (none: any well-formed token is accepted)
  --profile NAME       spec (default: answers as the spec shows) or kosli (as production does)
  --seed N             seed of the fault injection PRNG (default: random, logged)
  --latency MS|MIN-MAX added delay per API request, in milliseconds
  --fail-rate P        share of API requests answered 503 (0 to 1)
  --reset-rate P       share of API requests whose connection is dropped (0 to 1)
  --hang-rate P        share of API requests never answered (0 to 1)
  --rate-limit RPS     API requests per second (token bucket); over it: 429 (0 = off)
  --data FILE          persist the store in FILE (loaded at start, written atomically)
  --headers-timeout DURATION
                       the request head must arrive within this (default ${DEFAULT_HEADERS_TIMEOUT_MS / 1000}s; e.g. 500ms)
  --request-timeout DURATION
                       the whole request must arrive within this (default ${DEFAULT_REQUEST_TIMEOUT_MS / 1000}s)
  --log-level LEVEL    fatal, error, warn, info (default), debug, trace or silent
  -h, --help           show this help`;

/** What a usage error prints: short, pointing at --help. */
const SHORT_USAGE = `Usage: envsync emulator [--host HOST] [--port PORT] [--org NAME]... [--token TOKEN[=ORGS]]...
                        [--profile spec|kosli] [--seed N] [--latency MS|MIN-MAX] [--fail-rate P]
                        [--reset-rate P] [--hang-rate P] [--rate-limit RPS] [--data FILE]
                        [--headers-timeout DURATION] [--request-timeout DURATION]
                        [--log-level LEVEL]
Run "envsync emulator --help" for details.`;

const FLAGS = {
  host: { type: 'string' },
  port: { type: 'string' },
  org: { type: 'string', multiple: true },
  token: { type: 'string', multiple: true },
  profile: { type: 'string' },
  seed: { type: 'string' },
  latency: { type: 'string' },
  'fail-rate': { type: 'string' },
  'reset-rate': { type: 'string' },
  'hang-rate': { type: 'string' },
  'rate-limit': { type: 'string' },
  data: { type: 'string' },
  'headers-timeout': { type: 'string' },
  'request-timeout': { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsOptionsConfig;

const LOG_LEVELS: readonly LevelWithSilent[] = [
  'fatal',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  'silent',
];
const MAX_LATENCY_MS = 600_000;
/** The emulator's own org rule, repeated here so a bad flag is a usage error naming the flag. */
const ORG_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function isLevel(value: string): value is LevelWithSilent {
  return LOG_LEVELS.some((level) => level === value);
}

function isProfile(value: string): value is Profile {
  return PROFILES.some((profile) => profile === value);
}

function parseOrg(flag: string, raw: string): string {
  if (!ORG_NAME.test(raw)) {
    throw new UsageError(`--${flag}: "${raw}" is not an organization name (${ORG_NAME.source})`);
  }
  return raw;
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

function parseRateLimit(raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1_000_000) {
    throw new UsageError(
      `--rate-limit: "${raw}" must be a number of requests per second (0 = off)`,
    );
  }
  return value;
}

/** A positive duration (`500ms`, `10s`, `1m`) of at most one hour, in milliseconds. */
export function parseTimeoutFlag(flag: string, raw: string): number {
  const ms = parseDuration(raw);
  if (ms === undefined || ms < 1 || ms > MAX_TIMEOUT_MS) {
    throw new UsageError(
      `--${flag}: "${raw}" must be a duration from 1ms to 1h (e.g. 500ms, 10s)`,
      SHORT_USAGE,
    );
  }
  return ms;
}

/** Resolves on the first SIGTERM or SIGINT; after it, a second signal kills the process. */
function firstSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

/** `envsync emulator`. */
export async function emulatorCommand(ctx: CommandContext): Promise<number> {
  const { values } = parseFlags(ctx.argv, FLAGS, SHORT_USAGE);
  if (values.help === true) {
    ctx.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const level = values['log-level'] ?? 'info';
  if (!isLevel(level)) {
    throw new UsageError(
      `--log-level: "${level}" is not one of ${LOG_LEVELS.join(', ')}`,
      SHORT_USAGE,
    );
  }
  const profile = values.profile ?? 'spec';
  if (!isProfile(profile)) {
    throw new UsageError(
      `--profile: "${profile}" is not one of ${PROFILES.join(', ')}`,
      SHORT_USAGE,
    );
  }
  const host = values.host ?? DEFAULT_HOST;
  if (host.trim() === '') throw new UsageError('--host: must not be empty');
  const faults: Partial<FaultSettings> = {};
  if (values.latency !== undefined) faults.latencyMs = parseLatency(values.latency);
  if (values['fail-rate'] !== undefined)
    faults.failRate = parseRate('fail-rate', values['fail-rate']);
  if (values['reset-rate'] !== undefined) {
    faults.resetRate = parseRate('reset-rate', values['reset-rate']);
  }
  if (values['hang-rate'] !== undefined)
    faults.hangRate = parseRate('hang-rate', values['hang-rate']);
  if (values['rate-limit'] !== undefined) faults.rateLimit = parseRateLimit(values['rate-limit']);
  const headersTimeoutMs =
    values['headers-timeout'] === undefined
      ? DEFAULT_HEADERS_TIMEOUT_MS
      : parseTimeoutFlag('headers-timeout', values['headers-timeout']);
  const requestTimeoutMs =
    values['request-timeout'] === undefined
      ? Math.max(DEFAULT_REQUEST_TIMEOUT_MS, headersTimeoutMs)
      : parseTimeoutFlag('request-timeout', values['request-timeout']);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new UsageError(
      `--headers-timeout: ${headersTimeoutMs} ms is longer than --request-timeout (${requestTimeoutMs} ms)`,
      SHORT_USAGE,
    );
  }

  const logger = pino(
    {
      level,
      base: { name: 'envsync-emulator' },
      // Tokens must never reach a log line, whatever a future log call passes in.
      redact: {
        paths: [
          'authorization',
          'headers.authorization',
          'req.headers.authorization',
          'request.headers.authorization',
          '*.headers.authorization',
          'token',
          'tokens',
        ],
        censor: '[redacted]',
      },
    },
    pino.destination({ dest: 2, sync: true }),
  );

  const emulator = await startEmulator({
    host,
    port:
      values.port === undefined ? DEFAULT_PORT : parseInteger('port', values.port, { max: 65535 }),
    orgs: (values.org ?? []).map((org) => parseOrg('org', org)),
    tokens: (values.token ?? []).map(parseTokenFlag),
    profile,
    ...(values.seed === undefined
      ? {}
      : { seed: parseInteger('seed', values.seed, { max: 0xffffffff }) }),
    faults,
    ...(values.data === undefined ? {} : { dataFile: values.data }),
    headersTimeoutMs,
    requestTimeoutMs,
    logger,
  });
  const stopped = firstSignal();
  ctx.stdout.write(`listening on ${emulator.url}\n`);

  const signal = await stopped;
  logger.info({ signal }, 'signal received');
  try {
    await emulator.close();
  } catch (error) {
    ctx.stderr.write(`envsync emulator: shutdown failed: ${errorMessage(error)}\n`);
    return 1;
  }
  return 0;
}
