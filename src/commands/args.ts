import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { UsageError } from '../errors.ts';

/** Parses a command's flags strictly: an unknown flag or a missing value is a UsageError. */
export function parseFlags<T extends ParseArgsOptionsConfig>(
  argv: readonly string[],
  options: T,
  usage: string,
  { positionals = false }: { positionals?: boolean } = {},
) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: positionals });
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(message ?? 'invalid arguments', usage);
  }
}

/** Parses a non-negative integer flag value. */
export function parseInteger(
  flag: string,
  raw: string,
  { min = 0, max = Number.MAX_SAFE_INTEGER } = {},
): number {
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`--${flag}: "${raw}" is not a whole number`);
  const value = Number(raw);
  if (value < min || value > max) {
    throw new UsageError(`--${flag}: ${value} is out of range (${min} to ${max})`);
  }
  return value;
}

/** Parses a probability 0..1 flag value. */
export function parseRate(flag: string, raw: string): number {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1) {
    throw new UsageError(`--${flag}: "${raw}" must be a number from 0 to 1`);
  }
  return value;
}
