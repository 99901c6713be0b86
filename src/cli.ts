#!/usr/bin/env -S node --max-semi-space-size=8
/**
 * envsync's entry point: the process's arguments, environment, working directory and streams go to
 * `main` (src/main.ts), and the code it returns becomes the process's exit code.
 */
import { main } from './main.ts';

const code = await main({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
});
process.exitCode = code;
