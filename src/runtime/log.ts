import type { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { escapeJson } from '../core/escape.ts';
import { MASKED, type Mask } from '../core/mask.ts';
import { formatLogLine, type LogFormat } from './log-line.ts';

/** Fields pino masks (its `redact`), wherever a header object or a token might be logged. */
const MASKED_FIELDS = ['authorization', 'token', 'tokens'].concat(
  ['', '*.', 'req.', 'request.'].map((at) => `${at}headers.authorization`),
);

/** Wraps an output stream so that every write through it is masked, whoever writes. */
export function maskingStream<T extends Writable>(target: T, mask: Mask): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      if (property === 'write') {
        return (chunk: unknown, ...rest: unknown[]) =>
          (object.write as (...args: unknown[]) => boolean).call(
            object,
            typeof chunk === 'string' || Buffer.isBuffer(chunk) ? mask(String(chunk)) : chunk,
            ...rest,
          );
      }
      const value: unknown = Reflect.get(object, property, receiver);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

/** How a logger writes: pretty lines, with colour (a terminal, and no NO_COLOR) or not, or JSON. */
export type LogOutput = { readonly format: LogFormat; readonly color?: boolean };

/** pino's JSON lines (escaped for a terminal), or pretty ones, both written through `stream`. */
export function createLogger(
  level: string,
  stream: Writable,
  base: Record<string, unknown> = {},
  { format, color = false }: LogOutput = { format: 'json' },
): Logger {
  let partial = '';
  const pretty = (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    const text = lines
      .filter((line) => line !== '')
      .map((line) => formatLogLine(JSON.parse(line) as Record<string, unknown>, { color }))
      .join('');
    return text === '' || stream.write(text);
  };
  return pino(
    {
      level,
      base: { ...base },
      redact: { paths: MASKED_FIELDS, censor: MASKED },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    { write: format === 'pretty' ? pretty : (chunk: string) => stream.write(escapeJson(chunk)) },
  );
}
