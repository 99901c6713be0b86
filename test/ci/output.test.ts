/**
 * Output for people and for machines: the report on stdout; logs on stderr, pretty and one line
 * per event on a terminal, JSON lines (at warn for one-shot commands) otherwise, `--log-format`
 * over both; the emulator's times read as envsync's; `run --emulator` keeps a state of its own.
 */
import { cp, readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess, inTerminal, startEnvsync } from '../helpers/cli.ts';
import { spawnEmulator, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const EXAMPLES = fileURLToPath(new URL('../../examples/manifests', import.meta.url));
/** Random-looking: any 12 characters of it are masked in every output. */
const TOKEN = 'oT7qKx2Vw9Lb4Zr';

/** A pretty line: time of day (UTC), level, then the message. */
const PRETTY = /^\d\d:\d\d:\d\d\.\d{3}Z (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S/;
/** The time of a JSON log line: ISO 8601, UTC, milliseconds. */
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

function lines(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => line !== '');
}

function parsed(stderr: string): Record<string, unknown>[] {
  return lines(stderr).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('one-shot commands', () => {
  let api: TestEmulator;
  let tmp: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    api = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: null }] });
    tmp = await tempDir();
  });
  afterAll(async () => {
    await api.close();
    await tmp.cleanup();
  });

  /** plan (or another command) against the emulator, with a state file that is not JSON: a warning. */
  async function oneShot(command: string, dir: string, extra: string[] = []) {
    const state = await tmp.write(`${dir}/state.json`, 'not json');
    const out = command === 'plan' ? ['--out', tmp.path(dir, 'plan.json')] : [];
    return [
      command,
      '--manifests',
      EXAMPLES,
      '--api-url',
      api.url,
      '--state',
      state,
      ...out,
      ...extra,
    ];
  }

  it('without a terminal: the report on stdout, JSON log lines at warn (an info line does not show); --log-level still wins', async () => {
    const env = { ENVSYNC_TOKEN: TOKEN };
    const quiet = await envsync(await oneShot('plan', 'warn'), { env });
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).toContain('+ create');
    const logs = parsed(quiet.stderr);
    expect(logs.map((l) => [l['level'], l['msg']])).toEqual([
      [40, 'state file is not valid JSON; starting empty (it will be rewritten)'],
    ]);
    expect(quiet.stderr).not.toContain('plan saved to');

    // The level, as the format, is chosen from the settings and streams given: `main` here.
    const told = await envsyncInProcess(await oneShot('plan', 'info', ['--log-level', 'info']), {
      env,
    });
    expect(told.code).toBe(0);
    expect(parsed(told.stderr).map((l) => l['msg'])).toContain(
      `plan saved to ${tmp.path('info', 'plan.json')}`,
    );
  });

  it('pretty: one line per event, and a sync does not log again the changes its report shows', async () => {
    const env = { ENVSYNC_TOKEN: TOKEN, ENVSYNC_LOG_FORMAT: 'pretty' };
    // The format and level are chosen from the streams and settings given: the CLI's `main` in
    // this process, with streams that are not terminals (the pipes are the test above's).
    const debug = await envsyncInProcess(
      await oneShot('plan', 'pretty', ['--log-level', 'debug']),
      { env },
    );
    expect(debug.code).toBe(0);
    expect(lines(debug.stderr).length).toBeGreaterThan(3);
    for (const line of lines(debug.stderr)) expect(line).toMatch(PRETTY);
    // Not a terminal: no colour, even when pretty is asked for.
    expect(debug.stderr).not.toContain('\u001b[');

    const sync = await envsyncInProcess(await oneShot('sync', 'sync'), { env });
    expect(sync.code).toBe(0);
    expect(sync.stdout).toContain('+ create');
    expect(sync.stdout).toContain('acme');
    // Only what the report does not show: the state file's warning, and the dialect (said once).
    expect(lines(sync.stderr)).toEqual([
      expect.stringMatching(/^\S+ WARN {2}state file is not valid JSON; starting empty/),
      expect.stringMatching(
        /^\S+ INFO {2}API dialect contract \(auto: the listing is an \{"env": \[\.\.\.\]\} object\)/,
      ),
    ]);
  });

  it('on a terminal: pretty lines at info; --log-format json (or ENVSYNC_LOG_FORMAT) gives JSON lines, at warn', async () => {
    const env = { ENVSYNC_TOKEN: TOKEN };
    const pretty = await inTerminal(await oneShot('plan', 'tty'), env);
    expect(pretty).toContain('\u001b[32mINFO \u001b[0m plan saved to ');
    expect(pretty).toContain('\u001b[33mWARN \u001b[0m state file is not valid JSON');
    expect(pretty).not.toMatch(/^\{/m);

    // The same on a terminal with other settings: `main` in this process, given streams that are
    // terminals (a real one was seen as one above).
    for (const [args, extraEnv] of [
      [['--log-format', 'json'], {}],
      [[], { ENVSYNC_LOG_FORMAT: 'json' }],
    ] as const) {
      const { stderr: screen } = await envsyncInProcess(
        await oneShot('plan', 'tty-json', [...args]),
        { env: { ...env, ...extraEnv }, terminal: true },
      );
      const json = lines(screen).filter((line) => line.startsWith('{'));
      // JSON logs are for a machine: warn by default, wherever they go.
      expect(json.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
        'state file is not valid JSON; starting empty (it will be rewritten)',
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
      const tmp = await tempDir();
      try {
        const state = await tmp.write('state.json', '{');
        const plan = ['plan', '--manifests', EXAMPLES, '--api-url', json.url, '--state', state];
        const ours = await envsyncInProcess(plan, { env: { ENVSYNC_TOKEN: TOKEN } });
        const times = [
          ...parsed(ours.stderr).map((l) => l['time']),
          ...parsed(json.stderr()).map((l) => l['time']),
        ];
        expect(times.length).toBeGreaterThan(1);
        for (const time of times) expect(time).toMatch(ISO);

        const prettyLines = lines(pretty.stderr());
        expect(prettyLines.length).toBeGreaterThan(0);
        for (const line of prettyLines) expect(line).toMatch(PRETTY);
      } finally {
        await tmp.cleanup();
      }
    } finally {
      await json.stop();
      await pretty.stop();
    }
  });
});

