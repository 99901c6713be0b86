/** The units of a duration, largest first. */
const UNITS = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 } as const;

/** Parses `200ms`, `30s`, `5m`, `1h` (or `0`) into milliseconds; undefined when it cannot. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(trimmed);
  if (match === null) return undefined;
  return Math.round(Number(match[1]) * UNITS[match[2] as keyof typeof UNITS]);
}

/** Writes milliseconds the way a person would type them: `200ms`, `30s`, `5m`, `1h`. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  const [unit, size] = Object.entries(UNITS).find(([, length]) => ms % length === 0) ?? ['ms', 1];
  return `${ms / size}${unit}`;
}
