import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsyncInProcess, startEnvsync, type LiveCli } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'cli-daemon-token-77aa';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;
const running: LiveCli[] = [];

beforeEach(async () => {
  tmp = await tempDir();
  api = await startTestEmulator({ profile: 'spec', tokens: [{ token: TOKEN, orgs: null }] });
});
afterEach(async () => {
  for (const run of running.splice(0)) await run.kill();
  await api.close();
  await tmp.cleanup();
});

const manifest = (names: string[]) =>
  `org: acme\nenvironments:\n${names.map((n) => `  - name: ${n}\n    type: S3\n    description: ${n}\n`).join('')}`;

/** `envsync run` as a child process against the emulator, killed after the test. */
function startRun(extra: string[] = [], withApi = true) {
  const args = ['run', '--manifests', 'manifests', '--listen', '127.0.0.1:0'];
  const against = ['--api-url', api.url, '--state', 'state/state.json', '--interval', '0'];
  // Files written at once: the settle time of the in-process daemons' tests.
  const quick = ['--retry-delay', '10ms', '--settle', '300ms'];
  const run = startEnvsync([...args, ...(withApi ? [...against, ...quick] : []), ...extra], {
    cwd: tmp.dir,
    env: withApi ? { ENVSYNC_TOKEN: TOKEN } : {},
  });
  running.push(run);
  return run;
}

const messages = (run: LiveCli) => run.logs().map((l) => String(l['msg']));
const passed = (run: LiveCli, trigger?: string) =>
  run
    .logs()
    .some(
      (l) =>
        String(l['msg']).startsWith('pass ') &&
        (trigger === undefined || (l['trigger'] as string[]).includes(trigger)),
    );

describe('envsync run as a process', () => {
  // One daemon for what a plain start shows (a process start is about half a second of CPU).
  it('names its status page at start-up, writes only JSON lines to stderr (one per pass and per applied change), starts a pass on SIGHUP, exits 0 on SIGTERM', async () => {
    await tmp.write('manifests/acme.yaml', manifest(['a', 'b']));
    const run = startRun();
    const url = await run.listenUrl();
    expect(run.logs().find((l) => l['listen'] === url)?.['msg']).toBe(
      `envsync run: listening on ${url}: the status page at ${url}/, and /healthz /readyz /metrics /status, POST /reconcile`,
    );
    const page = await request(`${url}/`);
    expect(page.statusCode).toBe(200);
    expect(await page.body.text()).toMatch(/<title>envsync: /);

    await waitFor('first pass', () => passed(run));
    expect(messages(run)).toEqual(expect.arrayContaining(['create acme/a', 'create acme/b']));
    const pass = run.logs().find((l) => String(l['msg']).startsWith('pass '));
    expect(pass).toMatchObject({ result: 'success', applied: 2, revision: null });
    expect(typeof pass?.['durationMs']).toBe('number');

    run.child.kill('SIGHUP');
    await waitFor('SIGHUP pass', () => passed(run, 'SIGHUP'));
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(0);
    const lines = run
      .stderr()
      .split('\n')
      .filter((line) => line !== '');
    expect(lines.every((line) => typeof JSON.parse(line) === 'object')).toBe(true);
  });

  it('SIGTERM and SIGHUP while it is still starting (during the first watcher scan) stop it gracefully or start a pass, never kill it', async () => {
    // A thousand files, so that the watcher's first scan takes a while after the endpoints are
    // up. They declare no environment: the passes after the scan have nothing to send.
    for (let dir = 0; dir < 20; dir++) {
      await mkdir(tmp.path(`manifests/d${dir}`), { recursive: true });
      await Promise.all(
        Array.from({ length: 50 }, (_, file) =>
          writeFile(tmp.path(`manifests/d${dir}/f${file}.yaml`), 'org: acme\nenvironments: []\n'),
        ),
      );
    }
    const hup = startRun();
    await hup.listenUrl();
    hup.child.kill('SIGHUP');
    await waitFor('a pass', () => passed(hup));
    expect(hup.child.exitCode).toBeNull();
    hup.child.kill('SIGTERM');
    expect((await hup.exited).code).toBe(0);

    const term = startRun();
    await term.listenUrl();
    term.child.kill('SIGTERM');
    expect((await term.exited).code).toBe(0);
    expect(messages(term)).toContain('stopped');
  });

  it('SIGTERM during a pass lets the requests in flight finish, writes the state and exits 0', async () => {
    await tmp.write('manifests/acme.yaml', manifest(['a']));
    const run = startRun(['--shutdown-timeout', '20s']);
    await waitFor('first pass', () => passed(run));
    await api.setFaults({ latencyMs: { min: 500, max: 500 } });
    await writeFile(tmp.path('manifests/acme.yaml'), manifest(['a', 'b', 'c']));
    const recent = () => new Date(Date.now() - 5000).toISOString();
    await waitFor(
      'PUTs in flight',
      async () =>
        (await api.getStats()).inFlight > 0 &&
        (await api.getRequests(100)).some(
          (r) => r.method === 'GET' && r.status === 200 && r.time > recent(),
        ),
    );
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(0);
    const names = ((await api.getStore()).orgs['acme'] ?? []).map((e) => e.name).sort();
    expect(names).toEqual(['a', 'b', 'c']);
    const state = JSON.parse(await readFile(tmp.path('state/state.json'), 'utf8')) as {
      orgs: Record<string, { environments: string[] }[]>;
    };
    const recorded = (state.orgs['acme'] ?? []).flatMap((group) => group.environments);
    expect(recorded.sort()).toEqual(['a', 'b', 'c']);
    expect(messages(run)).toContain('stopped');
  });

  it('refuses to start without --api-url unless --emulator, and --emulator says so loudly', async () => {
    await tmp.write('manifests/acme.yaml', manifest(['a']));
    // Refused while the settings are read, before it waits for signals: in this process.
    const missing = await envsyncInProcess(['run', '--manifests', 'manifests'], {
      cwd: tmp.dir,
      endsBeforeStart: true,
    });
    expect(missing).toMatchObject({ code: 1, stderr: expect.stringContaining('no API address') });

    const demo = startRun(['--emulator'], false);
    const url = await demo.listenUrl();
    expect(demo.stderr()).toMatch(/USING THE EMBEDDED EMULATOR at http:\/\/127\.0\.0\.1:\d+/);
    // The service as it is today, unless --emulator-profile contract asks for the contract.
    expect(demo.stderr()).toContain('"profile":"kosli"');
    await waitFor('ready', async () => (await request(`${url}/readyz`)).statusCode === 200);
    const status = (await (await request(`${url}/status`)).body.json()) as {
      orgs: Record<string, { status: string }>;
    };
    expect(status.orgs['acme']?.status).toBe('ok');
    demo.child.kill('SIGINT');
    expect((await demo.exited).code).toBe(0);
  });
});
