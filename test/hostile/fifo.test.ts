/**
 * Files that are not files, at every path envsync reads (a FIFO nobody writes to, a socket, a
 * device, a directory) and files over their limit: each refused at once, by name, exit 1; nothing
 * hangs (every run has a safety net). Files read with promises are read by runs in this process (a
 * read that waited would hold only a thread of libuv's pool); the manifests folder is read
 * synchronously, so those runs, like the daemon a test signals, are child processes.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  abandonedReads,
  FileReadError,
  readRegularFile,
  readRegularText,
  type OpenForRead,
} from '../../src/runtime/read-file.ts';
import { envsync, envsyncInProcess, startEnvsync, type LiveCli } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

/** Random-looking: any 12 characters of it are masked in every output. */
const TOKEN = 'fF9q4Tq9Lm2Zx7Vb';
/** A safety net for a loaded machine, not a timing: a run that hangs fails here. */
const WAIT_MS = 60_000;

const manifest = (org: string) =>
  `org: ${org}\nenvironments:\n  - {name: prod, type: S3, description: p}\n`;

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  tmp = await tempDir('envsync-fifo-');
  api = await startTestEmulator({ profile: 'spec', tokens: [{ token: TOKEN, orgs: null }] });
  await tmp.write('manifests/acme.yaml', manifest('acme'));
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
  await api.close();
  await tmp.cleanup();
});

/** Makes a FIFO at `relative` (below the temp folder); nothing ever writes to it. */
async function fifo(relative: string): Promise<string> {
  const file = tmp.path(relative);
  await mkdir(tmp.path(relative, '..'), { recursive: true });
  execFileSync('mkfifo', [file]);
  return file;
}

