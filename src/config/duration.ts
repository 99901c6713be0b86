const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses `200ms`, `30s`, `5m`, `1h` (or `0`) into milliseconds; undefined when it does not parse. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(trimmed);
  if (match === null) return undefined;
  return Math.round(Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1000));
}

/** Writes milliseconds the way a person would type them: `200ms`, `30s`, `5m`, `1h`. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms !== 0 && ms % size === 0) return `${ms / size}${unit}`;
  }
  return ms === 0 ? '0' : `${ms}ms`;
}
