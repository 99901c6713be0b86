import { v8 } from './builtins.ts';

/**
 * V8 settings for the work of a pass, set when that work starts rather than on node's command line.
 *
 * - `--heap-growing-percent=20`: V8 lets the heap grow to several times its live size between
 *   full collections; a large tree's peak is then mostly slack (docs/performance.md).
 * - `--wasm-tiering-budget=100000000`: V8 compiles undici's HTTP parser (WebAssembly) again with
 *   its optimizing compiler after the first few responses, about 40 ms of CPU and 9 MB that a small
 *   run never earns back; with this budget only a large run tiers up.
 *
 * Why not in the shebang: a V8 flag on the command line (other than a heap size) changes V8's flag
 * hash, and Node then rejects the compiled code it ships for its own modules and compiles each of
 * them again at every start, about 11 ms of every command, `--help` included. Set here, after the
 * modules a path needs are loaded, the flags cost nothing; V8 reads both when it uses them (each
 * heap resize, each WebAssembly compile), so they still apply to all of the work that follows.
 */
const FLAGS = '--heap-growing-percent=20 --wasm-tiering-budget=100000000';

let tuned = false;

/**
 * Sets FLAGS once per process. Every path that talks to the API sets them as its HTTP client loads
 * (src/api/undici.ts), before it reads the manifests; `validate`, which only reads files, keeps
 * V8's defaults (node:v8 would load Node's stream modules, which it otherwise never needs).
 */
export function tuneV8ForWork(): void {
  if (tuned) return;
  tuned = true;
  v8().setFlagsFromString(FLAGS);
}
