import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';

/**
 * The envsync CLI the tests run: the compiled build test/global-setup.ts made for this run, or
 * the TypeScript sources in a project without that setup (the unit tests start no process).
 */
const built: string | undefined = inject('envsyncCli');
export const CLI: string = built ?? fileURLToPath(new URL('../../src/cli.ts', import.meta.url));
