/**
 * A library module that exports a single function and is needed only when that function is
 * called, but that the library loads eagerly with everything it imports: undici's HTTP/2 client
 * (which loads node:http2) and pino's transports (which load node:worker_threads). envsync never
 * calls either (it speaks HTTP/1.1 and writes its logs itself), yet each costs a few MB of
 * resident memory and some milliseconds at every start.
 *
 * `deferModule` puts a stand-in for such a module in the CommonJS module cache before the library
 * loads: a function that, on its first call, loads the real module and hands the call on. So
 * nothing changes for a caller that does use it; it only loads later. Call it before the library
 * is first required; if the module is loaded already, it does nothing.
 */
export function deferModule(load: NodeJS.Require, specifier: string): void {
  const file = load.resolve(specifier);
  if (load.cache[file] !== undefined) return;
  type Target = (...args: unknown[]) => unknown;
  let real: Target | undefined;
  const standIn: Target = function (this: unknown, ...args) {
    if (real === undefined) {
      delete load.cache[file];
      real = load(file) as Target;
    }
    return real.apply(this, args);
  };
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
