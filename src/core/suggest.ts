/**
 * The edit distance of two short strings (optimal string alignment): insertions, deletions,
 * substitutions and swaps of two neighbours each count one, so "plna" is one typo from "plan".
 */
function distance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, j) => j)];
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (rows[i - 1]?.[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (rows[i - 1]?.[j - 1] ?? 0) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      }
      row[j] = best;
    }
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? 0;
}

/** Returns the candidate closest to `input` if it is close enough to be a likely typo. */
export function suggest(input: string, candidates: readonly string[]): string | undefined {
  const lower = input.toLowerCase();
  const exact = candidates.find((c) => c.toLowerCase() === lower);
  if (exact !== undefined) return exact;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = distance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const allowed = Math.max(1, Math.floor(Math.max(input.length, best?.length ?? 0) / 3));
  return bestDistance <= allowed ? best : undefined;
}
