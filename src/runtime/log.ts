import { pino, type Logger } from 'pino';
import type { Writable } from 'node:stream';
import { escapeJson } from '../core/escape.ts';
import { formatLogLine, type LogFormat } from './log-line.ts';
import { MASKED, type Mask } from '../core/mask.ts';

/** Fields pino masks (its `redact`), wherever a header object or a token might be logged. */
const MASKED_FIELDS = [
  'authorization',
  'token',
  'tokens',
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  'request.headers.authorization',
];

/**
 * Wraps an output stream so that no secret passes through it, whoever wrote it: each write is
 * masked (src/core/mask.ts) as it leaves.
 */
export function maskingStream<T extends Writable>(target: T, mask: Mask): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      if (property === 'write') {
        return (chunk: unknown, ...rest: unknown[]) =>
          (object.write as (...args: unknown[]) => boolean).call(
            object,
            typeof chunk === 'string'
              ? mask(chunk)
              : Buffer.isBuffer(chunk)
                ? mask(chunk.toString('utf8'))
                : chunk,
            ...rest,
          );
      }
      const value: unknown = Reflect.get(object, property, receiver);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

/** How a logger writes: pretty lines (with colour or not) or JSON lines. */
export interface LogOutput {
  readonly format: LogFormat;
  /** Colour in pretty lines (a terminal, and no NO_COLOR). */
  readonly color?: boolean;
}

/**
 * A pino destination that writes each record as one pretty line to `target`. pino hands it
 * whole JSON lines; the line is written through `target`, so a masking stream still masks it.
 */
function prettyLines(target: Writable, color: boolean): { write(chunk: string): boolean } {
  let partial = '';
  return {
    write(chunk: string) {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      let text = '';
      for (const line of lines) {
        if (line === '') continue;
        let record: unknown;
        try {
          record = JSON.parse(line);
        } catch {
          text += `${line}\n`;
          continue;
        }
        text +=
          record !== null && typeof record === 'object'
            ? formatLogLine(record as Record<string, unknown>, { color })
            : `${line}\n`;
      }
      return text === '' ? true : target.write(text);
    },
  };
}

/**
 * A pino destination that writes its JSON lines to `target` with what JSON.stringify leaves raw
 * and a terminal would act on (C1 controls, bidirectional and zero-width characters, line
 * separators) as \u escapes: the same records once parsed, and nothing a reader of the log
 * cannot see.
 */
function jsonLines(target: Writable): { write(chunk: string): boolean } {
  return { write: (chunk) => target.write(escapeJson(chunk)) };
}

/**
 * Creates the logger: JSON lines on `stream` (stderr), ISO 8601 UTC times, with header
 * fields masked; with the pretty format, one human-readable line per record instead (a terminal).
 * The emulator and envsync both log through here, so their times read the same.
 */
export function createLogger(
  level: string,
  stream: Writable,
  base: Record<string, unknown> = {},
  { format, color = false }: LogOutput = { format: 'json' },
): Logger {
  return pino(
    {
      level,
      base: { ...base },
      redact: { paths: MASKED_FIELDS, censor: MASKED },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    format === 'pretty' ? prettyLines(stream, color) : jsonLines(stream),
  );
}
