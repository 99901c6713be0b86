/**
 * `npm run build` (and `npm pack`, through `prepack`): compiles src/ into dist/ as plain
 * JavaScript for the package, since Node strips no types from files under node_modules. A
 * checkout runs src/ directly and needs no build. Then checks that no compiled module still names
 * a `.ts` file: the package ships none, so such a path would only fail once installed.
 *
 * `--out-dir DIR` builds a runnable copy of the package into DIR instead, leaving the checkout's
 * dist/ alone: DIR/dist, DIR/bin, DIR/package.json, and DIR/node_modules linked to the checkout's.
 * The tests run the CLI from such a copy (see test/global-setup.ts).
 */
import { spawnSync } from 'node:child_process';
import { cp, mkdir, readFile, readdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });
const OUT = values['out-dir'] === undefined ? undefined : path.resolve(values['out-dir']);
const DIST = OUT === undefined ? path.join(ROOT, 'dist') : path.join(OUT, 'dist');

await rm(DIST, { recursive: true, force: true });
const tsc = spawnSync('tsc', ['-p', 'tsconfig.build.json', '--outDir', DIST], {
  cwd: ROOT,
  stdio: 'inherit',
  // Run by npm or by hand: either way the project's own compiler.
  env: {
    ...process.env,
    PATH: `${path.join(ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env['PATH'] ?? ''}`,
  },
});
if (tsc.status !== 0) {
  process.stderr.write(
    `build: tsc -p tsconfig.build.json failed (${tsc.error?.message ?? `exit ${tsc.status}`})\n`,
  );
  process.exit(1);
}

/**
 * A relative module path ending in `.ts`, in quotes, other than one given to ownModule (which
 * turns it into `.js` when built): left behind by a path the compiler does not rewrite.
 */
const TS_PATH = /(?<!ownModule\()(['"`])\.{1,2}\/[^'"`\n]*\.ts\1/;
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
  process.stderr.write(
    `build: compiled modules still name .ts files, which the package does not ship (give such a path through ownModule in src/own-module.ts):\n${problems.map((p) => `  ${p}\n`).join('')}`,
  );
  process.exit(1);
}
if (OUT !== undefined) {
  await mkdir(OUT, { recursive: true });
  await cp(path.join(ROOT, 'package.json'), path.join(OUT, 'package.json'));
  await cp(path.join(ROOT, 'bin'), path.join(OUT, 'bin'), { recursive: true });
  await rm(path.join(OUT, 'node_modules'), { force: true });
  await symlink(path.join(ROOT, 'node_modules'), path.join(OUT, 'node_modules'), 'dir');
}
process.stdout.write(`build: compiled src/ into ${path.relative(process.cwd(), DIST) || '.'}\n`);
