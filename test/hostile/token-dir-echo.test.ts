/**
 * A token per org (`--token-dir`) and a service that echoes tokens back, in every spelling of
 * echo.ts: every answer, for every org, carries every org's token and the default one. No sink
 * may hold any of them: stdout and stderr of every one-shot command, `plan --out`,
 * `--summary-file`, the state file, exported manifests; the daemon's /status, status page, logs
 * and state file, in this process and as `envsync run`.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsyncInProcess, startEnvsync } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';
import { ECHO_MANIFESTS, planAndSyncSinks, spellingsIn, startEchoingService } from './echo.ts';

/** acme's and beta's tokens (their files), and the default token (gamma's and delta's). */
const TOKENS = {
  acme: 'fF9q4Tq9Lm2Zx7Vb+/w=',
  beta: 'Kq3Zr8Wm1Tx5Pb7N~.x_',
  default: 'Hw6Yc2Jd9Rn4Qs8G-Ua3',
};

/** A safety net for a loaded machine, not a timing. */
const WAIT_MS = 60_000;

/** Every file under `dir` but the manifests and the tokens, by path. */
async function writtenFiles(dir: string): Promise<[string, string][]> {
  const files: [string, string][] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const relative = path.relative(dir, path.join(entry.parentPath, entry.name));
    if (!relative.startsWith('manifests') && !relative.startsWith('tokens'))
      files.push([relative, await readFile(path.join(dir, relative), 'utf8')]);
  }
  return files;
}

/** Each sink holding a spelling of one of the tokens: the sink, whose token, which spellings. */
function leaks(outputs: readonly [string, string][]): string[] {
  return outputs.flatMap(([sink, text]) =>
    Object.entries(TOKENS).flatMap(([whose, token]) => {
      const found = spellingsIn(text, token);
      return found.length === 0 ? [] : [`${sink}: ${whose}'s token: ${found.join(', ')}`];
    }),
  );
}

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: Awaited<ReturnType<typeof startEchoingService>>;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  tmp = await tempDir();
  api = await startEchoingService(Object.values(TOKENS));
  for (const [file, text] of Object.entries(ECHO_MANIFESTS))
    await tmp.write(`manifests/${file}`, text);
  await tmp.write('tokens/acme', `${TOKENS.acme}\n`);
  await tmp.write('tokens/beta', `${TOKENS.beta}\n`);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
  await api.close();
  await tmp.cleanup();
});

/** The Authorization header of every request, by org, as the service received them. */
function authorizationsByOrg(): Record<string, string[]> {
  const byOrg: Record<string, Set<string>> = {};
  for (const r of api.requests) {
    const org = /\/api\/v2\/(?:environments|policies)\/([^/?]+)/.exec(r.url)?.[1] ?? '';
    (byOrg[org] ??= new Set()).add(r.authorization ?? '');
  }
  return Object.fromEntries(Object.entries(byOrg).map(([org, set]) => [org, [...set]]));
}

