/**
 * No silent state loss, against the CLI. The lock's holders are other processes (live, dead, on
 * another host), so the CLI's `main` runs in this process against them; where two envsync writers
 * meet, they are two processes, as in production: this one and a child.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmod, readFile, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startEnvsync } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { json, putsAndGets, syncWorld, TOKEN } from '../helpers/sync-world.ts';
import { waitFor } from '../helpers/wait.ts';

const world = syncWorld();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
});

const manifest = (org: string, version: number, names = ['web', 'db']) =>
  `org: ${org}\nenvironments:\n${names
    .map(
      (name) =>
        `  - name: ${name}\n    type: K8S\n    description: ${org} ${name}\n    include_scaling: ${version % 2 === 0}\n    policies: [${version % 3 === 0 ? 'pci' : 'baseline'}]\n`,
    )
    .join('')}`;

type StateJson = {
  orgs: Record<string, { include_scaling: boolean; policies: string[]; environments: string[] }[]>;
};
const readState = async () =>
  JSON.parse(await readFile(world.tmp().path('state.json'), 'utf8')) as StateJson;

async function canCreateIn(dir: string): Promise<boolean> {
  const probe = `${dir}/.probe`;
  try {
    await writeFile(probe, '');
    await unlink(probe);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes `dir` read-only for the CLI: chmod for a normal user; root ignores modes, so then the
 * immutable attribute (chattr +i). Undone after the test.
 */
async function makeReadOnly(dir: string): Promise<void> {
  await chmod(dir, 0o555);
  if (!(await canCreateIn(dir))) {
    cleanups.push(() => chmod(dir, 0o755));
    return;
  }
  await chmod(dir, 0o755);
  const set = spawnSync('chattr', ['+i', dir], { encoding: 'utf8' });
  cleanups.push(async () => void spawnSync('chattr', ['-i', dir]));
  if (set.status !== 0 || (await canCreateIn(dir)))
    throw new Error(
      `cannot make ${dir} read-only here (root, and chattr +i failed: ${set.stderr})`,
    );
}

/** A process that stays alive until the test ends: a live holder of a lock (not a Node: cheap). */
function liveProcess(): number {
  const child = spawn('sleep', ['600'], { stdio: 'ignore' });
  cleanups.push(async () => void child.kill('SIGKILL'));
  return child.pid as number;
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn('true', [], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('close', resolve));
  return child.pid as number;
}

async function writeLock(holder: { pid: number; hostname: string }, ageSeconds = 0) {
  const file = world.tmp().path('state.json.lock');
  const then = new Date(Date.now() - ageSeconds * 1000);
  await writeFile(file, JSON.stringify({ ...holder, startedAt: then.toISOString() }));
  if (ageSeconds > 0) await utimes(file, then, then);
  return file;
}

describe('a state file that cannot be written', () => {
  it('read-only directory: nothing is sent, the org fails naming the state file and the OS error, exit 1; the change stays visible', async () => {
    const api = await world.emulator({ profile: 'spec', orgs: ['acme'] });
    await world.tmp().write('manifests/acme.yaml', manifest('acme', 1));
    await world.tmp().write('state/keep', '');
    const flags = `--manifests manifests --api-url ${api.url} --state state/state.json`.split(' ');
    const run = (command: string[]) => world.cli([...command, ...flags, '--retry-delay', '10ms']);
    expect((await run(['sync'])).code).toBe(0);
    // A change only the state file can see: the spec listing hides policies.
    await world.tmp().write('manifests/acme.yaml', manifest('acme', 3));
    const before = (await putsAndGets(api)).puts;
    await makeReadOnly(world.tmp().path('state'));

    const sync = await run(['sync', '--output', 'json']);
    expect(sync.code, sync.stderr).toBe(1);
    expect((await putsAndGets(api)).puts).toBe(before);
    const org = json(sync.stdout).orgs[0];
    expect(org?.status).toBe('failed');
    expect(org?.error).toContain('nothing was sent');
    expect(org?.error).toContain('state/state.json');
    expect(org?.error).toMatch(/EACCES|EPERM|EROFS/);
    expect(org?.error).toContain('make its directory writable');
    expect(org?.changes.map((c) => c.result)).toEqual(['failed', 'failed']);

    // The records on disk were never touched: the next plan still shows the change.
    for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
    const plan = await run(['plan', '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(2);
  });

  it('after the PUTs: applied, but the record could not be kept is reported (failed, exit 1), naming the lock holder', async () => {
    const lockFile = world.tmp().path('state.json.lock');
    const holder = liveProcess();
    const held: Record<string, unknown>[] = [];
    // A service that, while answering the PUT, lets another writer take the state file's lock.
    const fake = await startFakeApi((req, res) => {
      if (req.method === 'GET') {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ env: held }));
        return;
      }
      held.push({ ...(JSON.parse(req.body) as object), org: 'acme' });
      void writeFile(
        lockFile,
        JSON.stringify({ pid: holder, hostname: hostname(), startedAt: new Date().toISOString() }),
      ).then(() => res.writeHead(201, { 'content-type': 'application/json' }).end('"OK"'));
    });
    cleanups.push(fake.close);
    await world.manifests({ 'acme.yaml': manifest('acme', 1, ['web']) });
    const sync = await world.run(
      fake.url,
      ['sync', '-o', 'json'],
      ['--state-lock-timeout', '300ms'],
    );
    expect(sync.code, sync.stderr).toBe(1);
    const org = json(sync.stdout).orgs[0];
    expect(org?.status).toBe('failed');
    expect(org?.changes.map((c) => c.result)).toEqual(['applied']);
    expect(org?.error).toContain('1 change(s) were applied, but the state file could not record');
    expect(org?.error).toContain(`pid ${holder} on host ${hostname()}`);
    expect(org?.error).toContain(lockFile);
    expect(org?.error).toContain('--state-lock-timeout');
  });
});

