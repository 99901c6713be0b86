/** The value parsers of the settings tables: whatever the source, an error names the flag. */
import { isLoopbackHost } from './api-url.ts';
import * as z from 'zod';
import { parseWindow } from '../core/windows.ts';
import { splitNotifyUrl } from '../notify/format.ts';
import { ConfigError, UsageError } from '../runtime/errors.ts';
import { formatDuration, parseDuration } from './duration.ts';
import type { Parser, Raw } from './setting.ts';

/** A parser, with what the config file may hold for it and how a variable holds a list. */
export function parser<T>(
  parse: (raw: Raw, name: string) => T,
  about: Pick<Parser, 'schema' | 'words' | 'separator' | 'path'>,
): Parser<T> {
  return Object.assign((raw: Raw, name: string) => parse(raw, name), about);
}

const TEXT = { schema: z.string(), words: 'text' } as const;
export const LIST = {
  schema: z.array(z.string()),
  words: 'list of texts',
  separator: ',',
} as const;

function refused(name: string, raw: Raw, why: string): ConfigError {
  return new ConfigError(`${name}: ${JSON.stringify(raw)} ${why}`);
}

function asText(raw: Raw, name: string): string {
  if (typeof raw !== 'string') throw refused(name, raw, 'is not text');
  return raw;
}

function asTexts(raw: Raw, name: string): readonly string[] {
  if (typeof raw === 'string') return [raw];
  if (Array.isArray(raw) && raw.every((item) => typeof item === 'string')) return raw;
  throw refused(name, raw, 'is not a list of texts');
}

export const text = parser(asText, TEXT);
/** A file or folder; in the config file, relative to the file. */
export const filePath = parser(asText, {
  ...TEXT,
  words: 'text, relative to the file',
  path: true,
});
/** A list of texts (a repeated flag, a comma-separated variable, a YAML list). */
export const texts = parser(asTexts, LIST);

/** A whole number from `min` to `max`. */
export function integer(min: number, max: number): Parser<number> {
  return parser(
    (raw, name) => {
      const digits = typeof raw === 'string' && /^\d+$/.test(raw.trim());
      const value = typeof raw === 'number' ? raw : digits ? Number(raw) : Number.NaN;
      if (!Number.isInteger(value) || value < min || value > max)
        throw refused(name, raw, `must be a whole number from ${min} to ${max}`);
      return value;
    },
    { schema: z.number().int().min(min).max(max), words: 'whole number' },
  );
}

/** The longest wait a timer can hold: Node's setTimeout fires a longer one at once. */
const MAX_DURATION_MS = 2 ** 31 - 1;

/** A whole number of 0 or more, up to the largest a timer or a count here can use. */
export const whole = integer(0, MAX_DURATION_MS);

const DURATION_HINT = 'use e.g. 500ms, 30s, 5m';

/** A duration (`500ms`, `30s`, `5m`, `1h`, `0`) in milliseconds, then `check`ed. */
function duration(check: (ms: number, raw: Raw, name: string) => void): Parser<number> {
  return parser(
    (raw, name) => {
      const ms = raw === 0 ? 0 : typeof raw === 'string' ? parseDuration(raw) : undefined;
      if (ms === undefined) throw refused(name, raw, `is not a duration (${DURATION_HINT})`);
      if (ms > MAX_DURATION_MS) {
        const most = formatDuration(MAX_DURATION_MS);
        throw refused(name, raw, `is too long: at most ${most} (about 24 days)`);
      }
      check(ms, raw, name);
      return ms;
    },
    { schema: z.union([z.string(), z.literal(0)]), words: 'duration' },
  );
}

/** A duration where `0` has a meaning of its own (an interval that is off). */
export const durationOrZeroMs = duration(() => undefined);

/** A duration above 0 (a timeout, a delay: 0 would mean nothing), up to `maxMs`. */
export function durationMs(maxMs?: number): Parser<number> {
  return duration((ms, raw, name) => {
    if (ms <= 0) throw refused(name, raw, `must be longer than 0 (${DURATION_HINT})`);
    if (maxMs !== undefined && ms > maxMs) {
      const most = formatDuration(maxMs);
      throw refused(name, raw, `must be a duration above 0 and at most ${most} (e.g. 30s, 5m)`);
    }
  });
}

const BYTE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2 };

/** A size in bytes from `min` to `max`: plain bytes, or with a KiB or MiB suffix (`8MiB`). */
export function byteSize(min: number, max: number): Parser<number> {
  return parser(
    (raw, name) => {
      const match =
        typeof raw === 'string' ? /^(\d+)\s*(?:([km])(?:ib)?)?$/i.exec(raw.trim()) : null;
      const unit = BYTE_UNITS[(match?.[2] ?? '').toLowerCase()] ?? Number.NaN;
      const value = typeof raw === 'number' ? raw : Number(match?.[1]) * unit;
      if (!Number.isSafeInteger(value) || value < min || value > max) {
        throw refused(
          name,
          raw,
          `must be a size from ${min} bytes to ${max / 1024 ** 2} MiB: bytes, or with a KiB or MiB suffix (e.g. 8MiB)`,
        );
      }
      return value;
    },
    { schema: z.number().int().min(min).max(max), words: 'whole number' },
  );
}

