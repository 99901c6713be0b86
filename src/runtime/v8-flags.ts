import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings for the work of a pass, set when that work starts rather than on node's command line
 * (measured on the compiled package; docs/architecture.md, "Start-up rules"):
 *
 * - `--heap-growing-percent=20`: V8 lets the heap grow to several times its live size between
 *   full collections; a large tree's peak is then mostly slack. A plan of 300,000 environments
 *   peaks 109 MB lower with it.
 * - `--wasm-tiering-budget=100000000`: V8 compiles undici's HTTP parser (WebAssembly) again with
 *   its optimizing compiler after the first few responses: 135 ms of CPU and 10 MB of a small
 *   `plan`, 10 MB of the settled daemon, which a small run never earns back. With this budget only
 *   a large run tiers up.
 *
 * Not in the shebang: a V8 flag on the command line (other than a heap size) changes V8's flag
 * hash, and Node then rejects the compiled code it ships for its own modules and compiles them
 * again at every start (8 ms of `validate`). Set at run time, the flags apply to everything V8
 * does next (each heap resize, each WebAssembly compile), and cost nothing if every module the
 * work needs is loaded already: a module loaded after them is compiled anew, so they are set
 * after, never before, the modules a command imports.
 */
const FLAGS = '--heap-growing-percent=20 --wasm-tiering-budget=100000000';

let tuned = false;

/**
 * Sets FLAGS once per process. Called where work that talks to the API starts, once its code is
 * loaded: at the start of a `plan` or `sync` pass, before the manifests fill the heap; before the
 * daemon's first pass; and in `connect`, before any other command's first request. `validate`
 * keeps V8's defaults.
 */
export function tuneV8ForWork(): void {
  if (tuned) return;
  tuned = true;
  setFlagsFromString(FLAGS);
}
