/**
 * What each command loads, seen from inside the real process: a probe given to Node with
 * `--import` records every package module and, at exit, whether the costly built-ins were loaded.
 * Start-up time and memory are measured by the benchmark; this holds the structure that keeps
 * them low (docs/architecture.md, "Start-up rules"): each path loads only what it uses, so a regression shows here
 * as a name, not as a few milliseconds lost in noise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envsync, startEnvsync } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { loadProbe } from '../helpers/load-probe.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'probe-9d4e1a7c';
const EXAMPLES = new URL('../../examples/manifests', import.meta.url).pathname;

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;
let probe: Awaited<ReturnType<typeof loadProbe>>;

beforeAll(async () => {
  tmp = await tempDir();
  probe = await loadProbe(tmp);
  api = await startTestEmulator({ tokens: [{ token: TOKEN, orgs: null }] });
});
afterAll(async () => {
  await api.close();
  await tmp.cleanup();
});

const probeEnv = (name: string) => ({ ...probe.env(name), ENVSYNC_TOKEN: TOKEN });
const probed = (name: string) => probe.read(name);

describe('what each path loads', () => {
  it('validate: js-yaml only, no HTTP client', async () => {
    const run = await envsync(['validate', '--manifests', EXAMPLES], { env: probeEnv('validate') });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('valid: 4 file(s), 3 org(s), 9 environment(s)\n');
    expect(probed('validate')).toEqual({ packages: ['js-yaml'], loaded: [], startUp: [] });
  });

  it('validate with problems, and --help: the same, errors and all', async () => {
    const broken = await tmp.write('broken/acme.yaml', 'org: acme\nenvironments:\n  - name: [\n');
    const run = await envsync(['validate', broken], { env: probeEnv('broken') });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('acme.yaml:');
    // The `yaml` package and the schema read a broken file again to place the error.
    expect(probed('broken')).toEqual({
      packages: ['js-yaml', 'yaml', 'zod'],
      loaded: [],
      startUp: [],
    });

    const help = await envsync(['--help'], { env: probeEnv('help') });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: envsync <command>');
    expect(probed('help')).toEqual({ packages: [], loaded: [], startUp: [] });
  });

  it('plan: the light undici and p-retry on top, still no http2, tls or Node’s own fetch', async () => {
    const state = tmp.path('plan-state.json');
    const args = ['--manifests', EXAMPLES, '--api-url', api.url, '--state', state];
    expect((await envsync(['sync', ...args], { env: probeEnv('sync') })).code).toBe(0);
    const run = await envsync(['plan', ...args], { env: probeEnv('plan') });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Plan: 0 to create, 0 to update');
    expect(probed('plan')).toMatchObject({
      packages: ['is-network-error', 'js-yaml', 'p-retry', 'undici'],
      loaded: [],
    });
  });

  it('the daemon and the emulator serve HTTP without Node’s fetch stack (http2, tls)', async () => {
    const emulator = startEnvsync(['emulator', '--port', '0'], { env: probeEnv('emulator') });
    const daemon = startEnvsync(
      [
        'run',
        '--manifests',
        EXAMPLES,
        '--api-url',
        api.url,
        '--state',
        tmp.path('run-state.json'),
        '--listen',
        '127.0.0.1:0',
        '--log-format',
        'json',
      ],
      { env: probeEnv('run') },
    );
    try {
      await waitFor('the emulator to listen', () =>
        emulator.stdout().startsWith('listening on http://'),
      );
      const listen = await daemon.listenUrl();
      await waitFor('the daemon to be ready', async () => (await fetch(`${listen}/readyz`)).ok);
      for (const page of ['/metrics', '/status', '/']) {
        expect((await fetch(`${listen}${page}`)).status).toBe(200);
      }
      daemon.child.kill('SIGTERM');
      emulator.child.kill('SIGTERM');
      expect((await daemon.exited).code).toBe(0);
      expect((await emulator.exited).code).toBe(0);
    } finally {
      await daemon.kill();
      await emulator.kill();
    }
    // pino itself loads node:worker_threads (for `isMainThread`).
    for (const name of ['run', 'emulator']) {
      const { loaded, packages } = probed(name);
      expect(loaded.filter((builtin) => builtin !== 'workers')).toEqual([]);
      expect(packages).toContain('pino');
    }
    // prom-client's summaries, push gateway and cluster parts stay unloaded.
    expect(probed('run').packages).toContain('prom-client');
    expect(probed('run').packages).not.toContain('tdigest');
  });
});
