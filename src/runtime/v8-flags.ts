import { setFlagsFromString } from 'node:v8';

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
 * Sets FLAGS once per process. Called where work that talks to the API starts, once its code is
 * loaded (a flag set earlier would make Node compile the modules loaded after it anew): at the
 * start of a pass of `plan` or `sync`, before the manifests fill the heap; before the daemon's
 * first pass; and in `connect`, before any other command's first request. `validate` keeps V8's
 * defaults.
 */
export function tuneV8ForWork(): void {
  if (tuned) return;
  tuned = true;
  setFlagsFromString(FLAGS);
}
