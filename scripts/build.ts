/**
 * `npm run build` (and `npm pack`, through `prepack`): bundles src/ into dist/ as plain
 * JavaScript for the package, since Node strips no types from files under node_modules. A
 * checkout runs src/ directly and needs no build.
 *
 * The bundler is rolldown (vite's). It joins envsync's modules into a few chunks at dist/'s root,
 * split where the code imports lazily (each command, the daemon, the emulator), and leaves the
 * package's dependencies and Node's built-ins as imports. Fewer modules means less for Node to
 * resolve at every start: a one-shot command no longer resolves some 150 imports one by one.
 * Type errors are not its business: `tsc --noEmit` checks them (`npm test`).
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
import { build, type ChunkingContext, type CodeSplittingGroup } from 'rolldown';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SRC = path.join(ROOT, 'src');
const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });
const OUT = values['out-dir'] === undefined ? undefined : path.resolve(values['out-dir']);
const DIST = OUT === undefined ? path.join(ROOT, 'dist') : path.join(OUT, 'dist');

const fail = (message: string): never => {
  process.stderr.write(`build: ${message}\n`);
  process.exit(1);
};

/**
 * Chunks by path, for the commands whose start-up matters most. Each group takes the modules its
 * entries load statically that no earlier group took (see chunkGroups); rolldown splits what no
 * group takes as it would anyway. Without groups, every module shared by two differently-lazy
 * importers becomes a chunk of its own, and Node resolves, reads and links each one at every
 * start: `validate` loads 23 files (6 with the groups), `--help` 11 (4), `plan` 29 (7), and the
 * groups save 7 ms of `validate` and 8 ms of CPU of `--help` (docs/architecture.md, "Start-up
 * rules"). Grouping decides only where code is put, never whether it runs: a chunk still loads
 * when, and only when, something imports it.
 */
const CHUNK_GROUPS: readonly (readonly [name: string, entries: readonly string[]])[] = [
  // What every command loads: cli.ts's own imports.
  ['startup', ['cli.ts']],
  // The settings tables and renderers, which `--help` prints and every command reads.
  ['help', ['commands/help.ts']],
  // Reading and checking the manifests: all of `validate`.
  ['manifests', ['commands/validate.ts']],
  // A plan or sync pass: the state file, planning, the report, the HTTP client.
  ['pass', ['commands/plan.ts', 'commands/sync.ts']],
];

/**
 * CHUNK_GROUPS as rolldown's code-splitting groups. Which group a module joins is read from the
 * bundler's own module graph (static imports only: `import()` and `import type` are not in
 * `importedIds`), once, when rolldown first asks, after every module is parsed. Earlier groups have
 * the higher priority, so a module another group's module also needs stays where it was put.
 */
function chunkGroups(): CodeSplittingGroup[] {
  let groupOf: Map<string, string> | undefined;
  const assign = (ctx: ChunkingContext): Map<string, string> => {
    const assigned = new Map<string, string>();
    for (const [name, entries] of CHUNK_GROUPS) {
      const pending = entries.map((file) => path.join(SRC, file));
      for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
        if (assigned.has(id) || !id.startsWith(SRC)) continue;
        assigned.set(id, name);
        pending.push(...(ctx.getModuleInfo(id)?.importedIds ?? []));
      }
    }
    assigned.delete(path.join(SRC, 'cli.ts')); // the entry chunk keeps the entry itself
    return assigned;
  };
  return CHUNK_GROUPS.map(([name], index) => ({
    name: (id, ctx) => ((groupOf ??= assign(ctx)).get(id) === name ? name : null),
    priority: CHUNK_GROUPS.length - index,
    debugName: name,
  }));
}

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
      codeSplitting: { groups: chunkGroups() },
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
