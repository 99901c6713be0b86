/**
 * The status page's small pieces: badges, times, values and problem lists. Every text that comes
 * in is escaped here; what goes out is markup.
 */
import { escapeHtml as esc } from '../core/escape.ts';
import type { FieldValue } from '../core/model.ts';
import type { ProblemReport } from '../core/report.ts';
import { STATUS_CLASS } from './status-page-style.ts';

export { esc };

/** A word in a pill of its colour (a word the page does not know is grey). */
export function badge(word: string): string {
  return `<span class="badge ${STATUS_CLASS[word] ?? 'st-unknown'}">${esc(word)}</span>`;
}

/** The class of a status word, for a card or a count (empty when the word is not known). */
export function statusClass(word: string): string {
  return STATUS_CLASS[word] ?? '';
}

/** `1 org`, `2 orgs`. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${esc(String(n))} ${n === 1 ? one : many}`;
}

/** An ISO time as people read it (to the second, UTC), and how long ago it was. */
export function when(iso: string | null, now: number): string {
  if (iso === null) return '<span class="dim">never</span>';
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return `<time>${esc(iso)}</time>`;
  return `<time datetime="${esc(iso)}">${esc(utc(at))}</time> <span class="dim">(${esc(agoText(now - at))})</span>`;
}

/** How long ago an ISO time was, the time itself as the element's title (for the cards). */
export function ago(iso: string | null, now: number): string {
  if (iso === null) return '<span class="dim">never</span>';
  const at = Date.parse(iso);
  if (!Number.isFinite(at)) return `<time>${esc(iso)}</time>`;
  return `<time datetime="${esc(iso)}" title="${esc(utc(at))}">${esc(agoText(now - at))}</time>`;
}

function utc(at: number): string {
  return new Date(at)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

export function agoText(ms: number): string {
  if (ms < 0) return `in ${agoText(-ms).replace(/ ago$/, '')}`;
  const s = Math.round(ms / 1000);
  if (s < 90) return `${s} s ago`;
  const m = Math.round(s / 60);
  if (m < 90) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 36) return `${h} h ago`;
  return `${Math.round(h / 24)} d ago`;
}

/** A duration in ms as people read it. */
export function duration(ms: number): string {
  return ms < 1000 ? `${esc(String(ms))} ms` : `${esc((ms / 1000).toFixed(1))} s`;
}

export function showValue(value: FieldValue | null): string {
  return value === null
    ? '<span class="dim">(none)</span>'
    : `<code>${esc(JSON.stringify(value))}</code>`;
}

function sourceLocation(problem: ProblemReport): string {
  return `<code>${esc(problem.file)}:${esc(String(problem.line))}:${esc(String(problem.column))}</code>`;
}

/** Manifest problems, each at file:line:col with its YAML path. */
export function problemList(problems: readonly ProblemReport[]): string {
  const items = problems.map(
    (p) =>
      `<li>${sourceLocation(p)} ${p.path ? `<code>${esc(p.path)}</code>: ` : ''}<span class="message">${esc(p.message)}</span></li>`,
  );
  return `<ul class="problems">${items.join('')}</ul>`;
}

/** A table with a header row; each cell of a row is labelled by its column (for narrow screens). */
export function table(
  className: string,
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  /** On a narrow screen, each row becomes a block of labelled lines (for wide tables). */
  stack = true,
): string {
  const head = headers.map((h) => `<th scope="col">${esc(h)}</th>`).join('');
  const body = rows
    .map(
      (cells) =>
        `<tr>${cells.map((cell, i) => `<td data-label="${esc(headers[i] ?? '')}">${cell}</td>`).join('')}</tr>`,
    )
    .join('');
  return `<table class="${className}${stack ? ' stack' : ''}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** A details element the page's script keeps open or closed across refreshes by its key. */
export function disclosure(key: string, open: boolean, summary: string, body: string): string {
  return `<details data-key="${esc(key)}"${open ? ' open' : ''}><summary>${summary}</summary>${body}</details>`;
}
