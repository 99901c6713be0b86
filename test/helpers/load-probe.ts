/**
 * A probe that sees what a Node process loads, from inside it: given to the process with
 * `--import` (through NODE_OPTIONS), it records every package module it loads and, at exit,
 * which costly built-ins were loaded, into the JSON file PROBE_OUT names.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { tempDir } from './tmp.ts';

/** Built-ins that a CLI talking HTTP/1.1 never needs; Node loads them for its own fetch. */
export const HEAVY_BUILTINS = {
  http2: 'NativeModule http2',
  nodeFetch: 'NativeModule internal/deps/undici/undici',
  tls: 'NativeModule tls',
  workers: 'NativeModule worker_threads',
} as const;

/**
 * Built-ins that a command that only reads files and prints (`validate`, `--help`) does without:
 * `node:fs/promises` with the readline modules it loads, and `node:crypto` (see
 * src/runtime/builtins.ts).
 */
export const START_UP_BUILTINS = {
  crypto: 'NativeModule crypto',
  fsPromises: 'NativeModule internal/fs/promises',
  readline: 'NativeModule internal/readline/interface',
} as const;

// The probe must not load what it looks for: an ES import of node:fs would load the streams and
// node:fs/promises into every probed process.
const PROBE = `
import { registerHooks } from 'node:module';
const { writeFileSync } = process.getBuiltinModule('node:fs');
const packages = new Set();
registerHooks({
  load(url, context, next) {
    const name = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url)?.[1];
    if (name !== undefined) packages.add(name);
    return next(url, context);
  },
});
const present = (table) =>
  Object.entries(table)
    .filter(([, id]) => process.moduleLoadList.includes(id))
    .map(([name]) => name);
process.on('exit', () => {
  const loaded = present(${JSON.stringify(HEAVY_BUILTINS)});
  const startUp = present(${JSON.stringify(START_UP_BUILTINS)});
  writeFileSync(
    process.env.PROBE_OUT,
    JSON.stringify({ packages: [...packages].sort(), loaded, startUp }),
  );
});
`;

/**
 * What one probed process loaded: package names (sorted), and the names of the HEAVY_BUILTINS and
 * START_UP_BUILTINS it loaded.
 */
export interface Loaded {
  packages: string[];
  loaded: string[];
  startUp: string[];
}

/** Writes the probe into `tmp`; `env(name)` probes a process, `read(name)` says what it loaded. */
export async function loadProbe(tmp: Awaited<ReturnType<typeof tempDir>>) {
  const options = `--import=${pathToFileURL(await tmp.write('load-probe.mjs', PROBE)).href}`;
  return {
    env: (name: string): Record<string, string> => ({
      NODE_OPTIONS: options,
      PROBE_OUT: tmp.path(`${name}.loaded.json`),
    }),
    read: (name: string): Loaded =>
      JSON.parse(readFileSync(tmp.path(`${name}.loaded.json`), 'utf8')) as Loaded,
  };
}
