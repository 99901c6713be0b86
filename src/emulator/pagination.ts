/** The kosli profile's listing query (docs/api-behaviour.md#listing-shapes). */
import type { Validated } from './validation.ts';
import { toErrors } from './validation.ts';

/** No page parameters (the bare array), or a valid page request (the envelope). */
export type Pagination =
  | { readonly kind: 'none' }
  | { readonly kind: 'page'; readonly page: number; readonly perPage: number };

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 50;

function parseWhole(raw: string): number | undefined {
  return /^\d{1,9}$/.test(raw) ? Number(raw) : undefined;
}

/** Reads `page` (>= 1) and `per_page` (1..50) from a listing query. */
export function parsePagination(query: URLSearchParams): Validated<Pagination> {
  const rawPage = query.get('page');
  const rawPerPage = query.get('per_page');
  if (rawPage === null && rawPerPage === null) return { ok: true, value: { kind: 'none' } };
  const errors = new Map<string, string>();
  const page = rawPage === null ? 1 : parseWhole(rawPage);
  if (page === undefined || page < 1) errors.set('page', 'must be a whole number from 1');
  const perPage = rawPerPage === null ? DEFAULT_PER_PAGE : parseWhole(rawPerPage);
  if (perPage === undefined || perPage < 1 || perPage > MAX_PER_PAGE) {
    errors.set('per_page', `must be a whole number from 1 to ${MAX_PER_PAGE}`);
  }
  if (errors.size > 0 || page === undefined || perPage === undefined) {
    return { ok: false, errors: toErrors(errors) };
  }
  return { ok: true, value: { kind: 'page', page, perPage } };
}
