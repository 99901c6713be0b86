/**
 * envsync requires a few packages' internal modules by path (undici's dispatchers, prom-client's
 * metric types) instead of their entry points, which load far more (docs/architecture.md,
 * "Start-up rules"). No package promises those paths across versions, so each such package is
 * pinned to one version, and every path src/ names must resolve in the installed package: an
 * upgrade that moves one fails here, not in a user's process.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

/** Every `load('package/inner/path')` or `load.resolve(...)` of a dependency in src/, by file. */
function internalPaths(): { file: string; specifier: string; dependency: string }[] {
  const found: { file: string; specifier: string; dependency: string }[] = [];
  const src = path.join(ROOT, 'src');
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const text = readFileSync(file, 'utf8');
    for (const [, specifier = ''] of text.matchAll(/\bload(?:\.resolve)?\(\s*'([^']+)'/g)) {
      const dependency = Object.keys(manifest.dependencies).find((name) =>
        specifier.startsWith(`${name}/`),
      );
      if (dependency !== undefined) found.push({ file, specifier, dependency });
    }
  }
  return found;
}

const paths = internalPaths();

describe('packages whose internals envsync requires by path', () => {
  it('are found in src/: undici and prom-client', () => {
    expect([...new Set(paths.map((p) => p.dependency))].sort()).toEqual(['prom-client', 'undici']);
  });

  it.each([...new Set(paths.map((p) => p.dependency))])(
    '%s is pinned to the installed version exactly',
    (dependency) => {
      const installed = (
        JSON.parse(
          readFileSync(path.join(ROOT, 'node_modules', dependency, 'package.json'), 'utf8'),
        ) as { version: string }
      ).version;
      expect(manifest.dependencies[dependency]).toBe(installed);
    },
  );

  it.each(paths.map((p) => [p.specifier, path.relative(ROOT, p.file), p.file]))(
    '%s (%s) is in the installed package',
    (specifier, _shown, file) => {
      expect(() => createRequire(file).resolve(specifier)).not.toThrow();
    },
  );
});
