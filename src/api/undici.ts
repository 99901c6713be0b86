import { createRequire } from 'node:module';
import type { Agent as AgentClass, Pool as PoolClass } from 'undici';

/**
 * undici's Pool and Agent with the `request` API, and nothing else of undici. Its entry point loads
 * everything the package offers (fetch, WebSocket, caches, proxies, mocks) before any of it is
 * used: 130 ms of CPU and 17.5 MB of a small `plan` (docs/architecture.md, "Start-up rules").
 * This loads the modules undici's own entry point assembles these from, by path, and adds
 * `request` to the dispatchers' prototype as that entry point does. The paths are undici's
 * internals: package.json pins its version, and test/startup/package-internals.test.ts fails when
 * an upgrade moves one.
 */
const load = createRequire(import.meta.url);

/**
 * undici's HTTP/1.1 client requires its HTTP/2 client, which loads `node:http2` (53 ms of CPU and
 * 6 MB of a small `plan`, 3 MB of the settled daemon), though envsync never asks for HTTP/2
 * (`allowH2` stays off). A stand-in put in the CommonJS module cache first takes its place and
 * loads the real module on its first call, so an HTTP/2 connection would still work.
 */
function deferHttp2Client(): void {
  const file = load.resolve('undici/lib/dispatcher/client-h2.js');
  if (load.cache[file] !== undefined) return;
  let real: ((...args: unknown[]) => unknown) | undefined;
  const standIn = function (this: unknown, ...args: unknown[]): unknown {
    if (real === undefined) {
      delete load.cache[file];
      real = load(file) as (...args: unknown[]) => unknown;
    }
    return real.apply(this, args);
  };
  // A finished CommonJS module record: `require` returns its exports and loads nothing.
  const record = {
    id: file,
    filename: file,
    loaded: true,
    exports: standIn,
    children: [],
    paths: [],
  };
  load.cache[file] = record as unknown as NodeJS.Module;
}

deferHttp2Client();
const Dispatcher = load('undici/lib/dispatcher/dispatcher.js') as { prototype: object };
if (!('request' in Dispatcher.prototype)) {
  Object.assign(Dispatcher.prototype, {
    request: load('undici/lib/api/api-request.js') as unknown,
  });
}

export const Pool = load('undici/lib/dispatcher/pool.js') as typeof PoolClass;
export const Agent = load('undici/lib/dispatcher/agent.js') as typeof AgentClass;
