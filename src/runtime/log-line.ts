/**
 * How logs look: which format a command writes (pretty lines for a person, JSON lines for a
 * machine), at which level by default, and one log record as a single pretty line. Pure: the
 * caller says whether stderr is a terminal and hands in each record as pino wrote it.
 */
import { UNSAFE } from '../core/escape.ts';

/** The values of `--log-format`: auto picks pretty on a terminal, JSON otherwise. */
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;
export type LogFormatSetting = (typeof LOG_FORMATS)[number];
export type LogFormat = Exclude<LogFormatSetting, 'auto'>;

/** The format logs are written in: the setting when it names one, else by the terminal. */
export function chooseLogFormat(setting: LogFormatSetting, stderrIsTerminal: boolean): LogFormat {
  if (setting !== 'auto') return setting;
  return stderrIsTerminal ? 'pretty' : 'json';
}

/**
 * The level logs are written at: the one given (flag, variable, config file), else info, except
 * for a one-shot command's JSON logs: warn, since its report on stdout already says what
 * happened and a pipeline's log should hold only what needs a look.
 */
export function chooseLogLevel(
  given: string | undefined,
  format: LogFormat,
  { oneShot }: { readonly oneShot: boolean },
): string {
  if (given !== undefined) return given;
  return oneShot && format === 'json' ? 'warn' : 'info';
}

/** pino's numeric levels, by name. */
const LEVEL_NAMES: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** ANSI colours of each level (a terminal only). */
const LEVEL_COLORS: Readonly<Record<number, string>> = {
  10: '\u001b[90m',
  20: '\u001b[36m',
  30: '\u001b[32m',
  40: '\u001b[33m',
  50: '\u001b[31m',
  60: '\u001b[41m',
};
const DIM = '\u001b[2m';
const RESET = '\u001b[0m';

/** Fields a pretty line never shows: pino's own, and those every line of a process shares. */
const HIDDEN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'command', 'name']);

/** A shown value longer than this is cut (a pretty line stays one line of a terminal, roughly). */
const MAX_VALUE = 80;

/**
 * Terminal control characters are replaced, so a value from a manifest or a service cannot steer
 * the terminal; bidirectional and zero-width characters are shown as \u escapes, so it cannot
 * reorder or hide what the line says either.
 */
function oneLine(text: string): string {
  return text.replace(UNSAFE, (c) => {
    if (c === '\n' || c === '\r' || c === '\t') return ' ';
    return c <= '\u009f' ? '?' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

function cut(text: string): string {
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

/** A field's value as a pretty line shows it, or undefined for one it leaves out (an object). */
function shown(value: unknown): string | undefined {
  if (typeof value === 'string') return /[\s"=]/.test(value) ? JSON.stringify(value) : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) {
    return value.join(',');
  }
  if (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { message?: unknown }).message === 'string'
  ) {
    // An error pino serialized: its message, not its stack.
    return JSON.stringify((value as { message: string }).message);
  }
  return undefined;
}

/** The time of day of an ISO 8601 time (`01:02:03.456Z`), or the text as it came. */
function timeOfDay(time: unknown): string {
  if (typeof time !== 'string') return typeof time === 'number' ? String(time) : '';
  const match = /T(\d\d:\d\d:\d\d(?:\.\d+)?Z)$/.exec(time);
  return match?.[1] ?? time;
}

/**
 * One log record as one line: the time of day (UTC, as in the JSON logs' ISO 8601 times), the
 * level, the message, then `key=value` for each plain field the message does not already say.
 * Objects are left out; an error shows its message. Never more than one line.
 */
export function formatLogLine(
  record: Readonly<Record<string, unknown>>,
  { color }: { readonly color: boolean },
): string {
  const level = typeof record['level'] === 'number' ? record['level'] : 30;
  const label = (LEVEL_NAMES[level] ?? String(level)).padEnd(5);
  const message = typeof record['msg'] === 'string' ? record['msg'] : '';
  const fields: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (HIDDEN.has(key)) continue;
    const text = shown(value);
    if (text === undefined || text === '') continue;
    // Already in the message (`org acme failed`): said once is enough.
    if (typeof value === 'string' && message.includes(value)) continue;
    fields.push(`${key}=${cut(text)}`);
  }
  const time = timeOfDay(record['time']);
  const said = oneLine(fields.join(' '));
  const tail = [oneLine(message), color && said !== '' ? `${DIM}${said}${RESET}` : said]
    .filter((part) => part !== '')
    .join(' ');
  if (!color) return `${time} ${label} ${tail}\n`;
  return `${DIM}${time}${RESET} ${LEVEL_COLORS[level] ?? ''}${label}${RESET} ${tail}\n`;
}
