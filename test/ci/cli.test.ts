import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess, inTerminal } from '../helpers/cli.ts';
import { startTestEmulator } from '../helpers/emulator.ts';

// A plan into a pipe and the terminals are real processes; the help is the CLI's `main` in this
// process. test/config/cli.test.ts has the usage errors; node-check.test.ts, --version.
describe('the CLI', () => {
  it('lists every command in --help', async () => {
    const result = await envsyncInProcess(['--help']);
    expect(result.code).toBe(0);
    for (const command of ['validate', 'plan', 'sync', 'run', 'export', 'schema', 'emulator']) {
      expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    }
  });

  it('colours the plan on a terminal, never with NO_COLOR, and never into a pipe', async () => {
    const api = await startTestEmulator({
      profile: 'kosli',
      tokens: [{ token: 'colour-token', orgs: null }],
    });
    try {
      const examples = fileURLToPath(new URL('../../examples/manifests', import.meta.url));
      const rest = ['--api-url', api.url, '--state', '/dev/null/none', '--log-level', 'silent'];
      const args = ['plan', '--manifests', examples, ...rest];
      const env = { ENVSYNC_TOKEN: 'colour-token' };
      expect(await inTerminal(args, env)).toContain('\u001b[32m+ create\u001b[0m');
      // NO_COLOR on a terminal: `main` in this process, given streams that are terminals (a
      // real one was seen as one above).
      const { stdout: plain } = await envsyncInProcess(args, {
        env: { ...env, NO_COLOR: '1' },
        terminal: true,
      });
      expect(plain).toContain('+ create');
      expect(plain).not.toContain('\u001b[');
      const piped = await envsync(args, { env });
      expect(piped.stdout).toContain('+ create');
      expect(piped.stdout).not.toContain('\u001b[');
    } finally {
      await api.close();
    }
  });
});