export function oneOf<const T extends string>(allowed: readonly T[]): Parser<T> {
  return parser(
    (raw, name) => {
      const found = allowed.find((value) => value === raw);
      if (found === undefined) throw refused(name, raw, `is not one of ${allowed.join(', ')}`);
      return found;
    },
    { schema: z.enum(allowed as readonly [T, ...T[]]), words: 'one of the values' },
  );
}

/** The report's format; a file name after the flag (`-o plan.json`) points at --out. */
export function outputFormat<const T extends string>(allowed: readonly T[]): Parser<T> {
  const pick = oneOf(allowed);
  return parser((raw, name) => {
    const known = (allowed as readonly Raw[]).includes(raw);
    if (name.startsWith('-') && typeof raw === 'string' && !known && /[./\\]/.test(raw)) {
      throw new UsageError(
        `${name} ${raw}: --output (-o) takes a format (${allowed.join(', ')}), not a file; did you mean --out ${raw}?`,
      );
    }
    return pick(raw, name);
  }, pick);
}

/** A switch; from the environment or the config file, `true` or `false` exactly. */
export const bool = parser(
  (raw, name) => {
    if (raw === true || raw === 'true') return true;
    if (raw === false || raw === 'false') return false;
    throw refused(name, raw, 'must be true or false');
  },
  { schema: z.boolean(), words: 'true or false' },
);

/** `HOST:PORT` (`[::1]:9464` for IPv6); an empty host means every interface. */
export const listen = parser((raw, name) => {
  const given = asText(raw, name);
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(given.trim());
  const port = Number(match?.[3]);
  if (match === null || port > 65535) {
    throw new ConfigError(
      `--listen: "${given}" is not HOST:PORT (e.g. 127.0.0.1:9464, 0.0.0.0:9464, [::1]:9464)`,
    );
  }
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}, TEXT);

/** Sync windows (core/windows.ts), one per text; a variable separates them by semicolons. */
export const syncWindows = parser(
  (raw, name) =>
    asTexts(raw, name).map((line) => {
      const window = parseWindow(line);
      if ('error' in window) throw new ConfigError(`${name}: ${window.error}`);
      return window;
    }),
  { ...LIST, separator: ';' },
);

function ordinal(n: number): string {
  const tens = n % 100 >= 11 && n % 100 <= 13;
  return `${n}${tens ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th')}`;
}

/**
 * Notify URLs (each an http(s) URL, maybe with a `slack:` prefix, or github://OWNER/REPO), kept as
 * given. One may hold a credential (Slack's hooks carry it in the path): a wrong one is named by
 * its position.
 */
export const notifyUrls = parser((raw, name) => {
  const list = asTexts(raw, name).map((item) => item.trim());
  for (const [index, item] of list.entries()) {
    const parsed = URL.parse(splitNotifyUrl(item, 'cloudevents').url);
    const where = list.length === 1 ? 'the URL' : `the ${ordinal(index + 1)} URL`;
    const problem =
      parsed === null
        ? 'is not a URL (it is not repeated here: it may hold a credential)'
        : parsed.protocol !== 'https:' && parsed.protocol !== 'http:'
          ? `has the scheme ${JSON.stringify(parsed.protocol)}`
          : undefined;
    if (problem !== undefined) {
      throw new ConfigError(
        `${name}: ${where} ${problem}; give an http(s) URL, with slack: before it for the Slack format, or github://OWNER/REPO for commit statuses`,
      );
    }
  }
  return list;
}, LIST);

/** An http(s) URL (https if it gets a token and leaves the machine), no query or trailing slash. */
const httpUrl = (what: string, sendsToken = false) =>
  parser((raw, name) => {
    const parsed = URL.parse(asText(raw, name).trim());
    if (parsed === null || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:'))
      throw refused(name, raw, `is not an http(s) URL; give ${what}`);
    if (sendsToken && parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname))
      throw refused(name, raw, `would send the token in clear text (http); give ${what}`);
    parsed.search = '';
    parsed.hash = '';
    return parsed.href.replace(/\/+$/, '');
  }, TEXT);

/** The daemon's public address. */
export const publicUrl = httpUrl(
  'the address people open the status page at, e.g. https://envsync.example.com',
);
export const githubApiUrl = httpUrl("GitHub's API, e.g. https://github.example.com/api/v3", true);