describe('--token-dir, and a service echoing every token', () => {
  it(
    'no one-shot command writes any token, in any spelling, to stdout, stderr or a file',
    { timeout: 180_000 },
    async () => {
      const outputs: [string, string][] = [];
      const common = ['--manifests', 'manifests', '--state', 'state.json', '--api-url', api.url];
      const fast = ['--retries', '1', '--retry-delay', '10ms', '--log-level', 'trace'];
      const tokens = ['--token-dir', 'tokens'];
      const run = async (name: string, args: string[]) => {
        const result = await envsyncInProcess([...args, ...tokens], {
          cwd: tmp.dir,
          env: { ENVSYNC_TOKEN: TOKENS.default },
        });
        outputs.push([`${name} stdout`, result.stdout], [`${name} stderr`, result.stderr]);
        return result;
      };
      await planAndSyncSinks(run, common, fast);
      await run('export --out', [
        'export',
        '--api-url',
        api.url,
        '--org',
        'acme',
        '--org',
        'beta',
        '--org',
        'gamma',
        ...fast,
        '--out',
        'exported',
      ]);

      const files = await writtenFiles(tmp.dir);
      for (const expected of [
        'plan.json',
        'plan-summary.md',
        'sync-summary.md',
        'state.json',
        path.join('exported', 'acme.yaml'),
      ])
        expect(files.map(([name]) => name)).toContain(expected);
      outputs.push(...files);
      // The policy document holding the tokens is not exported: it would send them back masked.
      expect(files.map(([name]) => name)).not.toContain(
        path.join('exported', 'policies', 'acme', 'echo.yaml'),
      );

      // Each org's requests carried its own token; the default served the orgs with no file.
      expect(authorizationsByOrg()).toEqual({
        acme: [`Bearer ${TOKENS.acme}`],
        beta: [`Bearer ${TOKENS.beta}`],
        gamma: [`Bearer ${TOKENS.default}`],
        delta: [`Bearer ${TOKENS.default}`],
      });
      // The echoes reached the outputs, masked. Checked with booleans: a failing `toContain`
      // would print the outputs, and with them what leaked.
      const seen = outputs.map(([, text]) => text).join('\n');
      for (const said of ['base64 of the bare token: [REDACTED]', 'hex of the token: [REDACTED]'])
        expect(seen.includes(said), said).toBe(true);
      expect(leaks(outputs)).toEqual([]);
    },
  );

  it(
    'the daemon writes none to /status, the status page, its logs or its state file',
    { timeout: 120_000 },
    async () => {
      const d = await startTestDaemon({
        apiUrl: api.url,
        cwd: tmp.dir,
        token: TOKENS.default,
        tokenDir: 'tokens',
        flags: { manifests: 'manifests', state: 'state.json' },
      });
      cleanups.push(() => d.stop());
      await waitFor('a pass', () => d.passes() >= 1, { timeoutMs: WAIT_MS });
      await d.daemon.idle();
      const outputs: [string, string][] = [];
      for (const endpoint of ['/status', '/']) {
        const response = await request(`${d.url}${endpoint}`);
        outputs.push([endpoint, await response.body.text()]);
      }
      outputs.push(['logs', JSON.stringify(d.logs())]);
      await d.stop();
      outputs.push(...(await writtenFiles(tmp.dir)));
      expect(outputs.map(([sink]) => sink)).toContain('state.json');
      const status = outputs.find(([sink]) => sink === '/status')?.[1] ?? '';
      expect(status.includes('base64 of the bare token: [REDACTED]')).toBe(true);
      expect(status.includes('"tokenSource": "token-dir:acme"')).toBe(true);
      expect(leaks(outputs)).toEqual([]);
    },
  );

  it(
    'envsync run writes none to its stderr, /status or state file',
    { timeout: 120_000 },
    async () => {
      const run = startEnvsync(
        [
          'run',
          '--manifests',
          'manifests',
          '--state',
          'state.json',
          '--api-url',
          api.url,
          '--token-dir',
          'tokens',
          '--retries',
          '1',
          '--retry-delay',
          '10ms',
          '--log-level',
          'trace',
          '--listen',
          '127.0.0.1:0',
          '--interval',
          '0',
        ],
        { cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKENS.default } },
      );
      const outputs: [string, string][] = [];
      try {
        const url = await run.listenUrl();
        await waitFor('a pass', () => run.stderr().includes('"msg":"pass '), {
          timeoutMs: WAIT_MS,
        });
        for (const endpoint of ['/status', '/']) {
          const response = await request(`${url}${endpoint}`);
          outputs.push([endpoint, await response.body.text()]);
        }
      } finally {
        run.child.kill('SIGTERM');
      }
      expect((await run.exited).code).toBe(0);
      outputs.push(['run stdout', run.stdout()], ['run stderr', run.stderr()]);
      outputs.push(...(await writtenFiles(tmp.dir)));
      expect(outputs.map(([sink]) => sink)).toContain('state.json');
      expect(run.stderr().includes('[REDACTED]')).toBe(true);
      expect(leaks(outputs)).toEqual([]);
    },
  );
});
