/** The results: targets checked, a table for the terminal and a small hand-written SVG chart. */

export interface Check {
  /** Stable identifier, e.g. `noop.vs-floor`. */
  readonly id: string;
  readonly scenario: string;
  /** What is measured, in words. */
  readonly label: string;
  readonly actual: number;
  readonly unit: string;
  /** The limit and how `actual` compares with it. */
  readonly target: number;
  readonly op: '<=' | '<' | '>=' | '==';
  readonly pass: boolean;
  /** Shown in the table instead of the bare number, when set. */
  readonly display?: string;
}

export function check(
  id: string,
  scenario: string,
  label: string,
  actual: number,
  unit: string,
  op: Check['op'],
  target: number,
  display?: string,
): Check {
  const pass =
    Number.isFinite(actual) &&
    (op === '<='
      ? actual <= target
      : op === '<'
        ? actual < target
        : op === '>='
          ? actual >= target
          : actual === target);
  return { id, scenario, label, actual, unit, op, target, pass, ...(display ? { display } : {}) };
}

export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(digits);
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** A plain-text table (also valid Markdown); the columns in `right` are aligned right. */
export function renderTable(
  rows: readonly (readonly string[])[],
  header: readonly string[],
  right: readonly number[] = [2, 3],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => pad(c, widths[i] ?? 0, right.includes(i))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (right.includes(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export function checkRows(checks: readonly Check[]): string[][] {
  return checks.map((c) => [
    c.scenario,
    c.label,
    c.display ?? `${fmt(c.actual)}${c.unit ? ` ${c.unit}` : ''}`,
    `${c.op === '==' ? '=' : c.op === '<=' ? '≤' : c.op === '>=' ? '≥' : '<'} ${fmt(c.target)}${c.unit ? ` ${c.unit}` : ''}`,
    c.pass ? 'PASS' : 'MISS',
  ]);
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (ch) =>
    ch === '<' ? '&lt;' : ch === '>' ? '&gt;' : ch === '&' ? '&amp;' : '&quot;',
  );
}

/**
 * How much of its budget each figure uses: 1 is exactly on target, more is over. For "at least"
 * targets the fraction is inverted (target / actual), for "exactly" it is actual / target.
 */
export function budgetUsed(c: Check): number {
  if (c.op === '>=') return c.actual > 0 ? c.target / c.actual : Number.POSITIVE_INFINITY;
  return c.target > 0 ? c.actual / c.target : c.actual === 0 ? 0 : Number.POSITIVE_INFINITY;
}

/** A horizontal bar chart: each check's share of its budget, the target line at 100%. */
export function renderChart(checks: readonly Check[], title: string, subtitle: string): string {
  const labelWidth = 300;
  const barWidth = 420;
  const valueWidth = 170;
  const rowHeight = 26;
  const top = 64;
  const maxShown = 3; // bars are cut at 300% of the budget, with an arrow
  const width = labelWidth + barWidth + valueWidth + 20;
  const height = top + checks.length * rowHeight + 44;
  const x = (share: number) => labelWidth + (Math.min(share, maxShown) / maxShown) * barWidth;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="10" y="22" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
    `<text x="10" y="42" fill="#555">${escapeXml(subtitle)}</text>`,
  ];
  const gridBottom = top + checks.length * rowHeight;
  for (const share of [0, 1, 2, 3]) {
    const gx = x(share);
    parts.push(
      `<line x1="${gx}" y1="${top - 6}" x2="${gx}" y2="${gridBottom}" stroke="#ddd" stroke-width="1"/>`,
      `<text x="${gx}" y="${gridBottom + 16}" text-anchor="middle" fill="#555">${share * 100}%</text>`,
    );
  }
  parts.push(
    `<text x="${x(1)}" y="${gridBottom + 32}" text-anchor="middle" fill="#222">share of the target's budget (dashed line = target)</text>`,
  );
  checks.forEach((c, i) => {
    const y = top + i * rowHeight;
    const share = budgetUsed(c);
    const w = Math.max(1, x(Number.isFinite(share) ? share : maxShown) - labelWidth);
    const colour = c.pass ? '#2e9e5b' : '#d1453b';
    const value = c.display ?? `${fmt(c.actual)}${c.unit ? ` ${c.unit}` : ''}`;
    parts.push(
      `<text x="${labelWidth - 8}" y="${y + 16}" text-anchor="end">${escapeXml(`${c.scenario}: ${c.label}`)}</text>`,
      `<rect x="${labelWidth}" y="${y + 4}" width="${w.toFixed(1)}" height="${rowHeight - 10}" fill="${colour}" rx="2"/>`,
      share > maxShown
        ? `<text x="${labelWidth + barWidth - 4}" y="${y + 16}" text-anchor="end" fill="#fff" font-weight="bold">▶</text>`
        : '',
      `<text x="${labelWidth + barWidth + 10}" y="${y + 16}" fill="${colour}">${escapeXml(`${c.pass ? 'PASS' : 'MISS'} ${value}`)}</text>`,
    );
  });
  // The target line goes over the bars.
  parts.push(
    `<line x1="${x(1)}" y1="${top - 6}" x2="${x(1)}" y2="${gridBottom}" stroke="#222" stroke-width="1.5" stroke-dasharray="4 3"/>`,
    '</svg>',
  );
  return `${parts.filter((p) => p !== '').join('\n')}\n`;
}
