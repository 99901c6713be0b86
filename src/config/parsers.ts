/**
 * Value parsers of the settings table. A value may come from a flag, the environment or the
 * config file; errors name the flag, whatever the source, and are ConfigErrors (exit 1).
 */
import { parseWindow, type SyncWindow } from '../core/windows.ts';
import { ConfigError, UsageError } from '../runtime/errors.ts';
import { formatDuration, parseDuration } from './duration.ts';

/** A setting's raw value: a flag's text, switch or repeated texts, or a config file value. */
export type Raw = string | number | boolean | readonly string[];

/** A text value as given. */
export function text(raw: Raw, name: string): string {
  if (typeof raw !== 'string') throw new ConfigError(`${name}: ${JSON.stringify(raw)} is not text`);
  return raw;
}

/** A list of texts (a repeated flag, a comma-separated variable, a YAML list). */
export function texts(raw: Raw, name: string): readonly string[] {
  if (typeof raw === 'string') return [raw];
  if (Array.isArray(raw) && raw.every((item) => typeof item === 'string')) return raw;
  throw new ConfigError(`${name}: ${JSON.stringify(raw)} is not a list of texts`);
}

/** Splits a comma-separated environment variable, dropping blanks. */
export function commaSeparated(value: string): readonly string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** A whole number from `min` to `max`. */
export function integer(min: number, max: number): (raw: Raw, name: string) => number {
  return (raw, name) => {
    const value =
      typeof raw === 'number'
        ? raw
        : typeof raw === 'string' && /^\d+$/.test(raw.trim())
          ? Number(raw)
          : Number.NaN;
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new ConfigError(
        `${name}: ${JSON.stringify(raw)} must be a whole number from ${min} to ${max}`,
      );
    }
    return value;
  };
}

/**
 * The longest wait a timer can hold: Node's setTimeout fires a longer one at once (with a
 * warning), so a longer duration would mean "now", not "later".
 */
export const MAX_DURATION_MS = 2 ** 31 - 1;

/** A whole number of 0 or more, up to the largest a timer or a count here can use. */
export const whole = integer(0, MAX_DURATION_MS);

const DURATION_HINT = 'use e.g. 500ms, 30s, 5m';

/** Any duration of the given `raw`, in milliseconds, up to MAX_DURATION_MS. */
function anyDuration(raw: Raw, name: string): number {
  const value =
    typeof raw === 'number'
      ? raw === 0
        ? 0
        : undefined
      : typeof raw === 'string'
        ? parseDuration(raw)
        : undefined;
  if (value === undefined) {
    throw new ConfigError(`${name}: ${JSON.stringify(raw)} is not a duration (${DURATION_HINT})`);
  }
  if (value > MAX_DURATION_MS) {
    throw new ConfigError(
      `${name}: ${JSON.stringify(raw)} is too long: at most ${formatDuration(MAX_DURATION_MS)} (about 24 days)`,
    );
  }
  return value;
}

/**
 * A duration of more than 0 (`500ms`, `30s`, `5m`, `1h`) in milliseconds: a timeout or a delay,
 * which 0 would make meaningless.
 */
export function durationMs(raw: Raw, name: string): number {
  const value = anyDuration(raw, name);
  if (value <= 0) {
    throw new ConfigError(
      `${name}: ${JSON.stringify(raw)} must be longer than 0 (${DURATION_HINT})`,
    );
  }
  return value;
}

/** A duration in milliseconds where `0` has a meaning of its own (an interval that is off). */
export function durationOrZeroMs(raw: Raw, name: string): number {
  return anyDuration(raw, name);
}

/** One of a fixed list of words. */
export function oneOf<const T extends string>(
  allowed: readonly T[],
): (raw: Raw, name: string) => T {
  return (raw, name) => {
    const found = allowed.find((value) => value === raw);
    if (found === undefined) {
      throw new ConfigError(`${name}: ${JSON.stringify(raw)} is not one of ${allowed.join(', ')}`);
    }
    return found;
  };
}

/**
 * The report's format. A file name (`-o plan.json`: a dot or a slash) is a usage error that
 * points at --out, the flag that names a file: `-o` is short for --output, as in kubectl.
 */
export function outputFormat<const T extends string>(
  allowed: readonly T[],
): (raw: Raw, name: string) => T {
  const pick = oneOf(allowed);
  return (raw, name) => {
    // A config file key (no leading dash) has no --out beside it: there, a plain error.
    const flag = name.startsWith('-');
    if (flag && typeof raw === 'string' && !allowed.includes(raw as T) && /[./\\]/.test(raw)) {
      throw new UsageError(
        `${name} ${raw}: --output (-o) takes a format (${allowed.join(', ')}), not a file; did you mean --out ${raw}?`,
      );
    }
    return pick(raw, name);
  };
}

/** A switch; from the environment, `true` or `false` exactly (as docs/flags.md says). */
export function bool(raw: Raw, name: string): boolean {
  if (typeof raw === 'boolean') return raw;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new ConfigError(`${name}: ${JSON.stringify(raw)} must be true or false`);
}

/** `HOST:PORT` (`[::1]:9464` for IPv6); an empty host means every interface. */
export function parseListen(raw: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(raw.trim());
  const port = Number(match?.[3]);
  if (match === null || port > 65535) {
    throw new ConfigError(
      `--listen: "${raw}" is not HOST:PORT (e.g. 127.0.0.1:9464, 0.0.0.0:9464, [::1]:9464)`,
    );
  }
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

/** The `--listen` setting: `HOST:PORT`. */
export function listen(raw: Raw, name: string): { host: string; port: number } {
  return parseListen(text(raw, name));
}

/** Sync windows (core/windows.ts), one per text: each read, or the first wrong one named. */
export function syncWindows(raw: Raw, name: string): readonly SyncWindow[] {
  return texts(raw, name).map((line) => {
    const window = parseWindow(line);
    if ('error' in window) throw new ConfigError(`${name}: ${window.error}`);
    return window;
  });
}

/** Splits a semicolon-separated environment variable (a window's line has commas), dropping blanks. */
export function semicolonSeparated(value: string): readonly string[] {
  return value
    .split(';')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
