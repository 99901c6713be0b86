import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsyncInProcess, startEnvsync } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';
import { CLI } from '../helpers/entry.ts';

const TOKEN = 'cli-daemon-token-77aa';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;
let child: ChildProcess | undefined;

beforeEach(async () => {
  tmp = await tempDir();
  api = await startTestEmulator({ profile: 'spec', tokens: [{ token: TOKEN, orgs: null }] });
});
afterEach(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  await api.close();
  await tmp.cleanup();
});

const manifest = (names: string[]) =>
  `org: acme\nenvironments:\n${names.map((n) => `  - name: ${n}\n    type: S3\n    description: ${n}\n`).join('')}`;

/** Starts `envsync run` as a child process; resolves with its endpoints' URL from its logs. */
async function startRun(extra: string[] = []) {
  const run = startEnvsync(
    [
      'run',
      '--manifests',
      'manifests',
      '--api-url',
      api.url,
      '--state',
      'state/state.json',
      '--listen',
      '127.0.0.1:0',
      '--interval',
      '0',
      '--retry-delay',
      '10ms',
      // Files written at once: the settle time of the in-process daemons' tests.
      '--settle',
      '300ms',
      ...extra,
    ],
    { cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN } },
  );
  child = run.child;
  const lines = () =>
    run
      .stderr()
      .split('\n')
      .filter((l) => l !== '');
  // Every line, parsed: a line that is not JSON fails the test here.
  const logs = () => lines().map((l) => JSON.parse(l) as Record<string, unknown>);
  const url = await run.listenUrl();
  return { proc: run.child, url, exited: run.exited.then(({ code }) => code), lines, logs };
}

describe('envsync run as a process', () => {
  // One daemon for what a plain start shows: its start-up line, its status page, its log lines,
  // SIGHUP and SIGTERM (a process start is about half a second of CPU).
  it('names its status page at start-up, writes only JSON lines to stderr (one per pass and per applied change), starts a pass on SIGHUP, exits 0 on SIGTERM', async () => {
    await tmp.write('manifests/acme.yaml', manifest(['a', 'b']));
    const run = await startRun();
    expect(run.logs().find((l) => l['listen'] === run.url)?.['msg']).toBe(
      `envsync run: listening on ${run.url}: the status page at ${run.url}/, and /healthz /readyz /metrics /status, POST /reconcile`,
    );
    const page = await request(`${run.url}/`);
    expect(page.statusCode).toBe(200);
    expect(await page.body.text()).toMatch(/<title>envsync: /);

    await waitFor('first pass', () => run.logs().some((l) => String(l['msg']).startsWith('pass ')));
    const messages = run.logs().map((l) => String(l['msg']));
    expect(messages).toContain('create acme/a');
    expect(messages).toContain('create acme/b');
    const pass = run.logs().find((l) => String(l['msg']).startsWith('pass '));
    expect(pass).toMatchObject({ result: 'success', applied: 2, revision: null });
    expect(typeof pass?.['durationMs']).toBe('number');

    run.proc.kill('SIGHUP');
    await waitFor('SIGHUP pass', () =>
      run
        .logs()
        .some(
          (l) =>
            String(l['msg']).startsWith('pass ') && (l['trigger'] as string[]).includes('SIGHUP'),
        ),
    );
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(
      run.lines().every((line) => line.startsWith('{') && typeof JSON.parse(line) === 'object'),
    ).toBe(true);
  });

  it('SIGTERM and SIGHUP while it is still starting (during the first watcher scan) stop it gracefully or start a pass, never kill it', async () => {
    // Enough files (a thousand) that the watcher's first scan takes a while (hundreds of
    // milliseconds) after the endpoints are up. They declare no environment, so the passes after
    // the scan have nothing to send.
    for (let dir = 0; dir < 20; dir++) {
      await mkdir(tmp.path(`manifests/d${dir}`), { recursive: true });
      await Promise.all(
        Array.from({ length: 50 }, (_, file) =>
          writeFile(tmp.path(`manifests/d${dir}/f${file}.yaml`), 'org: acme\nenvironments: []\n'),
        ),
      );
    }
    const hup = await startRun();
    hup.proc.kill('SIGHUP');
    await waitFor('a pass', () => hup.logs().some((l) => String(l['msg']).startsWith('pass ')));
    expect(hup.proc.exitCode).toBeNull();
    hup.proc.kill('SIGTERM');
    expect(await hup.exited).toBe(0);

    const term = await startRun();
    term.proc.kill('SIGTERM');
    expect(await term.exited).toBe(0);
    expect(term.logs().map((l) => l['msg'])).toContain('stopped');
  });

  it('SIGTERM during a pass lets the requests in flight finish, writes the state and exits 0', async () => {
    await tmp.write('manifests/acme.yaml', manifest(['a']));
    const run = await startRun(['--shutdown-timeout', '20s']);
    await waitFor('first pass', () => run.logs().some((l) => String(l['msg']).startsWith('pass ')));
    await api.setFaults({ latencyMs: { min: 500, max: 500 } });
    await writeFile(tmp.path('manifests/acme.yaml'), manifest(['a', 'b', 'c']));
    await waitFor(
      'PUTs in flight',
      async () =>
        (await api.getStats()).inFlight > 0 &&
        (await api.getRequests(100)).some(
          (r) =>
            r.method === 'GET' &&
            r.status === 200 &&
            r.time > new Date(Date.now() - 5000).toISOString(),
        ),
    );
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const names = ((await api.getStore()).orgs['acme'] ?? []).map((e) => e.name).sort();
    expect(names).toEqual(['a', 'b', 'c']);
    const state = JSON.parse(await readFile(tmp.path('state/state.json'), 'utf8')) as {
      orgs: Record<string, { environments: string[] }[]>;
    };
    expect((state.orgs['acme'] ?? []).flatMap((group) => group.environments).sort()).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(run.logs().map((l) => l['msg'])).toContain('stopped');
  });

  it('refuses to start without --api-url unless --emulator, and --emulator says so loudly', async () => {
    await tmp.write('manifests/acme.yaml', manifest(['a']));
    // Refused while the settings are read, before it waits for signals: in this process.
    const missing = await envsyncInProcess(['run', '--manifests', 'manifests'], {
      cwd: tmp.dir,
      endsBeforeStart: true,
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no API address');

    const demo = spawn(
      process.execPath,
      [CLI, 'run', '--manifests', 'manifests', '--emulator', '--listen', '127.0.0.1:0'],
      { cwd: tmp.dir, env: { PATH: process.env['PATH'] ?? '' } },
    );
    child = demo;
    let out = '';
    demo.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    const listen = await waitFor('listening', () => /"listen":"(http:[^"]+)"/.exec(out)?.[1]);
    expect(out).toMatch(/USING THE EMBEDDED EMULATOR at http:\/\/127\.0\.0\.1:\d+/);
    await waitFor('ready', async () => (await request(`${listen}/readyz`)).statusCode === 200);
    const status = await request(`${listen}/status`);
    expect(
      ((await status.body.json()) as { orgs: Record<string, { status: string }> }).orgs['acme']
        ?.status,
    ).toBe('ok');
    demo.kill('SIGINT');
    expect(await new Promise((resolve) => demo.once('close', resolve))).toBe(0);
  });
});
