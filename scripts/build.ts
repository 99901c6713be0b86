/**
 * `npm run build` (and `npm pack`, through `prepack`): compiles src/ into dist/ as plain
 * JavaScript for the package, since Node strips no types from files under node_modules. A
 * checkout runs src/ directly and needs no build. Then checks that no compiled module still names
 * a `.ts` file: the package ships none, so such a path would only fail once installed.
 */
import { spawnSync } from 'node:child_process';
import { readFile, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DIST = path.join(ROOT, 'dist');

await rm(DIST, { recursive: true, force: true });
const tsc = spawnSync('tsc', ['-p', 'tsconfig.build.json'], {
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
process.stdout.write(`build: compiled src/ into dist/\n`);
