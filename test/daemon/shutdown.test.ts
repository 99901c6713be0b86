import { createServer, type Server } from 'node:net';
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

/** Starts `envsync run`, killed after the test if it is still running. */
function startRun(args: string[], env: Record<string, string> = {}) {
  const run = startEnvsync(['run', '--manifests', 'manifests', ...args], { cwd: tmp.dir, env });
  cleanups.push(() => run.kill());
  return run;
}

/** The exit code, or 'still running' when the process has not exited within the guard. */
async function codeWithin(run: LiveCli, ms: number): Promise<number | null | 'still running'> {
  const exit = await run.exitedWithin(ms);
  return exit === 'still running' ? exit : exit.code;
}

async function busyPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, server };
}

describe('envsync run on a busy --listen port', () => {
  it.each([
    ['with --emulator (the emulator does not stay up)', ['--emulator']],
    ['without --emulator', ['--api-url', 'http://127.0.0.1:9', '--state', 's.json']],
  ])('%s: exits 1 at once with a hint to use --listen', async (_title, flags) => {
    const { port } = await busyPort();
    const run = startRun([...flags, '--listen', `127.0.0.1:${port}`], { ENVSYNC_TOKEN: TOKEN });
    expect(await codeWithin(run, GUARD_MS)).toBe(1);
    expect(run.stderr()).toContain(
      `cannot listen on 127.0.0.1:${port}: the address is already in use`,
    );
    expect(run.stderr()).toContain('--listen HOST:PORT');
  });
});

describe('SIGTERM never waits out a failing API', () => {
  async function sigtermWhileRetrying(
    answer: { status: number; headers: Record<string, string> },
    extra: string[],
  ) {
    const fake = await startFakeApi((_req, res) => {
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end('{"message":"unavailable"}');
    });
    cleanups.push(() => fake.close());
    const run = startRun(
      [
        '--api-url',
        fake.url,
        '--listen',
        '127.0.0.1:0',
        '--state',
        's.json',
        '--interval',
        '0',
        '--shutdown-timeout',
        '30s',
        ...extra,
      ],
      { ENVSYNC_TOKEN: TOKEN },
    );
    await waitFor('a retry under way', () => run.stderr().includes('retrying'));
    run.child.kill('SIGTERM');
    return { code: await codeWithin(run, GUARD_MS), stderr: run.stderr() };
  }

  function expectPromptStop(result: { code: number | null | 'still running'; stderr: string }) {
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('"msg":"stopped"');
    expect(result.stderr).not.toContain('shutdown timeout');
  }

  it('during a Retry-After wait (503, Retry-After: 100): exits 0 well before the 30 s shutdown timeout', async () => {
    const result = await sigtermWhileRetrying({ status: 503, headers: { 'retry-after': '100' } }, [
      '--retry-delay',
      '10ms',
    ]);
    expect(result.code).toBe(0);
    expectPromptStop(result);
  });

  it('during a retry backoff (503, --retry-delay 20s): exits 0 well before the 30 s shutdown timeout', async () => {
    const result = await sigtermWhileRetrying({ status: 503, headers: {} }, [
      '--retry-delay',
      '20s',
    ]);
    expect(result.code).toBe(0);
    expectPromptStop(result);
  });
});
