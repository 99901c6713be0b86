/** The default state file `.envsync/state.json`: only the sync that creates it says so. */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { syncWorld } from '../helpers/sync-world.ts';

const { tmp, emulator, manifests, cli } = syncWorld();

/** `envsync COMMAND` in the world's folder, with no --state: the default applies. */
const inFolder = (url: string, command: string, extra: string[], env = {}) =>
  cli([command, '--manifests', 'manifests', '--api-url', url, ...extra], env);

const CREATED = 'created the state file';

describe('the default state file', () => {
  it('the sync that creates it says so once, on stderr, with where and how to move it', async () => {
    const api = await emulator();
    await manifests();
    const plan = await inFolder(api.url, 'plan', ['--log-level', 'info']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(existsSync(tmp().path('.envsync'))).toBe(false);

    // A person's terminal: pretty logs, at info.
    const first = await inFolder(api.url, 'sync', ['--log-format', 'pretty']);
    expect(first.code, first.stderr).toBe(0);
    const file = tmp().path('.envsync', 'state.json');
    expect(existsSync(file)).toBe(true);
    const lines = first.stderr.split('\n').filter((line) => line.includes(CREATED));
    expect(lines).toEqual([
      expect.stringContaining(
        `INFO  ${CREATED} ${file}: it records what envsync applied, for the next run; ` +
          '--state FILE or ENVSYNC_STATE puts it elsewhere (docs/state.md)',
      ),
    ]);

    await manifests({ 'acme.yaml': 'org: acme\nenvironments: []\n' });
    const second = await inFolder(api.url, 'sync', ['--log-format', 'pretty']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toContain('INFO');
    expect(second.stderr).not.toContain(CREATED);
  });

  it('a state file named by --state or ENVSYNC_STATE is created without a word', async () => {
    const api = await emulator();
    await manifests();
    const named = await inFolder(api.url, 'sync', ['--log-format', 'pretty', '--state', 's.json']);
    expect(named.code, named.stderr).toBe(0);
    expect(existsSync(tmp().path('s.json'))).toBe(true);
    expect(named.stderr).not.toContain(CREATED);

    const fromEnv = await inFolder(api.url, 'sync', ['--log-format', 'pretty'], {
      ENVSYNC_STATE: 'elsewhere/state.json',
    });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(existsSync(tmp().path('elsewhere', 'state.json'))).toBe(true);
    expect(fromEnv.stderr).not.toContain(CREATED);
    expect(existsSync(tmp().path('.envsync'))).toBe(false);
  });
});
