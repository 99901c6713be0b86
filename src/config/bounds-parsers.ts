/**
 * Value parsers of the limits on waits and memory (--deadline, --max-retry-after,
 * --max-response-bytes). Errors name the flag, whatever the source, and are ConfigErrors.
 */
import { ConfigError } from '../runtime/errors.ts';
import { durationMs, type Raw } from './parsers.ts';

/** A duration of more than 0 and at most `maxMs` (e.g. `30s`, `5m`), in milliseconds. */
export function boundedDurationMs(maxMs: number, maxText: string) {
  return (raw: Raw, name: string): number => {
    const value = durationMs(raw, name);
    if (value <= 0 || value > maxMs) {
      throw new ConfigError(
        `${name}: ${JSON.stringify(raw)} must be a duration above 0 and at most ${maxText} (e.g. 30s, 5m)`,
      );
    }
    return value;
  };
}

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
};

/** A size in bytes from `min` to `max`: plain bytes, or with a KiB or MiB suffix (`8MiB`). */
export function byteSize(min: number, max: number) {
  return (raw: Raw, name: string): number => {
    let value = Number.NaN;
    if (typeof raw === 'number') value = raw;
    else if (typeof raw === 'string') {
      const match = /^(\d+)\s*(kib|k|mib|m)?$/i.exec(raw.trim());
      const unit = BYTE_UNITS[(match?.[2] ?? '').toLowerCase()];
      if (match !== null && unit !== undefined) value = Number(match[1]) * unit;
    }
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      throw new ConfigError(
        `${name}: ${JSON.stringify(raw)} must be a size from ${min} bytes to ${max / 1024 ** 2} MiB: bytes, or with a KiB or MiB suffix (e.g. 8MiB)`,
      );
    }
    return value;
  };
}
