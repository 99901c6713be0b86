/**
 * Admin endpoints under /_emulator/: no token, loopback callers only, never subject to faults and
 * never counted in the stats. A web page open in a browser on the same machine is a loopback
 * caller too, so the endpoints also refuse what only a browser sends across sites (see
 * `crossSiteRefusal`): otherwise any page could wipe a `--data` store with a form post.
 */
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

/** GET /_emulator/faults: the settings plus the seed the PRNG was last started from. */
export interface FaultState extends FaultSettings {
  seed: number;
}

/** The endpoints and their methods; `''` is the store as a page for people. */
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

/** Host names that reach this machine only: a DNS name that resolves here is not one of them. */
function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return true; // HTTP/1.0 without Host: not a browser
  const name = /^(\[[^\]]*\]|[^:]*)(?::\d+)?$/.exec(host.trim().toLowerCase())?.[1] ?? '';
  return /^(?:localhost|.+\.localhost|127(?:\.\d{1,3}){3}|\[::1\]|\[::ffff:127(?:\.\d{1,3}){3}\])$/.test(
    name,
  );
}

/**
 * Why a request must be refused as cross-site, or undefined. A browser can send a "simple"
 * cross-site request (a form post, `fetch` with `no-cors`) without asking first, but only with a
 * body of text/plain, form or multipart type, and always with an `Origin` header on a POST, PUT or
 * PATCH; recent browsers also say `Sec-Fetch-Site`. A page whose DNS name is made to resolve to
 * 127.0.0.1 (DNS rebinding) still sends its own name as `Host`. Clients that are not browsers
 * (curl, the test helpers, the bench) send none of these.
 */
function crossSiteRefusal(req: IncomingMessage): [number, string] | undefined {
  const { headers } = req;
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return [
      403,
      `The admin endpoints refuse cross-site requests (Sec-Fetch-Site: ${http.cutHeader(site)})`,
    ];
  }
  if (headers.origin !== undefined) {
    return [403, 'The admin endpoints refuse requests from web pages (an Origin header)'];
  }
  if (!isLoopbackHost(headers.host)) {
    return [403, 'The admin endpoints answer only a loopback Host (127.0.0.1, [::1] or localhost)'];
  }
  if (req.method === 'GET' || req.method === 'HEAD') return undefined;
  const type = headers['content-type'];
  const length = headers['content-length'];
  const hasBody =
    headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (type === undefined ? !hasBody : http.mediaType(type) === 'application/json') return undefined;
  const got = type === undefined ? '' : ` (got ${JSON.stringify(type.slice(0, 100))})`;
  return [
    415,
    `The admin endpoints take a JSON body only: send Content-Type: application/json${got}`,
  ];
}

/** A JSON body, or undefined once the answer (413, 400) has been sent. */
async function readJson(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ value: unknown } | undefined> {
  const body = await http.readBody(req, res, http.MAX_ADMIN_BODY_BYTES);
  if (body === undefined) return undefined;
  const parsed = http.parseJson(body);
  if (parsed.ok) return { value: parsed.value };
  http.sendError(res, 400, 'Invalid JSON', { errors: { payload: parsed.reason } });
  return undefined;
}

/** Handles GET/PUT/PATCH/POST on /_emulator/{name}. */
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
    return http.sendError(
      res,
      404,
      `No such admin endpoint; the admin endpoints are ${names.join(', ')}`,
    );
  }
  const method = req.method ?? 'GET';
  if (!allowMethod(res, method, allowed)) return;
  const reading = method === 'GET' || method === 'HEAD';
  const { store, faults } = deps;
  const body = reading || name === 'reset' ? undefined : await readJson(req, res);
  if (name === '') {
    res
      .writeHead(200, PAGE_HEADERS)
      .end(renderStorePage(store.toDocument(), deps.nowSeconds() * 1000));
  } else if (name === 'health') http.sendJson(res, 200, { status: 'ok' });
  else if (name === 'stats') http.sendJson(res, 200, deps.stats.snapshot(store.size));
  else if (name === 'requests') {
    // Any limit from 1 is fine; the answer holds at most what the ring buffer keeps.
    const raw = query.get('limit') ?? '100';
    const limit = /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
    if (limit >= 1) http.sendJson(res, 200, { requests: deps.stats.recent(limit) });
    else
      http.sendError(res, 400, 'Invalid query parameters', {
        errors: { limit: 'must be a whole number from 1' },
      });
  } else if (name === 'store') {
    const document =
      body === undefined ? undefined : parseStoreDocument(body.value, deps.nowSeconds());
    if (document?.ok === false) {
      return http.sendError(res, 400, 'Invalid store document', { errors: document.errors });
    }
    if (document !== undefined) store.replace(document.value);
    if (reading || document !== undefined) http.sendJson(res, 200, store.toDocument(), {}, true);
  } else if (name === 'faults') {
    const patch = body === undefined ? undefined : patchFaults(body.value, faults.settings);
    if (patch?.ok === false) {
      return http.sendError(res, 400, 'Invalid fault settings', { errors: patch.errors });
    }
    if (patch !== undefined) faults.update(patch.value.settings);
    if (patch?.value.seed !== undefined) faults.reseed(patch.value.seed);
    if (reading || patch !== undefined)
      http.sendJson(res, 200, { ...faults.settings, seed: faults.seed });
  } else {
    deps.reset();
    http.sendJson(res, 200, { message: 'emulator reset' });
  }
}
