/**
 * deferModule (src/runtime/lazy-module.ts): a module a library loads eagerly is loaded only on first use,
 * and then behaves as itself. Real CommonJS modules in a temporary folder, each counting its own
 * loads in a global.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deferModule } from '../../src/runtime/lazy-module.ts';
import { tempDir } from '../helpers/tmp.ts';

type Counted = typeof globalThis & { lazyModuleLoads?: Record<string, number> };
const loads = () => (globalThis as Counted).lazyModuleLoads ?? {};

let tmp: Awaited<ReturnType<typeof tempDir>>;
let load: NodeJS.Require;

beforeAll(async () => {
  tmp = await tempDir();
  const counting = (name: string, body: string) =>
    `globalThis.lazyModuleLoads ??= {};\nglobalThis.lazyModuleLoads[${JSON.stringify(name)}] = (globalThis.lazyModuleLoads[${JSON.stringify(name)}] ?? 0) + 1;\n${body}`;
  await tmp.write(
    'node_modules/lib/heavy-fn.js',
    counting('fn', 'module.exports = function (a, b) { return [this && this.tag, a + b]; };'),
  );
  await tmp.write(
    'node_modules/lib/heavy-obj.js',
    counting('obj', 'module.exports = { answer: 42, twice: (x) => 2 * x };'),
  );
  await tmp.write(
    'node_modules/lib/index.js',
    "const fn = require('./heavy-fn.js');\nconst obj = require('./heavy-obj.js');\nmodule.exports = { fn, obj };",
  );
  load = createRequire(tmp.path('main.js'));
});
afterAll(async () => {
  for (const file of Object.keys(load.cache)) if (file.startsWith(tmp.dir)) delete load.cache[file];
  delete (globalThis as Counted).lazyModuleLoads;
  await tmp.cleanup();
});

describe('deferModule', () => {
  it('loads neither module with the library, each once on first use, and they work as before', () => {
    deferModule(load, 'lib/heavy-fn.js');
    deferModule(load, 'lib/heavy-obj.js', 'object');
    const lib = load('lib') as {
      fn: (this: unknown, a: number, b: number) => unknown;
      obj: { answer: number; twice: (x: number) => number };
    };
    expect(loads()).toEqual({});
    // A function keeps its `this` and arguments.
    expect(lib.fn.call({ tag: 'mine' }, 2, 3)).toEqual(['mine', 5]);
    expect(loads()).toEqual({ fn: 1 });
    expect(lib.fn(1, 1)).toEqual([undefined, 2]);
    expect('answer' in lib.obj).toBe(true);
    expect(lib.obj.answer).toBe(42);
    expect(lib.obj.twice(21)).toBe(42);
    expect(loads()).toEqual({ fn: 1, obj: 1 });
    // The real modules are in the cache now, as if loaded normally.
    expect(load('lib/heavy-obj.js')).toEqual({ answer: 42, twice: expect.any(Function) });
    expect(loads()).toEqual({ fn: 1, obj: 1 });
  });

  it('does nothing for a module that is not there (another version of the library)', () => {
    expect(() => deferModule(load, 'lib/renamed-since.js')).not.toThrow();
    expect(() => load('lib/renamed-since.js')).toThrow(/Cannot find module/);
  });

  it('does nothing to a module that is loaded already', () => {
    const before = load('lib/heavy-fn.js') as unknown;
    deferModule(load, 'lib/heavy-fn.js');
    expect(load('lib/heavy-fn.js')).toBe(before);
  });
});