describe('run --emulator (npm start)', () => {
  /** One `run --emulator` in `cwd`, until its first pass, then stopped; its stderr. */
  async function runOnce(cwd: string, extra: string[] = []): Promise<string> {
    const args = 'run --manifests manifests --emulator --listen 127.0.0.1:0 --interval 0';
    const run = startEnvsync([...args.split(' '), ...extra], { cwd });
    try {
      await waitFor(
        'the first pass',
        () => run.logs().some((l) => String(l['msg']).startsWith('pass ')),
        { timeoutMs: 30_000 },
      );
      run.child.kill('SIGTERM');
      expect(await run.exitedWithin(30_000)).toEqual({ code: 0, signal: null });
      return run.stderr();
    } finally {
      await run.kill();
    }
  }

  it('a second start in the same folder gives no state file warning: the embedded emulator keeps a state file of its own, started afresh', async () => {
    const tmp = await tempDir();
    try {
      await cp(EXAMPLES, tmp.path('manifests'), { recursive: true });
      const first = await runOnce(tmp.dir);
      const second = await runOnce(tmp.dir);
      for (const stderr of [first, second]) {
        expect(stderr).not.toContain('state file');
        expect(parsed(stderr).filter((l) => Number(l['level']) >= 40)).toHaveLength(1);
        expect(stderr).toContain('USING THE EMBEDDED EMULATOR');
      }
      const own = JSON.parse(await readFile(tmp.path('.envsync/emulator-state.json'), 'utf8'));
      expect(own).toMatchObject({ api: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/$/) });
      // The real API's state file is never touched by a try-out.
      await expect(stat(tmp.path('.envsync/state.json'))).rejects.toThrow(/ENOENT/);

      // A state file named explicitly is used as it is, as without --emulator.
      const named = await tmp.write(
        'named.json',
        '{"version":3,"api":"http://127.0.0.1:1/","orgs":{}}\n',
      );
      const explicit = await runOnce(tmp.dir, ['--state', named]);
      expect(explicit).toContain('state file was written for another API address');
    } finally {
      await tmp.cleanup();
    }
  });
});
