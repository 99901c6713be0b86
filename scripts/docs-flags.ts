/** Writes docs/flags.md from the settings table (`npm run docs:flags`). */
import { writeFile } from 'node:fs/promises';
import { flagsDoc } from '../src/commands/flags-doc.ts';
import { allSettings } from '../src/config/flags.ts';

const target = new URL('../docs/flags.md', import.meta.url);
await writeFile(target, flagsDoc(await allSettings()));
process.stdout.write(`wrote ${target.pathname}\n`);
