/**
 * Files that are not files, at every path envsync reads: a FIFO (named pipe) that nobody writes
 * to, a socket, a device, a directory, and files over their limit. Opening a FIFO to read it
 * waits for a writer, for ever, and reading a device of zeros never ends: each is refused at
 * once, by name, with what to do, exit 1 (a manifest: a problem at the file, and the other orgs
 * go on). Nothing hangs: every run here has a safety net, and a hang fails the test. The daemon
 * fails a pass whose token file is a FIFO and goes on; SIGTERM ends it even when its stop waits
 * on something that never answers.
 *
 * Where each run happens: the files envsync reads with promises (token, config, CA, state and its
 * lock, a saved plan, secrets, `--data`, `--token-dir`) are read by runs in this process, as
 * `envsync` would read them in its own: a read that waited on a FIFO would hold only a thread of
 * libuv's pool, and the test would fail on its safety net. The manifests folder is read
 * synchronously (manifests, policy files, `.envsyncignore`): a read that waited there would hold
 * the thread that runs the tests, so those runs are child processes, as is the daemon that signals
 * stop.
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

const ACME = 'org: acme\nenvironments:\n  - name: prod\n    type: S3\n    description: p\n';
const BETA = 'org: beta\nenvironments:\n  - name: prod\n    type: S3\n    description: p\n';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  tmp = await tempDir('envsync-fifo-');
  api = await startTestEmulator({ profile: 'spec', tokens: [{ token: TOKEN, orgs: null }] });
  await tmp.write('manifests/acme.yaml', ACME);
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

/**
 * Runs the CLI in this process, the same way (see the top of the file for which runs may). `run`
 * and `emulator` come here only for a start that fails before they wait for signals.
 */
const runHere = (args: string[], env: Record<string, string> = { ENVSYNC_TOKEN: TOKEN }) =>
  envsyncInProcess(args, {
    cwd: tmp.dir,
    env,
    timeoutMs: WAIT_MS,
    endsBeforeStart: args[0] === 'run' || args[0] === 'emulator',
  });

const FIFO = 'a FIFO (named pipe), not a regular file';

describe('a FIFO at a path a one-shot command reads: refused at once, by name, exit 1', () => {
  const cases: [string, string, () => string[], () => string][] = [
    [
      'the token file (plan)',
      'token',
      () => ['plan', ...apiArgs(), '--token-file', 'token'],
      () => `envsync plan: token file token is ${FIFO}: point --token-file at a file`,
    ],
    [
      'the config file (validate)',
      'envsync.yaml',
      () => ['validate', '--manifests', 'manifests', '--config', 'envsync.yaml'],
      () =>
        `envsync validate: config file ${tmp.path('envsync.yaml')} is ${FIFO}: point --config at a file`,
    ],
    [
      '--ca-file (sync)',
      'ca.pem',
      () => ['sync', ...apiArgs(), '--ca-file', 'ca.pem'],
      () => `envsync sync: --ca-file ca.pem: is ${FIFO}: point --ca-file at a PEM file`,
    ],
    [
      'the state file (plan)',
      'state.json',
      () => ['plan', ...apiArgs(), '--state', 'state.json'],
      () =>
        `envsync plan: state file ${tmp.path('state.json')} is ${FIFO}: point --state at a file, or at a path where envsync may create one`,
    ],
    [
      'a saved plan (sync --plan)',
      'plan.json',
      () => ['sync', ...apiArgs(), '--state', 'state.json', '--plan', 'plan.json'],
      () =>
        `envsync sync: --plan plan.json: is ${FIFO}: point --plan at the file "envsync plan --out" wrote`,
    ],
    [
      "the emulator's --data",
      'data.json',
      () => ['emulator', '--port', '0', '--data', 'data.json'],
      () =>
        `envsync emulator: --data data.json: is ${FIFO}: point --data at a file, or at a path where the emulator may create one`,
    ],
  ];
  it.each(cases)('%s', async (_what, path, args, message) => {
    await fifo(path);
    // The emulator opens --data from the process's working directory: its own, in a child.
    const result = await (args()[0] === 'emulator' ? run : runHere)(args());
    expect(result.stderr).toContain(message());
    expect(result.code).toBe(1);
    expect(await api.getRequests()).toEqual([]);
  });
});

describe('a FIFO in --token-dir: that org fails, by name, and the others go on', () => {
  it('sync applies beta (a token file) and fails acme (a FIFO), exit 1', async () => {
    await tmp.write('manifests/beta.yaml', BETA);
    await tmp.write('tokens/beta', `${TOKEN}\n`);
    await fifo('tokens/acme');
    const result = await runHere(
      ['sync', ...apiArgs(), '--state', 'state.json', '--token-dir', 'tokens'],
      {},
    );
    expect(result.stdout).toContain(`token file tokens/acme is ${FIFO}`);
    expect(result.code).toBe(1);
    expect(Object.keys((await api.getStore()).orgs)).toEqual(['beta']);
  });
});

