import { createRequire } from 'node:module';
import type { Agent as AgentClass, Pool as PoolClass } from 'undici';

/**
 * undici's Pool and Agent with the request API, and nothing else of undici. Its entry point loads
 * everything the package offers (fetch, WebSocket, caches, proxies, mocks) before any of it is
 * used: about 110 ms of CPU and 14 MB at every start, most of a small `plan`'s cost. envsync needs
 * only these two dispatchers and their `request`, so this loads the modules undici's own entry
 * point assembles them from, and adds the request API to the dispatchers' prototype as it does.
 * Loading the full package too (a test, say) is harmless: the modules are the same.
 * The client's tests run every request through these; a change of undici's layout fails them.
 */
const load = createRequire(import.meta.url);
const Dispatcher = load('undici/lib/dispatcher/dispatcher.js') as { prototype: object };
const api = load('undici/lib/api/index.js') as Record<string, unknown>;
if (!('request' in Dispatcher.prototype)) Object.assign(Dispatcher.prototype, api);

export const Pool = load('undici/lib/dispatcher/pool.js') as typeof PoolClass;
export const Agent = load('undici/lib/dispatcher/agent.js') as typeof AgentClass;
