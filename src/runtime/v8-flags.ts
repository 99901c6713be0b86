import { setFlagsFromString } from 'node:v8';

let tuned = false;

/**
 * V8's flags for a pass, set once its modules are loaded (on node's command line they would make
 * Node compile its own at every start): a large plan's peak heap near its live size, and no
 * optimizing compile of undici's HTTP parser, which a small run never earns back.
 */
export function tuneV8ForWork(): void {
  if (tuned) return;
  tuned = true;
  setFlagsFromString('--heap-growing-percent=20 --wasm-tiering-budget=100000000');
}
