#!/usr/bin/env -S node --max-semi-space-size=8
/** envsync's entry point: the process's arguments, environment and streams to `main`. */
import { main } from './main.ts';
import { abandonedReads } from './runtime/read-file.ts';

const code = await main({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
});
process.exitCode = code;
// A read abandoned at its deadline (a file system that stopped answering) still waits in Node's
// thread pool and would hold the process: once what was written is out, the process ends.
if (abandonedReads() > 0) {
  await Promise.all(
    [process.stdout, process.stderr].map(
      (stream) => new Promise((resolve) => stream.write('', resolve)),
    ),
  );
  process.exit(code);
}