describe('a FIFO at a file the daemon reads at start: it stops at once, exit 1', () => {
  const daemonArgs = () => [
    'run',
    ...apiArgs(),
    '--state',
    'state.json',
    '--listen',
    '127.0.0.1:0',
  ];
  it.each([
    ['the token file', 'token', ['--token-file', 'token'], 'token file token'],
    [
      'the notify secret file',
      'notify-secret',
      ['--notify-url', 'http://127.0.0.1:9/hook', '--notify-secret-file', 'notify-secret'],
      'SUBJECT --notify-secret-file',
    ],
    [
      'the webhook secret file',
      'webhook-secret',
      ['--webhook-secret-file', 'webhook-secret'],
      'SUBJECT --webhook-secret-file',
    ],
  ])('%s', async (_what, path, flags, subject) => {
    const file = await fifo(path);
    const result = await runHere([...daemonArgs(), ...flags]);
    const flag = flags.at(-2) ?? '';
    const expected = subject.startsWith('SUBJECT')
      ? `${flag} ${file} is ${FIFO}: point ${flag} at a file, or leave the flag out`
      : `${subject} is ${FIFO}: point --token-file at a file`;
    expect(result.stderr).toContain(expected);
    expect(result.code).toBe(1);
    expect(await api.getRequests()).toEqual([]);
  });
});

describe('a FIFO in the manifests folder: a located problem, never skipped, never waited on', () => {
  it('a FIFO named *.yaml: validate names it and exits 1; sync applies the other orgs and exits 1', async () => {
    await tmp.write('manifests/beta.yaml', BETA);
    await fifo('manifests/pipe.yaml');
    const problem = `manifests/pipe.yaml:1:1 is ${FIFO}: a manifest must be a file; remove it, or leave it out with .envsyncignore`;
    const validate = await run(['validate', '--manifests', 'manifests']);
    expect(validate.stdout).toContain(problem);
    expect(validate.code).toBe(1);

    const sync = await run(['sync', ...apiArgs(), '--state', 'state.json']);
    expect(sync.stdout).toContain(problem);
    expect(sync.code).toBe(1);
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
      `org: acme\npolicies:\n  - name: p1\n    file: p1.yaml\n${ACME.slice('org: acme\n'.length)}`,
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

describe('other things that are not files, and files too large', () => {
  it('a directory, /dev/zero and a socket are named for what they are', async () => {
    await mkdir(tmp.path('secrets'));
    const directory = await runHere(['plan', ...apiArgs(), '--token-file', 'secrets']);
    expect(directory.stderr).toContain(
      'token file secrets is a directory, not a regular file: point --token-file at a file',
    );
    expect(directory.code).toBe(1);

    const zero = await runHere(['plan', ...apiArgs(), '--token-file', '/dev/zero']);
    expect(zero.stderr).toContain('token file /dev/zero is a character device, not a regular file');
    expect(zero.code).toBe(1);

    const sock = await socket('envsync.sock');
    const config = await runHere([
      'validate',
      '--manifests',
      'manifests',
      '--config',
      'envsync.sock',
    ]);
    expect(config.stderr).toContain(`config file ${sock} is a socket, not a regular file`);
    expect(config.code).toBe(1);
    expect(await api.getRequests()).toEqual([]);
  });

  it('a token file over 64 KiB and a config file over 1 MiB are refused, naming the limit', async () => {
    await tmp.write('token', 'A'.repeat(64 * 1024 + 1));
    const token = await runHere(['plan', ...apiArgs(), '--token-file', 'token']);
    expect(token.stderr).toContain(
      'token file token is larger than the limit of 64 KiB for a token file',
    );
    expect(token.code).toBe(1);

    await tmp.write('envsync.yaml', `# ${'x'.repeat(1024 * 1024)}\n`);
    const config = await runHere([
      'validate',
      '--manifests',
      'manifests',
      '--config',
      'envsync.yaml',
    ]);
    expect(config.stderr).toContain(
      `config file ${tmp.path('envsync.yaml')} is larger than the limit of 1 MiB for a config file`,
    );
    expect(config.code).toBe(1);
    expect(await api.getRequests()).toEqual([]);
  });
});

describe('the daemon', () => {
  const daemonArgs = (extra: string[]) => [
    'run',
    ...apiArgs(),
    '--state',
    'state.json',
    '--listen',
    '127.0.0.1:0',
    '--interval',
    '0',
    ...extra,
  ];

  /** Starts `envsync run` in a child process, SIGKILLed after the test if it is still running. */
  async function startRun(extra: string[], env: Record<string, string> = {}): Promise<LiveCli> {
    const live = startEnvsync(daemonArgs(extra), { cwd: tmp.dir, env });
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
    await waitFor('the second failed pass', () => passes(live).length === 4, {
      timeoutMs: WAIT_MS,
    });
    expect(passes(live)[3]).toMatch(/^pass error/);
    live.child.kill('SIGTERM');
    expect(await live.exitedWithin(WAIT_MS)).toEqual({ code: 0, signal: null });
    expect(live.stdout() + live.stderr()).not.toContain(TOKEN.slice(0, 6));
  });

  it('SIGTERM ends it even when its stop waits on what never answers (a lock another process holds)', async () => {
    // The lock of a writer that is alive on this host (this test's process): held, not stale.
    const holder = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
    await writeFile(tmp.path('state.json.lock'), `${JSON.stringify(holder)}\n`);
    const live = await startRun(['--shutdown-timeout', '1s', '--state-lock-timeout', '10m'], {
      ENVSYNC_TOKEN: TOKEN,
    });
    // The pass has listed acme: its round goes on to the write ahead, which waits for the lock.
    await waitFor(
      'the listing',
      async () => (await api.getRequests()).some((r) => r.method === 'GET'),
      { timeoutMs: WAIT_MS },
    );
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
    expect(abandonedReads()).toBe(1);
    expect(hung.closed()).toBe(false);
    hung.answer();
    await waitFor('the handle closed', () => hung.closed() && abandonedReads() === 0);
  });
});
