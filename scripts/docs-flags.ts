/**
 * `npm run docs:flags`: writes docs/flags.md alone, as `npm run generate` writes it with every
 * other generated file.
 */
import { staleFiles, writeStale } from './generate/targets.ts';

const written = await writeStale(await staleFiles(undefined, ['docs/flags.md']));
process.stdout.write(
  written.length > 0 ? 'wrote docs/flags.md\n' : 'docs/flags.md is up to date\n',
);
