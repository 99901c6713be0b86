/**
 * `npm run build` (and `npm pack`, through `prepack`): bundles src/ into dist/ as plain
 * JavaScript for the package, since Node strips no types from files under node_modules. A
 * checkout runs src/ directly and needs no build.
 *
 * The bundler is rolldown (vite's), with its defaults: envsync's modules in a few chunks at dist/'s
 * root, the package's dependencies and Node's built-ins left as imports. Type errors are not its
 * business: `tsc --noEmit` checks them (`npm test`).
 *
 * Then it checks that no output still names a `.ts` file: the package ships none, so a path the
 * bundler did not rewrite would only fail once installed.
 *
 * `--out-dir DIR` builds a runnable copy of the package into DIR instead, leaving the checkout's
 * dist/ alone: DIR/dist, DIR/bin, DIR/package.json, and DIR/node_modules linked to the checkout's.
 * The tests run the CLI from such a copy (see test/global-setup.ts).
 */
import { cp, mkdir, readFile, readdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'rolldown';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SRC = path.join(ROOT, 'src');
const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });
const OUT = values['out-dir'] === undefined ? undefined : path.resolve(values['out-dir']);
const DIST = OUT === undefined ? path.join(ROOT, 'dist') : path.join(OUT, 'dist');

const fail = (message: string): never => {
  process.stderr.write(`build: ${message}\n`);
  process.exit(1);
};

await rm(DIST, { recursive: true, force: true });
try {
  await build({
    cwd: ROOT,
    input: { cli: path.join(SRC, 'cli.ts') },
    platform: 'node',
    // The package's dependencies (bare specifiers) and Node's built-ins stay imports.
    external: [/^node:/, /^[^./]/],
    logLevel: 'warn',
    output: {
      dir: DIST,
      format: 'esm',
      entryFileNames: '[name].js',
      chunkFileNames: '[name]-[hash].js',
      comments: false,
    },
  });
} catch (error) {
  fail(`rolldown could not bundle src/: ${error instanceof Error ? error.message : String(error)}`);
}

/** A relative module path ending in `.ts`, in quotes: left behind by a path the bundler does not rewrite. */
const TS_PATH = /(['"`])\.{1,2}\/[^'"`\n]*\.ts\1/;
const problems: string[] = [];
for (const entry of await readdir(DIST, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
  const file = path.join(entry.parentPath, entry.name);
  const lines = (await readFile(file, 'utf8')).split('\n');
  lines.forEach((line, index) => {
    const match = TS_PATH.exec(line);
    if (match) problems.push(`${path.relative(ROOT, file)}:${index + 1}: ${match[0]}`);
  });
}
if (problems.length > 0) {
  fail(
    `compiled modules still name .ts files, which the package does not ship (load our own modules with import or import(), never a computed path):\n${problems.map((p) => `  ${p}`).join('\n')}`,
  );
}
if (OUT !== undefined) {
  await mkdir(OUT, { recursive: true });
  await cp(path.join(ROOT, 'package.json'), path.join(OUT, 'package.json'));
  await cp(path.join(ROOT, 'bin'), path.join(OUT, 'bin'), { recursive: true });
  await rm(path.join(OUT, 'node_modules'), { force: true });
  await symlink(path.join(ROOT, 'node_modules'), path.join(OUT, 'node_modules'), 'dir');
}
process.stdout.write(`build: bundled src/ into ${path.relative(process.cwd(), DIST) || '.'}\n`);
