import pino, { type Logger } from 'pino';
import { createRequire } from 'node:module';
import type pretty from 'pino-pretty';
import type { Writable } from 'node:stream';
import type { Scrub } from './core/redact.ts';

/** Paths pino blanks out, wherever a header object or a token might be logged. */
export const REDACT_PATHS = [
  'authorization',
  'token',
  'tokens',
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
];

/** What pino writes in place of a redacted value. */
export const CENSOR = '[REDACTED]';

/**
 * Wraps an output stream so that no secret ever passes through it, whatever code wrote it:
 * the last line of defence behind scrubbing at capture and pino's redaction. `scrub` finds
 * secrets in every encoded form (see src/core/redact.ts).
 */
export function redactingStream<T extends Writable>(target: T, scrub: Scrub): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      if (property === 'write') {
        return (chunk: unknown, ...rest: unknown[]) =>
          (object.write as (...args: unknown[]) => boolean).call(
            object,
            typeof chunk === 'string'
              ? scrub(chunk)
              : Buffer.isBuffer(chunk)
                ? scrub(chunk.toString('utf8'))
                : chunk,
            ...rest,
          );
      }
      const value: unknown = Reflect.get(object, property, receiver);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

/**
 * Creates the logger: pino JSON lines on `stream` (stderr), with header redaction; with
 * `pretty`, human-readable lines instead (for a terminal).
 */
export function createLogger(
  level: string,
  stream: Writable,
  base: Record<string, unknown> = {},
  { pretty: human = false }: { pretty?: boolean } = {},
): Logger {
  return pino(
    {
      level,
      base: { ...base },
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    human
      ? // Loaded only for a terminal: machine-read logs (CI, containers) never need it.
        (createRequire(import.meta.url)('pino-pretty') as typeof pretty)({
          destination: stream,
          colorize: true,
          ignore: 'pid,hostname,command',
          translateTime: 'SYS:HH:MM:ss.l',
        })
      : stream,
  );
}
