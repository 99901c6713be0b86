import { fs } from './builtins.ts';

/** The package version, read once from package.json beside src/. */
export const VERSION: string = (
  JSON.parse(fs().readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;
