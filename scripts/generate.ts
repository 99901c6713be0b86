/**
 * `npm run generate`: writes every generated file of the repository from its source (the list and
 * the sources are in scripts/generate/targets.ts).
 *
 *   node scripts/generate.ts [--check] [--root DIR] [FILE...]
 *
 * --check writes nothing: it names each file that is out of date and exits 1 if there is one.
 * --root reads and writes the files under DIR instead of this checkout (the tests use a copy).
 * FILEs (paths from the repository's root) limit the run to those files.
 */
import { parseArgs } from 'node:util';
import { REGENERATE, ROOT, staleFiles, writeStale } from './generate/targets.ts';

const { values, positionals } = parseArgs({
  options: { check: { type: 'boolean', default: false }, root: { type: 'string' } },
  allowPositionals: true,
});

const root = values.root ?? ROOT;
const stale = await staleFiles(root, positionals);
if (values.check) {
  for (const { file } of stale) {
    process.stderr.write(`${file.path} is out of date (generated from ${file.from})\n`);
  }
  if (stale.length > 0) process.stderr.write(`run "${REGENERATE}" to rewrite it\n`);
  process.exitCode = stale.length > 0 ? 1 : 0;
} else {
  const written = await writeStale(stale, root);
  for (const file of written) process.stdout.write(`wrote ${file}\n`);
  if (written.length === 0) process.stdout.write('every generated file is up to date\n');
}
