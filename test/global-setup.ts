/**
 * Builds envsync once per test run, as the package ships it (compiled JavaScript, by the
 * project's own build step), into a temporary folder, and gives the tests its CLI. Every CLI and
 * emulator process the tests start then runs that build: the code under test is the code users
 * install, and each process is spared the type stripper's start-up (about 55 ms of CPU a
 * process, hundreds of processes a run). `npm start` and the launcher's own tests still run the
 * TypeScript sources.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The compiled CLI (`dist/cli.js` of a build made for this run). */
    envsyncCli: string;
  }
}

const BUILD = fileURLToPath(new URL('../scripts/build.ts', import.meta.url));

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(path.join(tmpdir(), 'envsync-test-build-'));
  const build = spawnSync(process.execPath, [BUILD, '--out-dir', dir], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (build.status !== 0) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(
      `the build for the tests failed (${build.error?.message ?? `exit ${build.status}`}):\n${build.stdout}${build.stderr}`,
    );
  }
  project.provide('envsyncCli', path.join(dir, 'dist', 'cli.js'));
  return () => rm(dir, { recursive: true, force: true });
}
