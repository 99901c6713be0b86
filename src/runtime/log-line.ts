/** How logs look: the format and default level of a command, and a record as one pretty line. */
import { UNSAFE } from '../core/escape.ts';

/** The values of `--log-format`: auto is pretty on a terminal, JSON elsewhere. */
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export type LogFormatSetting = (typeof LOG_FORMATS)[number];
export type LogFormat = Exclude<LogFormatSetting, 'auto'>;

export function chooseLogFormat(setting: LogFormatSetting, stderrIsTerminal: boolean): LogFormat {
  return setting !== 'auto' ? setting : stderrIsTerminal ? 'pretty' : 'json';
}

/** The level given, else info; warn for a one-shot command's JSON logs (its report says it). */
export function chooseLogLevel(
  given: string | undefined,
  format: LogFormat,
  { oneShot }: { readonly oneShot: boolean },
): string {
  return given ?? (oneShot && format === 'json' ? 'warn' : 'info');
}

const LEVELS: Readonly<Record<number, readonly [string, string]>> = {
  10: ['TRACE', '\u001b[90m'],
  20: ['DEBUG', '\u001b[36m'],
  30: ['INFO', '\u001b[32m'],
  40: ['WARN', '\u001b[33m'],
  50: ['ERROR', '\u001b[31m'],
  60: ['FATAL', '\u001b[41m'],
};
const DIM = '\u001b[2m';
const RESET = '\u001b[0m';

/** Fields a pretty line never shows: pino's own, and those every line of a process shares. */
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'command', 'name']);

/** Controls replaced, bidirectional and zero-width characters escaped: a value cannot steer it. */
const oneLine = (text: string) =>
  text.replace(UNSAFE, (c) =>
    '\n\r\t'.includes(c)
      ? ' '
      : c <= '\u009f'
        ? '?'
        : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** A field's value as a pretty line shows it (cut at 80), or undefined for one left out. */
function shown(value: unknown): string | undefined {
  let text: string | undefined;
  if (typeof value === 'string') text = /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else if (Array.isArray(value) && value.every((v) => ['string', 'number'].includes(typeof v)))
    text = value.join(',');
  // An error pino serialized: its message, not its stack.
  else if (typeof (value as { message?: unknown } | null)?.message === 'string')
    text = JSON.stringify((value as { message: string }).message);
  return text !== undefined && text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** One log record as one line: time of day (UTC), level, message, the fields it does not say. */
export function formatLogLine(
  record: Readonly<Record<string, unknown>>,
  { color }: { readonly color: boolean },
): string {
  const level = typeof record['level'] === 'number' ? record['level'] : 30;
  const [name, tint] = LEVELS[level] ?? [String(level), ''];
  const message = typeof record['msg'] === 'string' ? record['msg'] : '';
  const fields = Object.entries(record).flatMap(([key, value]) => {
    const text = HIDDEN.has(key) ? undefined : shown(value);
    if (!text || (typeof value === 'string' && message.includes(value))) return [];
    return [`${key}=${text}`];
  });
  const day = typeof record['time'] === 'string' ? record['time'].replace(/^.*T/, '') : '';
  const said = oneLine(fields.join(' '));
  const paint = (text: string, code: string) =>
    color && text !== '' ? `${code}${text}${RESET}` : text;
  const tail = [oneLine(message), paint(said, DIM)].filter((part) => part !== '').join(' ');
  return `${paint(day, DIM)} ${paint(name.padEnd(5), tint)} ${tail}\n`;
}