/** A Unix socket listening at `relative`, closed after the test. */
async function socket(relative: string): Promise<string> {
  const file = tmp.path(relative);
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(file, resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return file;
}

/** The flags a command needs to reach the emulator, reading the manifests of the temp folder. */
const apiArgs = () => ['--manifests', 'manifests', '--api-url', api.url, '--retry-delay', '10ms'];

/** Runs the CLI in a child process in the temp folder, with the token in the environment. */
const run = (args: string[], env: Record<string, string> = { ENVSYNC_TOKEN: TOKEN }) =>
  envsync(args, { cwd: tmp.dir, env, timeoutMs: WAIT_MS });

/** `run` in this process: `run` and `emulator` only for a start that fails before any wait. */
const runHere = (args: string[], env: Record<string, string> = { ENVSYNC_TOKEN: TOKEN }) =>
  envsyncInProcess(args, {
    cwd: tmp.dir,
    env,
    timeoutMs: WAIT_MS,
    endsBeforeStart: args[0] === 'run' || args[0] === 'emulator',
  });

const FIFO = 'a FIFO (named pipe), not a regular file';

describe('a file envsync reads that is not a regular file, or too large: refused at once, by name, exit 1, nothing sent', () => {
  const daemon = () => [
    'run',
    ...apiArgs(),
    ...'--state state.json --listen 127.0.0.1:0'.split(' '),
  ];
  const secret = (flag: string, file: string) =>
    `${flag} ${tmp.path(file)} is ${FIFO}: point ${flag} at a file, or leave the flag out`;
  const cases: [string, (() => Promise<unknown>) | string, () => string[], () => string][] = [
    [
      'a FIFO as the token file (plan)',
      'token',
      () => ['plan', ...apiArgs(), '--token-file', 'token'],
      () => `envsync plan: token file token is ${FIFO}: point --token-file at a file`,
    ],
    [
      'a FIFO as the config file (validate)',
      'envsync.yaml',
      () => ['validate', '--manifests', 'manifests', '--config', 'envsync.yaml'],
      () =>
        `envsync validate: config file ${tmp.path('envsync.yaml')} is ${FIFO}: point --config at a file`,
    ],
    [
      'a FIFO as --ca-file (sync)',
      'ca.pem',
      () => ['sync', ...apiArgs(), '--ca-file', 'ca.pem'],
      () => `envsync sync: --ca-file ca.pem: is ${FIFO}: point --ca-file at a PEM file`,
    ],
    [
      'a FIFO as the state file (plan)',
      'state.json',
      () => ['plan', ...apiArgs(), '--state', 'state.json'],
      () =>
        `envsync plan: state file ${tmp.path('state.json')} is ${FIFO}: point --state at a file, or at a path where envsync may create one`,
    ],
    [
      'a FIFO as a saved plan (sync --plan)',
      'plan.json',
      () => ['sync', ...apiArgs(), '--state', 'state.json', '--plan', 'plan.json'],
      () =>
        `envsync sync: --plan plan.json: is ${FIFO}: point --plan at the file "envsync plan --out" wrote`,
    ],
    [
      "a FIFO as the emulator's --data",
      'data.json',
      () => ['emulator', '--port', '0', '--data', 'data.json'],
      () =>
        `envsync emulator: --data data.json: is ${FIFO}: point --data at a file, or at a path where the emulator may create one`,
    ],
    [
      "a FIFO as the daemon's token file",
      'token',
      () => [...daemon(), '--token-file', 'token'],
      () => `token file token is ${FIFO}: point --token-file at a file`,
    ],
    [
      "a FIFO as the daemon's notify secret file",
      'notify-secret',
      () => [
        ...daemon(),
        '--notify-url',
        'http://127.0.0.1:9/hook',
        '--notify-secret-file',
        'notify-secret',
      ],
      () => secret('--notify-secret-file', 'notify-secret'),
    ],
    [
      "a FIFO as the daemon's webhook secret file",
      'webhook-secret',
      () => [...daemon(), '--webhook-secret-file', 'webhook-secret'],
      () => secret('--webhook-secret-file', 'webhook-secret'),
    ],
    [
      'a directory as the token file',
      () => mkdir(tmp.path('secrets')),
      () => ['plan', ...apiArgs(), '--token-file', 'secrets'],
      () => 'token file secrets is a directory, not a regular file: point --token-file at a file',
    ],
    [
      'a directory as the state file',
      () => mkdir(tmp.path('state.json')),
      () => ['sync', ...apiArgs(), '--state', 'state.json'],
      () =>
        `state file ${tmp.path('state.json')} is a directory, not a regular file: point --state at a file`,
    ],
    [
      '/dev/zero as the token file',
      async () => undefined,
      () => ['plan', ...apiArgs(), '--token-file', '/dev/zero'],
      () => 'token file /dev/zero is a character device, not a regular file',
    ],
    [
      'a socket as the config file',
      () => socket('envsync.sock'),
      () => ['validate', '--manifests', 'manifests', '--config', 'envsync.sock'],
      () => `config file ${tmp.path('envsync.sock')} is a socket, not a regular file`,
    ],
    [
      'a token file over 64 KiB',
      () => tmp.write('token', 'A'.repeat(64 * 1024 + 1)),
      () => ['plan', ...apiArgs(), '--token-file', 'token'],
      () => 'token file token is larger than the limit of 64 KiB for a token file',
    ],
    [
      'a config file over 1 MiB',
      () => tmp.write('envsync.yaml', `# ${'x'.repeat(1024 * 1024)}\n`),
      () => ['validate', '--manifests', 'manifests', '--config', 'envsync.yaml'],
      () =>
        `config file ${tmp.path('envsync.yaml')} is larger than the limit of 1 MiB for a config file`,
    ],
  ];
  it.each(cases)('%s', async (_what, make, args, message) => {
    await (typeof make === 'string' ? fifo(make) : make());
    // The emulator opens --data from the process's working directory: its own, in a child.
    const result = await (args()[0] === 'emulator' ? run : runHere)(args());
    expect(result).toMatchObject({ code: 1, stderr: expect.stringContaining(message()) });
    expect(await api.getRequests()).toEqual([]);
  });
});

describe('a FIFO in --token-dir: that org fails, by name, and the others go on', () => {
  it('sync applies beta (a token file) and fails acme (a FIFO), exit 1', async () => {
    await tmp.write('manifests/beta.yaml', manifest('beta'));
    await tmp.write('tokens/beta', `${TOKEN}\n`);
    await fifo('tokens/acme');
    const result = await runHere(
      ['sync', ...apiArgs(), ...'--state state.json --token-dir tokens'.split(' ')],
      {},
    );
    expect(result.stdout).toContain(`token file tokens/acme is ${FIFO}`);
    expect(result.code).toBe(1);
    expect(Object.keys((await api.getStore()).orgs)).toEqual(['beta']);
  });
});

describe('a FIFO in the manifests folder: a located problem, never skipped, never waited on', () => {
  it('a FIFO named *.yaml: validate names it and exits 1; sync applies the other orgs and exits 1', async () => {
    await tmp.write('manifests/beta.yaml', manifest('beta'));
    await fifo('manifests/pipe.yaml');
    const problem = `manifests/pipe.yaml:1:1 is ${FIFO}: a manifest must be a file; remove it, or leave it out with .envsyncignore`;
    const validate = await run(['validate', '--manifests', 'manifests']);
    expect(validate).toMatchObject({ code: 1, stdout: expect.stringContaining(problem) });

    const sync = await run(['sync', ...apiArgs(), '--state', 'state.json']);
    expect(sync).toMatchObject({ code: 1, stdout: expect.stringContaining(problem) });
    expect(Object.keys((await api.getStore()).orgs).sort()).toEqual(['acme', 'beta']);
  });

  it('a socket named *.yaml is refused by name as well', async () => {
    await socket('manifests/sock.yaml');
    const validate = await run(['validate', '--manifests', 'manifests']);
    expect(validate.stdout).toContain(
      'manifests/sock.yaml:1:1 is a socket, not a regular file: a manifest must be a file',
    );
    expect(validate.code).toBe(1);
  });

  it('a policy file and .envsyncignore: each a problem where it is named, the org held back', async () => {
    await tmp.write(
      'manifests/acme.yaml',
      `org: acme\npolicies:\n  - name: p1\n    file: p1.yaml\n${manifest('acme').slice('org: acme\n'.length)}`,
    );
    await fifo('manifests/p1.yaml');
    await fifo('manifests/.envsyncignore');
    const validate = await run(['validate', '--manifests', 'manifests']);
    expect(validate.stdout).toContain(
      `manifests/acme.yaml:4:11 policies[0].file: policy file "p1.yaml": is ${FIFO} (manifests/p1.yaml)`,
    );
    expect(validate.stdout).toContain(
      `manifests/.envsyncignore:1:1 is ${FIFO}: .envsyncignore must be a file`,
    );
    expect(validate.code).toBe(1);
  });
});

describe("a FIFO at the state file's lock", () => {
  it('fails the write ahead of the org with the message: nothing is sent, exit 1', async () => {
    const lock = await fifo('state.json.lock');
    const sync = await runHere(['sync', ...apiArgs(), '--state', 'state.json']);
    expect(sync.stderr).toContain(
      `the state file's lock ${lock} is ${FIFO}: delete it (envsync creates the lock as a file, and deletes it when done)`,
    );
    expect(sync.code).toBe(1);
    expect((await api.getRequests()).filter((r) => r.method === 'PUT')).toEqual([]);
  });
});

describe('the daemon', () => {
  /** Starts `envsync run` in a child process, SIGKILLed after the test if it is still running. */
  async function startRun(extra: string[], env: Record<string, string> = {}): Promise<LiveCli> {
    const flags = '--state state.json --listen 127.0.0.1:0 --interval 0'.split(' ');
    const live = startEnvsync(['run', ...apiArgs(), ...flags, ...extra], { cwd: tmp.dir, env });
    cleanups.push(() => live.kill());
    await live.listenUrl(WAIT_MS);
    return live;
  }

  /** Each pass's line so far (`pass success: ...`, `pass error: ...`). */
  const passes = (live: LiveCli) =>
    messages(live).filter((msg) => /^pass \w+: \d+ applied/.test(msg));
  const messages = (live: LiveCli) => live.logs().map((line) => String(line['msg']));

  it('a token file turned into a FIFO fails the pass with the message and the daemon goes on; SIGTERM ends it', async () => {
    await writeFile(tmp.path('token'), `${TOKEN}\n`);
    const live = await startRun(['--token-file', 'token', '--shutdown-timeout', '2s']);
    await waitFor('the first pass', () => passes(live).length === 1, { timeoutMs: WAIT_MS });
    expect(passes(live)[0]).toMatch(/^pass success/);

    await rm(tmp.path('token'));
    await fifo('token');
    live.child.kill('SIGHUP');
    await waitFor('the failed pass', () => passes(live).length === 2, { timeoutMs: WAIT_MS });
    expect(passes(live)[1]).toMatch(/^pass error/);
    expect(messages(live)).toContain(
      `pass failed: token file token is ${FIFO}: point --token-file at a file`,
    );

    // A file again: the next pass goes on as before.
    await rm(tmp.path('token'));
    await writeFile(tmp.path('token'), `${TOKEN}\n`);
    live.child.kill('SIGHUP');
    await waitFor('the pass after', () => passes(live).length === 3, { timeoutMs: WAIT_MS });
    expect(passes(live)[2]).toMatch(/^pass success/);

    await rm(tmp.path('token'));
    await fifo('token');
    live.child.kill('SIGHUP');
    await waitFor('another failed pass', () => passes(live).length === 4, { timeoutMs: WAIT_MS });
    expect(passes(live)[3]).toMatch(/^pass error/);
    live.child.kill('SIGTERM');
    expect(await live.exitedWithin(WAIT_MS)).toEqual({ code: 0, signal: null });
    expect(live.stdout() + live.stderr()).not.toContain(TOKEN.slice(0, 6));
  });

  it('SIGTERM ends it even when its stop waits on what never answers (a lock another process holds)', async () => {
    // The lock of a writer that is alive on this host (this test's process): held, not stale.
    const holder = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
    await writeFile(tmp.path('state.json.lock'), `${JSON.stringify(holder)}\n`);
    const limits = ['--shutdown-timeout', '1s', '--state-lock-timeout', '10m'];
    const live = await startRun(limits, { ENVSYNC_TOKEN: TOKEN });
    // The pass has listed acme: its round goes on to the write ahead, which waits for the lock.
    const listed = async () => (await api.getRequests()).some((r) => r.method === 'GET');
    await waitFor('the listing', listed, { timeoutMs: WAIT_MS });
    live.child.kill('SIGTERM');
    expect(await live.exitedWithin(WAIT_MS)).toEqual({ code: 1, signal: null });
    expect(live.stderr()).toContain(
      'the stop did not end within 2s (--shutdown-timeout 1s, 2s at the least): exiting now, with code 1',
    );
    expect((await api.getRequests()).filter((r) => r.method === 'PUT')).toEqual([]);
  });
});

describe('the reader itself (src/runtime/read-file.ts)', () => {
  const words = { subject: 'test file', fix: 'use a file', limit: 'for a test file' };

  it('follows a symbolic link to a regular file, and asks the open handle, not the path', async () => {
    const file = await tmp.write('real.txt', 'text');
    execFileSync('ln', ['-s', file, tmp.path('link.txt')]);
    expect(await readRegularText(tmp.path('link.txt'), { ...words, maxBytes: 4 })).toBe('text');
    const pipe = await fifo('pipe');
    execFileSync('ln', ['-s', pipe, tmp.path('to-pipe')]);
    await expect(
      readRegularText(tmp.path('to-pipe'), { ...words, maxBytes: 4 }),
    ).rejects.toMatchObject({ failure: { kind: 'not-regular', what: 'a FIFO (named pipe)' } });
  });

  /** An open whose file's reads answer only when `answer` is called: a file system that hangs. */
  async function hungOpen(): Promise<{
    open: OpenForRead;
    answer: () => void;
    closed: () => boolean;
  }> {
    const info = await stat(await tmp.write('regular.txt', 'text'));
    let answer: () => void = () => undefined;
    const answered = new Promise<{ bytesRead: number }>((resolve) => {
      answer = () => resolve({ bytesRead: 0 });
    });
    let closed = false;
    const handle = {
      stat: () => Promise.resolve(info),
      read: () => answered,
      close: () => {
        closed = true;
        return Promise.resolve();
      },
    };
    return {
      open: () => Promise.resolve(handle as unknown as FileHandle),
      answer,
      closed: () => closed,
    };
  }

  it('abandons a read that takes longer than the deadline, and closes its handle once it answers', async () => {
    const hung = await hungOpen();
    const read = readRegularFile('hung.txt', { ...words, maxBytes: 4, timeoutMs: 20 }, hung.open);
    await expect(read).rejects.toThrow(
      'test file could not be read: it took longer than 20ms (--deadline), and the read was abandoned; check the file system it is on',
    );
    await expect(read).rejects.toBeInstanceOf(FileReadError);
    expect([abandonedReads(), hung.closed()]).toEqual([1, false]);
    hung.answer();
    await waitFor('the handle closed', () => hung.closed() && abandonedReads() === 0);
  });
});
