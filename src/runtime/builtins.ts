import { createRequire } from 'node:module';
import type * as Crypto from 'node:crypto';
import type * as Fs from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import type * as Http from 'node:http';
import type * as Tls from 'node:tls';
import type * as Util from 'node:util';

/**
 * Node built-ins that envsync loads with `require`, when first used, instead of an ES `import`.
 *
 * An ES import of a built-in, even of one name, makes Node read every export of it, and some are
 * getters that load more of Node: `node:http`'s load Node's own fetch and WebSocket stack,
 * `node:fs`'s load `node:fs/promises` and readline, `node:util`'s load worker threads. `require`
 * reads none of them, and loading on first use keeps a built-in off the paths that never use it.
 * Measured on the compiled package, against an ES import where each is used (interleaved runs on
 * the examples, docs/architecture.md "Start-up rules"):
 *
 * - `node:fs`, `node:fs/promises`: 5–8.5 ms and 1.4 MB of `validate`;
 * - `node:util` (for `parseArgs`): 3–5 ms and 0.9 MB of every command that reads flags;
 * - `node:crypto` (the daemon's file cache, saved plans): 6–9 ms and 1.4 MB of `validate`;
 * - `node:tls` (only for `--ca-file`): 42–47 ms of CPU and 5.7 MB of a small `plan`;
 * - `node:http` (the daemon's and the emulator's servers): 5.2 MB of the settled daemon.
 *
 * `.oxlintrc.json` refuses an ES import of these in src/ (`import type` is erased, so allowed).
 */
const load = createRequire(import.meta.url);

/**
 * node:fs and node:fs/promises without the calls that open or read a file: a file is opened to be
 * read only by read-file.ts (a regular file, within a size and a time), and to be written whole
 * with a handle by write-file.ts. `.oxlintrc.json` also refuses `readFile`, `readFileSync`,
 * `createReadStream`, `openSync` and `readSync` elsewhere in src/.
 */
type FsWithoutOpen = Omit<
  typeof Fs,
  | 'open'
  | 'openSync'
  | 'openAsBlob'
  | 'read'
  | 'readSync'
  | 'readv'
  | 'readvSync'
  | 'readFile'
  | 'readFileSync'
  | 'createReadStream'
  | 'promises'
>;
type FsPromisesWithoutOpen = Omit<typeof FsPromises, 'open' | 'readFile'>;

export const http = (): typeof Http => load('node:http') as typeof Http;
export const tls = (): typeof Tls => load('node:tls') as typeof Tls;
export const util = (): typeof Util => load('node:util') as typeof Util;
export const fs = (): FsWithoutOpen => load('node:fs') as typeof Fs;
export const fsPromises = (): FsPromisesWithoutOpen =>
  load('node:fs/promises') as typeof FsPromises;
export const crypto = (): typeof Crypto => load('node:crypto') as typeof Crypto;
