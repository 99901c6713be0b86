#!/usr/bin/env -S node --max-semi-space-size=8
/**
 * envsync's entry point: the process's arguments, environment, working directory and streams go to
 * `main` (src/main.ts), and the code it returns becomes the process's exit code.
 */
import module from 'node:module';
import { lazyOutput } from './runtime/stdio.ts';
import { main } from './main.ts';

// Cache compiled code between runs (in the OS temp folder; silently off where it cannot write):
// `main` loads the command it runs after this line, and start-up matters to a CI step.
module.enableCompileCache?.();

const code = await main({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: lazyOutput(1, () => process.stdout),
  stderr: lazyOutput(2, () => process.stderr),
});
process.exitCode = code;
