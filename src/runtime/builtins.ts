import { createRequire } from 'node:module';
import type * as Crypto from 'node:crypto';
import type * as Fs from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import type * as Http from 'node:http';
import type * as Tls from 'node:tls';
import type * as Util from 'node:util';
import type * as V8 from 'node:v8';

/**
 * Node built-ins that are cheaper through `require` than through `import`, or needed on one path
 * only.
 *
 * - `node:http`: an ES `import` of it (even of one name) makes Node read every export of the
 *   module, and some are getters that load Node's own fetch and WebSocket stack, with node:http2,
 *   tls, zlib and workers: about 18 MB of resident memory and 40 ms, for names envsync never uses.
 *   `require` reads none of them. (`import type` costs nothing: it is erased.)
 * - `node:util`: the same, on a smaller scale: its ES namespace loads node:worker_threads, while
 *   envsync only wants `parseArgs`.
 * - `node:fs` and `node:fs/promises`: an ES `import` of `node:fs` reads its `promises` getter and
 *   its stream classes, which load `node:fs/promises`, readline, the REPL's history and the
 *   stream modules; `node:fs/promises` itself loads readline. That is about 30 of Node's own
 *   modules, 6 ms of every start of `validate` or `--help`, which use neither. Through `require`,
 *   `node:fs` is one module already loaded, and `node:fs/promises` loads when a path first uses it.
 * - `node:tls`: about 6 MB, and only a client given `--ca-file` needs it (undici loads it itself
 *   for an https connection).
 * - `node:crypto`: about 3 MB; a one-shot command needs it only to hash a saved plan, and the
 *   manifest reader only for the daemon's cache.
 */
const load = createRequire(import.meta.url);

export const http = (): typeof Http => load('node:http') as typeof Http;
export const tls = (): typeof Tls => load('node:tls') as typeof Tls;
export const util = (): typeof Util => load('node:util') as typeof Util;
export const fs = (): typeof Fs => load('node:fs') as typeof Fs;
export const fsPromises = (): typeof FsPromises => load('node:fs/promises') as typeof FsPromises;
export const v8 = (): typeof V8 => load('node:v8') as typeof V8;
export const crypto = (): typeof Crypto => load('node:crypto') as typeof Crypto;
