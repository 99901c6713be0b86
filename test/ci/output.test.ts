/**
 * Output for people and for machines: the report on stdout; logs on stderr, pretty and one line
 * per event on a terminal, JSON lines (at warn for one-shot commands) otherwise, `--log-format`
 * over both; the emulator's times read as envsync's; `run --emulator` keeps a state of its own.
 */
import { cp, readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess, inTerminal, startEnvsync } from '../helpers/cli.ts';
import { spawnEmulator, startTestEmulator } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const EXAMPLES = fileURLToPath(new URL('../../examples/manifests', import.meta.url));
/** Random-looking: any 12 characters of it are masked in every output. */
const TOKEN = 'oT7qKx2Vw9Lb4Zr';
const env = { ENVSYNC_TOKEN: TOKEN };

/** A pretty line: time of day (UTC), level, then the message. */
const PRETTY = /^\d\d:\d\d:\d\d\.\d{3}Z (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S/;
/** The time of a JSON log line: ISO 8601, UTC, milliseconds. */
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const STATE_WARNING = 'state file is not valid JSON; starting empty (it will be rewritten)';

const lines = (text: string) => text.split(/\r?\n/).filter((line) => line !== '');
const parsed = (stderr: string) =>
  lines(stderr).map((line) => JSON.parse(line) as Record<string, unknown>);

const api = await startTestEmulator({ profile: 'kosli', tokens: [{ token: TOKEN, orgs: null }] });
const tmp = await tempDir();
afterAll(async () => {
  await api.close();
  await tmp.cleanup();
});

/** `command` of the examples against the emulator, in `dir`, with a state file that is not JSON. */
async function oneShot(command: string, dir: string, ...extra: string[]) {
  const state = await tmp.write(`${dir}/state.json`, 'not json');
  const out = command === 'plan' ? ['--out', tmp.path(dir, 'plan.json')] : [];
  const shared = ['--manifests', EXAMPLES, '--api-url', api.url, '--state', state];
  return [command, ...shared, ...out, ...extra];
}

describe('one-shot commands', () => {
  it('without a terminal: the report on stdout, JSON log lines at warn (an info line does not show); --log-level still wins', async () => {
    const quiet = await envsync(await oneShot('plan', 'warn'), { env });
    expect(quiet).toMatchObject({ code: 0, stdout: expect.stringContaining('+ create') });
    expect(parsed(quiet.stderr).map((l) => [l['level'], l['msg']])).toEqual([[40, STATE_WARNING]]);
    // The level, as the format, is chosen from the settings and streams given: `main` here.
    const told = await envsyncInProcess(await oneShot('plan', 'info', '--log-level', 'info'), {
      env,
    });
    expect(told.code).toBe(0);
    expect(parsed(told.stderr).map((l) => l['msg'])).toContain(
      `plan saved to ${tmp.path('info', 'plan.json')}`,
    );
  });

  it('pretty: one line per event, and a sync does not log again the changes its report shows', async () => {
    const pretty = { ...env, ENVSYNC_LOG_FORMAT: 'pretty' };
    // Streams that are not terminals (the pipes are the test above's): `main` in this process.
    const debug = await envsyncInProcess(await oneShot('plan', 'pretty', '--log-level', 'debug'), {
      env: pretty,
    });
    expect(debug.code).toBe(0);
    expect(lines(debug.stderr).length).toBeGreaterThan(3);
    for (const line of lines(debug.stderr)) expect(line).toMatch(PRETTY);
    // Not a terminal: no colour, even when pretty is asked for.
    expect(debug.stderr).not.toContain('\u001b[');

    const sync = await envsyncInProcess(await oneShot('sync', 'sync'), { env: pretty });
    expect(sync).toMatchObject({ code: 0, stdout: expect.stringContaining('+ create') });
    expect(sync.stdout).toContain('acme');
    // Only what the report does not show: the state file's warning, and the dialect (said once).
    expect(lines(sync.stderr)).toEqual([
      expect.stringMatching(/^\S+ WARN {2}state file is not valid JSON; starting empty/),
      expect.stringMatching(/^\S+ INFO {2}API dialect kosli \(auto: the listing is a bare array\)/),
    ]);
  });

  it('on a terminal: pretty lines at info; --log-format json (or ENVSYNC_LOG_FORMAT) gives JSON lines, at warn', async () => {
    const pretty = await inTerminal(await oneShot('plan', 'tty'), env);
    expect(pretty).toContain('\u001b[32mINFO \u001b[0m plan saved to ');
    expect(pretty).toContain('\u001b[33mWARN \u001b[0m state file is not valid JSON');
    expect(pretty).not.toMatch(/^\{/m);
    // The same with other settings: `main` in this process, given streams that are terminals.
    for (const [args, extraEnv] of [
      [['--log-format', 'json'], {}],
      [[], { ENVSYNC_LOG_FORMAT: 'json' }],
    ] as const) {
      const { stderr: screen } = await envsyncInProcess(
        await oneShot('plan', 'tty-json', ...args),
        { env: { ...env, ...extraEnv }, terminal: true },
      );
      const json = lines(screen).filter((line) => line.startsWith('{'));
      // JSON logs are for a machine: warn by default, wherever they go.
      expect(json.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
        STATE_WARNING,
      ]);
      expect(screen).not.toMatch(PRETTY);
    }
  });
});

describe('the emulator and envsync', () => {
  it('write the same time format: ISO 8601 UTC in JSON, the same time of day in pretty lines', async () => {
    // A generous start-up guard: the machine may be busy.
    const json = await spawnEmulator(['--log-level', 'info'], { timeoutMs: 60_000 });
    const pretty = await spawnEmulator(['--log-level', 'info', '--log-format', 'pretty'], {
      timeoutMs: 60_000,
    });
    try {
      const state = await tmp.write('times/state.json', '{');
      const plan = ['plan', '--manifests', EXAMPLES, '--api-url', json.url, '--state', state];
      const ours = await envsyncInProcess(plan, { env });
      const times = [...parsed(ours.stderr), ...parsed(json.stderr())].map((l) => l['time']);
      expect(times.length).toBeGreaterThan(1);
      for (const time of times) expect(time).toMatch(ISO);
      const prettyLines = lines(pretty.stderr());
      expect(prettyLines.length).toBeGreaterThan(0);
      for (const line of prettyLines) expect(line).toMatch(PRETTY);
    } finally {
      await json.stop();
      await pretty.stop();
    }
  });
});

describe('run --emulator (npm start)', () => {
  it('a second start in the same folder gives no state file warning: the embedded emulator keeps a state file of its own, started afresh', async () => {
    /** One `run --emulator` in the folder, until its first pass, then stopped; its stderr. */
    async function runOnce(...extra: string[]): Promise<string> {
      const args =
        'run --manifests manifests --emulator --emulator-profile kosli --listen 127.0.0.1:0 --interval 0';
      const run = startEnvsync([...args.split(' '), ...extra], { cwd: tmp.path('npm-start') });
      try {
        const passed = () => run.logs().some((l) => String(l['msg']).startsWith('pass '));
        await waitFor('the first pass', passed, { timeoutMs: 30_000 });
        run.child.kill('SIGTERM');
        expect(await run.exitedWithin(30_000)).toEqual({ code: 0, signal: null });
        return run.stderr();
      } finally {
        await run.kill();
      }
    }
    await cp(EXAMPLES, tmp.path('npm-start/manifests'), { recursive: true });
    for (const stderr of [await runOnce(), await runOnce()]) {
      expect(stderr).not.toContain('state file');
      expect(parsed(stderr).filter((l) => Number(l['level']) >= 40)).toHaveLength(1);
      expect(stderr).toContain('USING THE EMBEDDED EMULATOR');
    }
    const own = await readFile(tmp.path('npm-start/.envsync/emulator-state.json'), 'utf8');
    expect(JSON.parse(own)).toMatchObject({
      api: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/),
    });
    // The real API's state file is never touched by a try-out.
    await expect(stat(tmp.path('npm-start/.envsync/state.json'))).rejects.toThrow(/ENOENT/);
    // A state file named explicitly is used as it is, as without --emulator.
    const named = await tmp.write(
      'npm-start/named.json',
      '{"version":3,"api":"http://127.0.0.1:1/","orgs":{}}\n',
    );
    expect(await runOnce('--state', named)).toContain(
      'state file was written for another API address',
    );
  });
});
