/** The admin endpoints under /_emulator/ (docs/emulator.md, "Admin endpoints"). */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { allowMethod } from './access.ts';
import { patchFaults, type FaultInjector, type FaultSettings } from './faults.ts';
import * as http from './http.ts';
import type { RequestStats } from './stats.ts';
import { parseStoreDocument } from './store-document.ts';
import type { EnvironmentStore } from './store.ts';
import { renderStorePage, STORE_PAGE_STYLE } from './store-page.ts';

export interface AdminDeps {
  readonly store: EnvironmentStore;
  readonly stats: RequestStats;
  readonly faults: FaultInjector;
  readonly nowSeconds: () => number;
  /** Back to the start state: empty store, zero counters, start-up faults and seed. */
  readonly reset: () => void;
}

export type FaultState = FaultSettings & { seed: number };

const ALLOWED: Record<string, readonly string[]> = {
  '': ['GET', 'HEAD'],
  health: ['GET', 'HEAD'],
  stats: ['GET', 'HEAD'],
  requests: ['GET', 'HEAD'],
  store: ['GET', 'HEAD', 'PUT'],
  faults: ['GET', 'HEAD', 'PATCH'],
  reset: ['POST'],
};

/** The store page loads nothing and runs nothing: only its own inline style is allowed. */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STORE_PAGE_STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const;

/** Host names that reach this machine only (with a port or not): a DNS name is not one of them. */
const LOOPBACK_HOST =
  /^(?:localhost|[^:]+\.localhost|127(?:\.\d{1,3}){3}|\[::1\]|\[::ffff:127(?:\.\d{1,3}){3}\])(?::\d+)?$/;

/** Why a request looks like one a web page made (docs/emulator.md, "Admin endpoints"). */
function crossSiteRefusal({ headers, method }: IncomingMessage): [number, string] | undefined {
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    const text = `The admin endpoints refuse cross-site requests (Sec-Fetch-Site: ${http.cutHeader(site)})`;
    return [403, text];
  }
  if (headers.origin !== undefined)
    return [403, 'The admin endpoints refuse requests from web pages (an Origin header)'];
  // HTTP/1.0 without a Host: not a browser.
  if (headers.host !== undefined && !LOOPBACK_HOST.test(headers.host.trim().toLowerCase()))
    return [403, 'The admin endpoints answer only a loopback Host (127.0.0.1, [::1] or localhost)'];
  if (method === 'GET' || method === 'HEAD') return undefined;
  const type = headers['content-type'];
  const length = headers['content-length'];
  const hasBody =
    headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (type === undefined ? !hasBody : http.mediaType(type) === 'application/json') return undefined;
  const got = type === undefined ? '' : ` (got ${JSON.stringify(type.slice(0, 100))})`;
  const text = `The admin endpoints take a JSON body only: send Content-Type: application/json${got}`;
  return [415, text];
}

export async function handleAdmin(
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  query: URLSearchParams,
  deps: AdminDeps,
): Promise<void> {
  const refused: [number, string] | undefined = http.isLoopback(req.socket.remoteAddress)
    ? crossSiteRefusal(req)
    : [403, 'The admin endpoints answer loopback callers only'];
  if (refused !== undefined) return http.sendError(res, ...refused);
  const allowed = Object.hasOwn(ALLOWED, name) ? ALLOWED[name] : undefined;
  if (allowed === undefined) {
    // The endpoints are named rather than the path quoted: it may hold anything (a token too).
    const names = Object.keys(ALLOWED).map((endpoint) => `/_emulator/${endpoint}`);
    const text = `No such admin endpoint; the admin endpoints are ${names.join(', ')}`;
    return http.sendError(res, 404, text);
  }
  const method = req.method ?? 'GET';
  if (!allowMethod(res, method, allowed)) return;
  const { store, faults } = deps;
  const documents: Record<string, () => unknown> = {
    health: () => ({ status: 'ok' }),
    stats: () => deps.stats.snapshot(store.size),
    store: () => store.toDocument(),
    faults: () => ({ ...faults.settings, seed: faults.seed }),
  };
  const invalid = (what: string, errors: object) => http.sendError(res, 400, what, { errors });
  // The store indented, one field a line, for people who read it.
  const answer = () => http.sendJson(res, 200, documents[name]?.(), {}, name === 'store');
  if (name === '') {
    const page = renderStorePage(store.toDocument(), deps.nowSeconds() * 1000);
    res.writeHead(200, PAGE_HEADERS).end(page);
  } else if (name === 'reset') {
    deps.reset();
    http.sendJson(res, 200, { message: 'emulator reset' });
  } else if (name === 'requests') {
    // Any limit from 1 is fine; the answer holds at most what the ring buffer keeps.
    const limit = http.wholeParameter(query, 'limit', 100);
    if (limit !== undefined) return http.sendJson(res, 200, { requests: deps.stats.recent(limit) });
    invalid('Invalid query parameters', { limit: 'must be a whole number from 1' });
  } else if (method === 'GET' || method === 'HEAD') answer();
  else {
    const raw = await http.readBody(req, res, 64 * 1024 * 1024); // a whole store can be big
    if (raw === undefined) return;
    const body = http.parseJson(raw);
    if (!body.ok) return invalid('Invalid JSON', { payload: body.reason });
    if (name === 'store') {
      const document = parseStoreDocument(body.value, deps.nowSeconds());
      if (!document.ok) return invalid('Invalid store document', document.errors);
      store.replace(document.value);
    } else {
      const patch = patchFaults(body.value, faults.settings);
      if (!patch.ok) return invalid('Invalid fault settings', patch.errors);
      faults.update(patch.value.settings);
      if (patch.value.seed !== undefined) faults.reseed(patch.value.seed);
    }
    answer();
  }
}
