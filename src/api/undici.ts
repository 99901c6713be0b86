import { createRequire } from 'node:module';
import type { Agent as AgentClass, Pool as PoolClass } from 'undici';
import { deferModule } from '../runtime/lazy-module.ts';

/**
 * undici's Pool and Agent with the `request` API, and nothing else of undici. Its entry point loads
 * everything the package offers (fetch, WebSocket, caches, proxies, mocks) before any of it is
 * used: about 110 ms of CPU and 14 MB at every start, most of a small `plan`'s cost. envsync needs
 * only these two dispatchers and `request`, so this loads the modules undici's own entry point
 * assembles them from, and adds `request` to the dispatchers' prototype as it does.
 *
 * One more module is loaded only when used: undici's HTTP/2 client, which loads `node:http2` (about
 * 7 MB of resident memory and 10 to 20 ms at every start) although envsync never asks for HTTP/2
 * (`allowH2` stays off, so every connection speaks HTTP/1.1). A stand-in (src/lazy-module.ts)
 * loads the real one on its first call, so an HTTP/2 connection would still work.
 *
 * Loading the full package too (a test, say) is harmless: the modules are the same. The client's
 * tests run every request through these; a change of undici's layout fails them.
 */
const load = createRequire(import.meta.url);

deferModule(load, 'undici/lib/dispatcher/client-h2.js');
const Dispatcher = load('undici/lib/dispatcher/dispatcher.js') as { prototype: object };
if (!('request' in Dispatcher.prototype)) {
  Object.assign(Dispatcher.prototype, {
    request: load('undici/lib/api/api-request.js') as unknown,
  });
}

export const Pool = load('undici/lib/dispatcher/pool.js') as typeof PoolClass;
export const Agent = load('undici/lib/dispatcher/agent.js') as typeof AgentClass;
