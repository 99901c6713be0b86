/**
 * Value parsers of the settings table. A value may come from a flag, the environment or the
 * config file; errors name the flag, whatever the source, and are ConfigErrors (exit 1).
 */
import { ConfigError } from '../errors.ts';
import { parseDuration } from './duration.ts';

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

/** A whole number of 0 or more, without an upper bound. */
export function whole(raw: Raw, name: string): number {
  const value =
    typeof raw === 'number'
      ? raw
      : typeof raw === 'string' && /^\d+$/.test(raw)
        ? Number(raw)
        : Number.NaN;
  if (!Number.isInteger(value) || value < 0) {
    throw new ConfigError(`${name}: ${JSON.stringify(raw)} must be a whole number`);
  }
  return value;
}

/** A duration (`500ms`, `30s`, `5m`, `1h`, or `0`) in milliseconds. */
export function durationMs(raw: Raw, name: string): number {
  const value =
    typeof raw === 'number'
      ? raw === 0
        ? 0
        : undefined
      : typeof raw === 'string'
        ? parseDuration(raw)
        : undefined;
  if (value === undefined) {
    throw new ConfigError(
      `${name}: ${JSON.stringify(raw)} is not a duration (use e.g. 500ms, 30s, 5m)`,
    );
  }
  return value;
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

/** A switch; from the environment, 1/true/yes or 0/false/no (any case). */
export function bool(raw: Raw, name: string): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'string' && /^(1|true|yes)$/i.test(raw)) return true;
  if (typeof raw === 'string' && /^(0|false|no|)$/i.test(raw)) return false;
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