describe('a state file of an older version', () => {
  it('is refused: sync and plan exit 1 saying to delete it, and nothing is sent; deleted, the next sync rebuilds it', async () => {
    const api = await world.emulator();
    await world.manifests();
    const file = world.tmp().path('state.json');
    for (const version of [1, 2]) {
      const text = JSON.stringify({ version, orgs: {} });
      await writeFile(file, text);
      for (const command of ['sync', 'plan']) {
        const refused = await world.run(api.url, [command]);
        expect(refused.code, command).toBe(1);
        expect(refused.stderr).toContain(
          `the state file ${file} has version ${version}, an older format this envsync does not read (it reads version 3); nothing was sent. Delete it: the next sync rebuilds it`,
        );
      }
      // Left as it is.
      expect(await readFile(file, 'utf8')).toBe(text);
    }
    expect((await putsAndGets(api)).puts).toBe(0);
    await unlink(file);
    expect((await world.run(api.url, ['sync'])).code).toBe(0);
    expect(Object.keys((await readState()).orgs).sort()).toEqual(['acme', 'beta']);
  });
});

describe('one writer per state file', () => {
  it('a live holder: sync waits up to --state-lock-timeout, then fails naming the holder and the lock file; nothing sent', async () => {
    const api = await world.emulator();
    await world.manifests();
    const holder = liveProcess();
    const lockFile = await writeLock({ pid: holder, hostname: hostname() });
    const sync = await world.run(api.url, ['sync'], ['--state-lock-timeout', '500ms']);
    expect(sync.code).toBe(1);
    expect((await putsAndGets(api)).puts).toBe(0);
    expect(sync.stdout).toContain(
      `locked by another envsync writer (pid ${holder} on host ${hostname()}`,
    );
    expect(sync.stdout).toContain(`delete ${lockFile}`);
    // The holder's lock is still its own.
    expect(await readFile(lockFile, 'utf8')).toContain(`"pid":${holder}`);
  });

  it('a holder that lets go within the timeout: sync waits for it, then applies', async () => {
    const api = await world.emulator();
    await world.manifests();
    const lockFile = await writeLock({ pid: liveProcess(), hostname: hostname() });
    const sync = world.run(api.url, ['sync'], ['--state-lock-timeout', '60s']);
    // Let go once the sync is waiting for it (it has listed the orgs by then).
    await waitFor('the sync to list', async () => (await putsAndGets(api)).gets >= 2, {
      timeoutMs: 30_000,
    });
    await unlink(lockFile);
    const result = await sync;
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toContain('Sync: 3 applied');
  });

  it('plan never writes, so it never waits: a held lock does not block it', async () => {
    const api = await world.emulator();
    await world.manifests();
    await writeLock({ pid: liveProcess(), hostname: hostname() });
    const plan = await world.run(api.url, ['plan'], [], { ENVSYNC_STATE_LOCK_TIMEOUT: '1h' });
    expect(plan).toMatchObject({ code: 0, stdout: expect.stringContaining('3 to create') });
    expect(plan.stderr).not.toContain('lock');
  });

  it.each([
    ['a dead pid on this host', async () => ({ pid: await deadPid(), hostname: hostname() }), 0],
    ['another host, last written long ago', () => ({ pid: 1, hostname: 'elsewhere.invalid' }), 600],
  ])('a lock left by %s is reclaimed, with a warning', async (_title, holder, ageSeconds) => {
    const api = await world.emulator();
    await world.manifests();
    const lockFile = await writeLock(await holder(), ageSeconds);
    const sync = await world.run(api.url, ['sync'], ['--state-lock-timeout', '60s']);
    expect(sync.code, sync.stdout).toBe(0);
    expect(sync.stderr).toContain(`reclaimed the state file's lock ${lockFile}`);
    expect(Object.keys((await readState()).orgs).sort()).toEqual(['acme', 'beta']);
    // Released after the run.
    await expect(readFile(lockFile)).rejects.toThrow(/ENOENT/);
  });
});

