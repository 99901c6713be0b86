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
import {
  cutHeader,
  isLoopback,
  MAX_ADMIN_BODY_BYTES,
  mediaType,
  parseJson,
  readBody,
  sendError,
  sendJson,
} from './http.ts';
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

const DEFAULT_REQUEST_LIMIT = 100;

const ALLOWED: Record<string, readonly string[]> = {
  // GET /_emulator/: the store as a page for people.
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

/**
 * The 404 for a path under /_emulator/ that is no endpoint. It names the endpoints rather than
 * quoting the path, which may hold anything a client sent (a token too).
 */
function sendNoEndpoint(res: ServerResponse): void {
  const names = Object.keys(ALLOWED).map((name) => `/_emulator/${name}`);
  sendError(res, 404, `No such admin endpoint; the admin endpoints are ${names.join(', ')}`);
}

function faultState(faults: FaultInjector): FaultState {
  return { ...faults.settings, seed: faults.seed };
}

async function readJson(
  req: IncomingMessage,
  res: ServerResponse,
): Promise<{ value: unknown } | undefined> {
  const body = await readBody(req, res, MAX_ADMIN_BODY_BYTES);
  if (body === undefined) return undefined;
  const parsed = parseJson(body);
  if (!parsed.ok) {
    sendError(res, 400, 'Invalid JSON', { errors: { payload: parsed.reason } });
    return undefined;
  }
  return { value: parsed.value };
}

/** Host names that reach this machine only: a DNS name that resolves here is not one of them. */
function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return true; // HTTP/1.0 without Host: not a browser
  const name = /^(\[[^\]]*\]|[^:]*)(?::\d+)?$/.exec(host.trim().toLowerCase())?.[1];
  if (name === undefined) return false;
  return (
    name === 'localhost' ||
    name.endsWith('.localhost') ||
    /^127(?:\.\d{1,3}){3}$/.test(name) ||
    name === '[::1]' ||
    /^\[::ffff:127(?:\.\d{1,3}){3}\]$/.test(name)
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
export function crossSiteRefusal(
  req: IncomingMessage,
): { status: number; message: string } | undefined {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return {
      status: 403,
      message: `The admin endpoints refuse cross-site requests (Sec-Fetch-Site: ${cutHeader(site)})`,
    };
  }
  if (req.headers.origin !== undefined) {
    return {
      status: 403,
      message: 'The admin endpoints refuse requests from web pages (an Origin header)',
    };
  }
  if (!isLoopbackHost(req.headers.host)) {
    return {
      status: 403,
      message: 'The admin endpoints answer only a loopback Host (127.0.0.1, [::1] or localhost)',
    };
  }
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') return undefined;
  const type = req.headers['content-type'];
  const hasBody =
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  if (type === undefined ? hasBody : mediaType(type) !== 'application/json') {
    return {
      status: 415,
      message: `The admin endpoints take a JSON body only: send Content-Type: application/json${type === undefined ? '' : ` (got ${JSON.stringify(type.slice(0, 100))})`}`,
    };
  }
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
  if (!isLoopback(req.socket.remoteAddress)) {
    sendError(res, 403, 'The admin endpoints answer loopback callers only');
    return;
  }
  const refused = crossSiteRefusal(req);
  if (refused !== undefined) {
    sendError(res, refused.status, refused.message);
    return;
  }
  const allowed = Object.hasOwn(ALLOWED, name) ? ALLOWED[name] : undefined;
  if (allowed === undefined) {
    sendNoEndpoint(res);
    return;
  }
  const method = req.method ?? 'GET';
  if (!allowMethod(res, method, allowed)) return;
  const reading = method === 'GET' || method === 'HEAD';
  switch (name) {
    case '':
      res
        .writeHead(200, PAGE_HEADERS)
        .end(renderStorePage(deps.store.toDocument(), deps.nowSeconds() * 1000));
      return;
    case 'health':
      sendJson(res, 200, { status: 'ok' });
      return;
    case 'stats':
      sendJson(res, 200, deps.stats.snapshot(deps.store.size));
      return;
    case 'requests': {
      // Any limit from 1 is fine; the answer holds at most what the ring buffer keeps.
      const raw = query.get('limit');
      const limit = raw === null ? DEFAULT_REQUEST_LIMIT : /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
      if (limit < 1) {
        sendError(res, 400, 'Invalid query parameters', {
          errors: { limit: 'must be a whole number from 1' },
        });
        return;
      }
      sendJson(res, 200, { requests: deps.stats.recent(limit) });
      return;
    }
    case 'store': {
      if (reading) {
        sendJson(res, 200, deps.store.toDocument(), {}, true);
        return;
      }
      const body = await readJson(req, res);
      if (body === undefined) return;
      const document = parseStoreDocument(body.value, deps.nowSeconds());
      if (!document.ok) {
        sendError(res, 400, 'Invalid store document', { errors: document.errors });
        return;
      }
      deps.store.replace(document.value);
      sendJson(res, 200, deps.store.toDocument(), {}, true);
      return;
    }
    case 'faults': {
      if (reading) {
        sendJson(res, 200, faultState(deps.faults));
        return;
      }
      const body = await readJson(req, res);
      if (body === undefined) return;
      const patch = patchFaults(body.value, deps.faults.settings);
      if (!patch.ok) {
        sendError(res, 400, 'Invalid fault settings', { errors: patch.errors });
        return;
      }
      deps.faults.update(patch.value.settings);
      if (patch.value.seed !== undefined) deps.faults.reseed(patch.value.seed);
      sendJson(res, 200, faultState(deps.faults));
      return;
    }
    case 'reset':
      deps.reset();
      sendJson(res, 200, { message: 'emulator reset' });
      return;
    default:
      sendNoEndpoint(res);
  }
}
