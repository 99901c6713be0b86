import { setFlagsFromString } from 'node:v8';

let tuned = false;

/**
 * V8's flags for the work of a pass, set once where work that talks to the API starts, after its
 * modules are loaded: `--heap-growing-percent=20` keeps a large plan's peak heap near its live
 * size; `--wasm-tiering-budget=100000000` spares a small run the optimizing compile of undici's
 * HTTP parser. On node's command line they would make Node compile its own modules at every start.
 */
export function tuneV8ForWork(): void {
  if (tuned) return;
  tuned = true;
  setFlagsFromString('--heap-growing-percent=20 --wasm-tiering-budget=100000000');
}
