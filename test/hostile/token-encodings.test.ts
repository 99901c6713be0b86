/**
 * A service that echoes the token back encoded (base64 and base64url at every byte alignment,
 * padded or not, hex of either case, named HTML references, form encoding, base64 escaped for
 * JSON or percent-encoded) in listings (a description, a tag), error bodies, headers, an HTML
 * error page, a Content-Type header and policy documents. Every sink is searched for every
 * spelling: stdout in text, JSON and markdown, stderr's logs, `plan --out`, `--summary-file`, the
 * state file, exported manifests, and the daemon's /status, status page, logs, state file and
 * notifications (CloudEvents and Slack). No run of 12 characters of any spelling may be left.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from '../notify/receiver.ts';
import { ECHO_MANIFESTS, planAndSyncSinks, spellingsIn, startEchoingService } from './echo.ts';

const TOKENS: [string, string][] = [
  ['a token with + / ~ . - _ =', 'Ab3+x/y~z.w-v_u9Qk7LmN2pR8sT4hJ6=='],
  ['a token of 32 random bytes in base64', 'q9Vt/4mE+Zr2Lw8KxN1pYc7Hs3Gd6Jf0BuTa5RiWkQo='],
];

/** A safety net for a loaded machine, not a timing. */
const WAIT_MS = 60_000;

/** Every file under `dir` but the manifests, by path. */
async function writtenFiles(dir: string): Promise<[string, string][]> {
  const files: [string, string][] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const relative = path.relative(dir, path.join(entry.parentPath, entry.name));
    if (!relative.startsWith('manifests'))
      files.push([relative, await readFile(path.join(dir, relative), 'utf8')]);
  }
  return files;
}

describe.each(TOKENS)('with %s, echoed encoded by the service', (_name, token) => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let api: Awaited<ReturnType<typeof startEchoingService>>;
  const cleanups: (() => Promise<void>)[] = [];

  /** Each sink that holds a spelling of the token, with the spellings' names. */
  function leaks(outputs: readonly [string, string][]): string[] {
    return outputs.flatMap(([sink, text]) => {
      const found = spellingsIn(text, token);
      return found.length === 0 ? [] : [`${sink}: ${found.join(', ')}`];
    });
  }

  beforeEach(async () => {
    tmp = await tempDir();
    api = await startEchoingService(token);
    for (const [file, text] of Object.entries(ECHO_MANIFESTS))
      await tmp.write(`manifests/${file}`, text);
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
    await api.close();
    await tmp.cleanup();
  });

  it(
    'no one-shot command writes it, in any spelling, to stdout, stderr or a file',
    { timeout: 180_000 },
    async () => {
      const outputs: [string, string][] = [];
      const common = ['--manifests', 'manifests', '--state', 'state.json', '--api-url', api.url];
      const fast = ['--retries', '1', '--retry-delay', '10ms', '--log-level', 'debug'];
      const run = async (name: string, args: string[]) => {
        const result = await envsyncInProcess(args, {
          cwd: tmp.dir,
          env: { ENVSYNC_TOKEN: token },
        });
        outputs.push([`${name} stdout`, result.stdout], [`${name} stderr`, result.stderr]);
        return result;
      };
      await planAndSyncSinks(run, common, fast);
      const exportArgs = ['export', '--api-url', api.url, '--org', 'acme', ...fast];
      await run('export', exportArgs);
      await run('export --out', [...exportArgs, '--out', 'exported']);

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
      // The policy document holding the token is not exported: it would send it back masked.
      expect(files.map(([name]) => name)).not.toContain(
        path.join('exported', 'policies', 'acme', 'echo.yaml'),
      );

      // The service did echo it, and the echoes reached the outputs, masked. Checked with
      // booleans: a failing `toContain` would print the outputs, and with them what leaked.
      expect(api.requests.some((r) => r.authorization === `Bearer ${token}`)).toBe(true);
      const seen = outputs.map(([, text]) => text).join('\n');
      for (const said of [
        'base64 of the bare token: [REDACTED]',
        'hex of the token: [REDACTED]',
        'token was refused (403)',
        'GET /api/v2/environments/beta: 500',
        'the listing is not JSON',
      ])
        expect(seen.includes(said), said).toBe(true);
      expect(leaks(outputs)).toEqual([]);
    },
  );

  it(
    'the daemon writes it to none of /status, the status page, its logs, its state file or its notifications',
    { timeout: 120_000 },
    async () => {
      const cloud = await startReceiver();
      const slack = await startReceiver();
      cleanups.push(
        () => cloud.close(),
        () => slack.close(),
      );
      const d = await startTestDaemon({
        apiUrl: api.url,
        cwd: tmp.dir,
        token,
        flags: {
          manifests: 'manifests',
          state: 'state.json',
          'notify-url': [cloud.url, `slack:${slack.url}/hooks/T01/B02`],
        },
        notify: { policy: { baseDelayMs: 20, maxAttempts: 2, timeoutMs: 60_000 } },
      });
      cleanups.push(() => d.stop());
      await waitFor('a pass', () => d.passes() >= 1, { timeoutMs: WAIT_MS });
      await d.daemon.idle();
      await waitFor(
        'the notifications of the failing orgs',
        () => cloud.deliveries().length >= 4 && slack.deliveries().length >= 4,
        { timeoutMs: WAIT_MS },
      );
      const outputs: [string, string][] = [];
      for (const endpoint of ['/status', '/']) {
        const response = await request(`${d.url}${endpoint}`);
        outputs.push([endpoint, await response.body.text()]);
      }
      outputs.push(
        ['logs', JSON.stringify(d.logs())],
        ['CloudEvents', cloud.all.map((r) => r.body).join('\n')],
        ['Slack', slack.all.map((r) => r.body).join('\n')],
      );
      await d.stop();
      outputs.push(...(await writtenFiles(tmp.dir)));
      expect(outputs.map(([sink]) => sink)).toContain('state.json');

      const notified = [...cloud.all, ...slack.all].map((r) => r.body).join('\n');
      expect(notified.includes('hex of the token: [REDACTED]')).toBe(true);
      const status = outputs.find(([sink]) => sink === '/status')?.[1] ?? '';
      expect(status.includes('base64 of the bare token: [REDACTED]')).toBe(true);
      expect(leaks(outputs)).toEqual([]);
    },
  );
});
