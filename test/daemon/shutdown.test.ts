import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEnvsync, type LiveCli } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'shutdown-test-token-0c4f';
/** A generous guard: "exits within a second" is checked as "has exited before this". */
const GUARD_MS = 10_000;

let tmp: Awaited<ReturnType<typeof tempDir>>;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  tmp = await tempDir();
  await tmp.write('manifests/acme.yaml', 'org: acme\nenvironments: []\n');
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
  await tmp.cleanup();
});

/** Starts `envsync run` with the token, killed after the test if it is still running. */
function startRun(args: string[], more: string[] = []) {
  const run = startEnvsync(['run', '--manifests', 'manifests', ...args, ...more], {
    cwd: tmp.dir,
    env: { ENVSYNC_TOKEN: TOKEN },
  });
  cleanups.push(() => run.kill());
  return run;
}

/** The exit code, or 'still running' when the process has not exited within the guard. */
async function codeWithin(run: LiveCli, ms: number): Promise<number | null | 'still running'> {
  const exit = await run.exitedWithin(ms);
  return exit === 'still running' ? exit : exit.code;
}

async function busyPort(): Promise<{ port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port };
}

describe('envsync run on a busy --listen port', () => {
  it.each([
    ['with --emulator (the emulator does not stay up)', ['--emulator']],
    ['without --emulator', ['--api-url', 'http://127.0.0.1:9', '--state', 's.json']],
  ])('%s: exits 1 at once with a hint to use --listen', async (_title, flags) => {
    const { port } = await busyPort();
    const run = startRun([...flags, '--listen', `127.0.0.1:${port}`]);
    expect(await codeWithin(run, GUARD_MS)).toBe(1);
    expect(run.stderr()).toContain(
      `cannot listen on 127.0.0.1:${port}: the address is already in use`,
    );
    expect(run.stderr()).toContain('--listen HOST:PORT');
  });
});

describe('SIGTERM never waits out a failing API', () => {
  it.each([
    ['a Retry-After wait (503, Retry-After: 100)', { 'retry-after': '100' }, '10ms'],
    ['a retry backoff (503, --retry-delay 20s)', {}, '20s'],
  ])('during %s: exits 0 well before the 30 s shutdown timeout', async (_title, headers, delay) => {
    const fake = await startFakeApi((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json', ...headers });
      res.end('{"message":"unavailable"}');
    });
    cleanups.push(() => fake.close());
    const run = startRun(
      ['--api-url', fake.url, '--listen', '127.0.0.1:0', '--state', 's.json', '--interval', '0'],
      ['--shutdown-timeout', '30s', '--retry-delay', delay],
    );
    await waitFor('a retry under way', () => run.stderr().includes('retrying'));
    run.child.kill('SIGTERM');
    expect(await codeWithin(run, GUARD_MS)).toBe(0);
    expect(run.stderr()).toContain('"msg":"stopped"');
    expect(run.stderr()).not.toContain('shutdown timeout');
  });
});
