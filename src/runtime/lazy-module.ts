/**
 * A library module that is needed only when used, but that the library loads eagerly with
 * everything it imports: undici's HTTP/2 client (which loads node:http2), pino's transports
 * (node:worker_threads), and the OpenTelemetry API that prom-client's CPU metric loads for
 * exemplars (some 50 modules). envsync uses none of them (it speaks HTTP/1.1, writes its logs
 * itself and enables no exemplars), yet each costs MBs of resident memory and milliseconds at
 * every start.
 *
 * `deferModule` puts a stand-in for such a module in the CommonJS module cache before the library
 * loads it. On first use the stand-in loads the real module and hands the use on, so nothing
 * changes for a caller that does use it; it only loads later. Two shapes of module:
 *
 * - `function`: the module exports one function; the stand-in is a function that forwards calls.
 * - `object`: the module exports an object of values; the stand-in forwards reading a property
 *   (and `in`), which is all these libraries do with it.
 *
 * Call it before the library is first required. If the module is loaded already, or is not where
 * `specifier` says (another version of the library), it does nothing.
 */
export function deferModule(
  load: NodeJS.Require,
  specifier: string,
  shape: 'function' | 'object' = 'function',
): void {
  let file: string;
  try {
    file = load.resolve(specifier);
  } catch {
    // Not where this version of the library keeps it: the library then loads what it loads.
    // (test/startup/loaded-modules.test.ts notices the lost saving.)
    return;
  }
  if (load.cache[file] !== undefined) return;
  let real: unknown;
  const loadReal = (): unknown => {
    if (real === undefined) {
      delete load.cache[file];
      real = load(file);
    }
    return real;
  };
  const standIn: unknown =
    shape === 'function'
      ? function (this: unknown, ...args: unknown[]) {
          return (loadReal() as (...a: unknown[]) => unknown).apply(this, args);
        }
      : new Proxy(
          {},
          {
            get: (_target, key) => Reflect.get(loadReal() as object, key),
            has: (_target, key) => Reflect.has(loadReal() as object, key),
          },
        );
  // A finished CommonJS module record: `require` returns its exports and loads nothing.
  const record = {
    id: file,
    filename: file,
    loaded: true,
    exports: standIn,
    children: [],
    paths: [],
  };
  load.cache[file] = record as unknown as NodeJS.Module;
}