describe('runs restricted with --org', () => {
  it('two concurrent syncs of different orgs on one state file both keep their records, round after round', async () => {
    const api = await world.emulator({
      profile: 'spec',
      faults: { latencyMs: { min: 5, max: 40 } },
    });
    for (let round = 1; round <= 3; round++) {
      await world.manifests({
        'acme.yaml': manifest('acme', round, ['a1', 'a2', 'a3', 'a4']),
        'beta.yaml': manifest('beta', round + 1, ['b1', 'b2', 'b3', 'b4']),
      });
      // Two processes: within one, a second writer waits for the first without the lock file.
      // One is a child, acme's and beta's by turns; the other is this one (the CLI's `main`),
      // started once the child talks to the API, so that the two runs overlap.
      const [child, here] = round % 2 === 1 ? ['acme', 'beta'] : ['beta', 'acme'];
      const seen = async () =>
        (await putsAndGets(api)).paths.filter((p) => p.includes(`/environments/${child}`)).length;
      const before = await seen();
      const inChild = world.runProcess(api.url, ['sync'], ['--org', child]);
      await waitFor(`the child's first request`, async () => (await seen()) > before);
      const inHere = await world.run(api.url, ['sync'], ['--org', here]);
      const [a, b] = round % 2 === 1 ? [await inChild, inHere] : [inHere, await inChild];
      expect(a.code, a.stdout + a.stderr).toBe(0);
      expect(b.code, b.stdout + b.stderr).toBe(0);
      const state = await readState();
      const names = (org: string) => state.orgs[org]?.flatMap((g) => g.environments).sort();
      expect(names('acme'), `round ${round}`).toEqual(['a1', 'a2', 'a3', 'a4']);
      expect(names('beta'), `round ${round}`).toEqual(['b1', 'b2', 'b3', 'b4']);
      expect(state.orgs['acme']?.[0]?.policies).toEqual([round % 3 === 0 ? 'pci' : 'baseline']);
      expect(state.orgs['beta']?.[0]?.policies).toEqual([
        (round + 1) % 3 === 0 ? 'pci' : 'baseline',
      ]);
    }
    // The spec listing hides include_scaling and policies: only a state file that kept both
    // orgs' records can say that nothing is left to do.
    const plan = await world.run(api.url, ['plan', '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
    await expect(readFile(world.tmp().path('state.json.lock'))).rejects.toThrow(/ENOENT/);
  });
});

describe('the daemon', () => {
  it("a state file it cannot write: /status shows the org failed and the state file's error, /readyz is 503, and nothing is sent", async () => {
    const api = await world.emulator({ orgs: ['acme'] });
    await world.manifests({ 'acme.yaml': manifest('acme', 1) });
    await world.tmp().write('blocker', 'a file, not a directory');
    const flags = `--manifests manifests --api-url ${api.url} --state blocker/state.json`;
    const run = startEnvsync(
      ['run', ...flags.split(' '), '--listen', '127.0.0.1:0', '--interval', '0'],
      { cwd: world.tmp().dir, env: { ENVSYNC_TOKEN: TOKEN } },
    );
    cleanups.push(() => run.kill());
    const url = await run.listenUrl();
    const status = await waitFor(
      'the org to fail',
      async () => {
        const response = await request(`${url}/status`);
        const body = (await response.body.json()) as {
          orgs: Record<string, { status: string; lastError: { message: string } | null }>;
        };
        return body.orgs['acme']?.status === 'failed' ? body.orgs['acme'] : undefined;
      },
      { timeoutMs: 30_000 },
    );
    expect(status.lastError?.message).toContain('nothing was sent');
    expect(status.lastError?.message).toContain('blocker/state.json');
    // The state file serves every org, so the daemon as a whole is not ready, and says why.
    const whole = (await (await request(`${url}/status`)).body.json()) as {
      stateFile: { path: string; writeError: string | null };
    };
    expect(whole.stateFile.path).toContain('blocker/state.json');
    expect(whole.stateFile.writeError).toContain('blocker/state.json');
    const ready = await request(`${url}/readyz`);
    expect(ready.statusCode).toBe(503);
    expect(await ready.body.text()).toContain('the state file cannot be written');
    expect((await putsAndGets(api)).puts).toBe(0);
  });
});
