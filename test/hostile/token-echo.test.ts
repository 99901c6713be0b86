/**
 * The token never leaves envsync, even when the service echoes it back in every spelling (echo.ts):
 * every sink is searched for every spelling, with one token and with a token per org.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess, startEnvsync } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from '../notify/receiver.ts';
import { ECHO_MANIFESTS, ECHO_ORGS, leaks, startEchoingService } from './echo.ts';

/** A safety net for a loaded machine, not a timing. */
const WAIT_MS = 60_000;
const ENDPOINTS = ['/', '/status', '/metrics', '/healthz', '/readyz'];

/** `default` is ENVSYNC_TOKEN's (and the token file's); the others are files of --token-dir. */
type Tokens = { default: string } & Record<string, string>;
const SETUPS: [string, Tokens][] = [
  ['a token with + / ~ . - _ =', { default: 'Ab3+x/y~z.w-v_u9Qk7LmN2pR8sT4hJ6==' }],
  [
    'a token of 64 random bytes in base64',
    {
      default:
        'q9Vt/4mE+Zr2Lw8KxN1pYc7Hs3Gd6Jf0BuTa5RiWkQoXl4Pe8Nc2Vb7Mz1Aq3Sw5Dr9Ft6Gy0Hu4Ji8Ko2Lp6Zx+Cv/Bn==',
    },
  ],
  [
    'a token per org (--token-dir)',
    { default: 'Hw6Yc2Jd9Rn4Qs8G-Ua3', acme: 'fF9q4Tq9Lm2Zx7Vb+/w=', beta: 'Kq3Zr8Wm1Tx5Pb7N~.x_' },
  ],
];

/** Every file under `dir` the test did not write itself, by path. */
async function writtenFiles(dir: string): Promise<[string, string][]> {
  const files: [string, string][] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const relative = path.relative(dir, path.join(entry.parentPath, entry.name));
    if (entry.isFile() && !/^(manifests|tokens|token$)/.test(relative))
      files.push([relative, await readFile(path.join(dir, relative), 'utf8')]);
  }
  return files;
}

/** The temp folder, the echoing service and the token files of `tokens`, fresh for each test. */
function echoWorld(tokens: Tokens) {
  const perOrg = Object.keys(tokens).length > 1;
  const world = {
    tmp: undefined as unknown as Awaited<ReturnType<typeof tempDir>>,
    api: undefined as unknown as Awaited<ReturnType<typeof startEchoingService>>,
    cleanups: [] as (() => Promise<void>)[],
    /** The flags that name the tokens: the directory, when there is one. */
    tokenFlags: perOrg ? ['--token-dir', 'tokens'] : [],
  };
  beforeEach(async () => {
    world.tmp = await tempDir();
    world.api = await startEchoingService(Object.values(tokens));
    for (const [file, text] of Object.entries(ECHO_MANIFESTS))
      await world.tmp.write(`manifests/${file}`, text);
    await world.tmp.write('token', `${tokens.default}\n`);
    for (const [org, token] of Object.entries(tokens))
      if (org !== 'default') await world.tmp.write(`tokens/${org}`, `${token}\n`);
  });
  afterEach(async () => {
    for (const cleanup of world.cleanups.splice(0).toReversed()) await cleanup();
    await world.api.close();
    await world.tmp.cleanup();
  });
  return world;
}

/** Each endpoint's answer, by path. */
const endpoints = (url: string) =>
  Promise.all(
    ENDPOINTS.map(async (at): Promise<[string, string]> => [
      at,
      await (await request(`${url}${at}`)).body.text(),
    ]),
  );

describe.each(SETUPS)('with %s, a service echoing it', (_name, tokens) => {
  const world = echoWorld(tokens);

  it(
    'no one-shot command writes it, in any spelling, to stdout, stderr or a file',
    { timeout: 180_000 },
    async () => {
      const { tmp, api, tokenFlags } = world;
      const outputs: [string, string][] = [];
      const run = async (
        name: string,
        args: string[],
        env: Record<string, string> = { ENVSYNC_TOKEN: tokens.default },
      ) => {
        const result = await envsyncInProcess([...args, ...tokenFlags], { cwd: tmp.dir, env });
        outputs.push([`${name} stdout`, result.stdout], [`${name} stderr`, result.stderr]);
        return result;
      };
      const fast = '--retries 1 --retry-delay 10ms'.split(' ');
      const common = (level: string, url = api.url) =>
        `--manifests manifests --state state.json --api-url ${url} ${fast.join(' ')} --log-level ${level}`.split(
          ' ',
        );
      const orgs = [...ECHO_ORGS.flatMap((org) => ['--org', org]), ...fast];
      // Commands that share no file run side by side; the syncs share the state file (locked).
      const [planned] = await Promise.all([
        run('plan --out', [
          'plan',
          ...common('debug'),
          ...'--out plan.json --annotations github --summary-file plan.md'.split(' '),
        ]),
        ...['text', 'json', 'markdown'].map((format) =>
          run(`plan -o ${format}`, ['plan', ...common('trace'), '-o', format]),
        ),
        run('validate', ['validate', '--manifests', 'manifests', '--log-level', 'trace']),
        run('export', ['export', '--api-url', api.url, ...orgs, '--log-level', 'trace']),
        run('export --out', ['export', '--api-url', api.url, ...orgs, '--out', 'exported']),
      ]);
      expect(planned.code).toBe(1);
      const [synced] = await Promise.all([
        run('sync', [
          'sync',
          ...common('trace'),
          ...'--annotations github --summary-file sync.md'.split(' '),
        ]),
        // Pretty logs unescape what JSON escaped: they are masked as they are written.
        run('sync, pretty logs', [
          'sync',
          ...common('trace'),
          ...'-o json --log-format pretty'.split(' '),
        ]),
        run('sync, step summary', ['sync', ...common('debug'), '-o', 'markdown'], {
          ENVSYNC_TOKEN: tokens.default,
          GITHUB_STEP_SUMMARY: tmp.path('step-summary.md'),
        }),
        run('sync --plan', ['sync', ...common('trace'), '--plan', 'plan.json']),
        run('sync, token file', ['sync', ...common('trace'), '--token-file', 'token'], {}),
        // Runs that fail before or at their first request.
        run('bad flag', ['sync', ...common('trace'), '--concurrency', 'many']),
        run('plain http', ['sync', ...common('trace', 'http://api.example.invalid')]),
        run('connection refused', ['sync', ...common('trace', 'http://127.0.0.1:9')]),
      ]);
      expect(synced.code).toBe(1);

      const files = await writtenFiles(tmp.dir);
      const names = files.map(([name]) => name);
      for (const expected of ['plan.json', 'plan.md', 'sync.md', 'step-summary.md', 'state.json'])
        expect(names).toContain(expected);
      expect(names).toContain(path.join('exported', 'acme.yaml'));
      // The policy document holding the token is not exported: it would send it back masked.
      expect(names).not.toContain(path.join('exported', 'policies', 'acme', 'echo.yaml'));
      outputs.push(...files);

      // Each org's requests carried its own token, the default serving those with no file.
      const sent = new Map<string, Set<string | undefined>>();
      for (const r of api.requests) {
        const org = /\/api\/v2\/(?:environments|policies)\/([^/?]+)/.exec(r.url)?.[1] ?? '';
        sent.set(org, (sent.get(org) ?? new Set()).add(r.authorization));
      }
      for (const org of ECHO_ORGS)
        expect([...(sent.get(org) ?? [])], org).toEqual([
          `Bearer ${tokens[org] ?? tokens.default}`,
        ]);
      // The echoes reached the outputs, masked, and envsync said what happened. Checked with
      // booleans: a failing `toContain` would print the outputs, and with them what leaked.
      const seen = outputs.map(([, text]) => text).join('\n');
      for (const said of [
        'base64 of the bare token: [REDACTED]',
        'hex of the token: [REDACTED]',
        'token was refused (403)',
        'GET /api/v2/environments/gamma: 500',
        '429',
        'the listing is not JSON',
        'retrying',
      ])
        expect(seen.includes(said), said).toBe(true);
      expect(leaks(outputs, tokens)).toEqual([]);
    },
  );

  it(
    'the daemon writes it to none of its endpoints, logs, state file or notifications',
    { timeout: 120_000 },
    async () => {
      const { tmp, api, cleanups, tokenFlags } = world;
      const cloud = await startReceiver();
      const slack = await startReceiver();
      cleanups.push(cloud.close, slack.close);
      const d = await startTestDaemon({
        apiUrl: api.url,
        cwd: tmp.dir,
        token: tokens.default,
        ...(tokenFlags.length === 0 ? {} : { tokenDir: 'tokens' }),
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
      const outputs: [string, string][] = await endpoints(d.url);
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
      expect(leaks(outputs, tokens)).toEqual([]);
    },
  );
});

describe('envsync run, a token per org and the default in a token file', () => {
  const tokens = SETUPS[2]?.[1] as Tokens;
  const world = echoWorld(tokens);

  it(
    'writes none to its stdout, stderr, endpoints or state file',
    { timeout: 120_000 },
    async () => {
      const { tmp, api } = world;
      const live = startEnvsync(
        [
          ...`run --manifests manifests --state state.json --api-url ${api.url}`.split(' '),
          ...'--token-dir tokens --token-file token --retries 1 --retry-delay 10ms'.split(' '),
          ...'--log-level trace --listen 127.0.0.1:0 --interval 0'.split(' '),
        ],
        { cwd: tmp.dir },
      );
      const outputs: [string, string][] = [];
      try {
        const url = await live.listenUrl();
        await waitFor('a pass', () => live.stderr().includes('"msg":"pass '), {
          timeoutMs: WAIT_MS,
        });
        outputs.push(...(await endpoints(url)));
      } finally {
        live.child.kill('SIGTERM');
      }
      expect((await live.exited).code).toBe(0);
      outputs.push(['run stdout', live.stdout()], ['run stderr', live.stderr()]);
      outputs.push(...(await writtenFiles(tmp.dir)));
      expect(outputs.map(([sink]) => sink)).toContain('state.json');
      const status = outputs.find(([sink]) => sink === '/status')?.[1] ?? '';
      expect(status.includes('"tokenSource": "token-dir:acme"')).toBe(true);
      expect(live.stderr().includes('[REDACTED]')).toBe(true);
      expect(leaks(outputs, tokens)).toEqual([]);
    },
  );
});

describe('a token that is not a Bearer token', () => {
  const world = echoWorld({ default: 'unused-token' });

  it('is refused before any request, by a message that does not show it', async () => {
    const { tmp, api } = world;
    const args = ['plan', '--manifests', 'manifests', '--api-url', api.url, '--log-level', 'trace'];
    const bad = 'SeCrEt"with\\quotes-and,commas';
    const prefixed = 'Xq7-prefixed-token-5d1c';
    const prefix = (source: string) =>
      `envsync plan: ${source}: the token starts with "Bearer ": drop the Bearer prefix, envsync adds it (the token is not shown)\n`;
    for (const [token, file, shown, said] of [
      [bad, false, 'SeCrEt', 'RFC 6750'],
      [`${bad}\n`, true, 'SeCrEt', 'RFC 6750'],
      [`Bearer ${prefixed}`, false, prefixed, prefix('ENVSYNC_TOKEN')],
      [`bearer  ${prefixed}\n`, true, prefixed, prefix('token file token')],
    ] as const) {
      if (file) await tmp.write('token', token);
      const result = await envsyncInProcess(file ? [...args, '--token-file', 'token'] : args, {
        cwd: tmp.dir,
        env: file ? {} : { ENVSYNC_TOKEN: token },
      });
      expect(result.code, said).toBe(1);
      expect(result.stderr).toContain(said);
      expect((result.stdout + result.stderr).includes(shown), 'the token shown').toBe(false);
    }
    expect(api.requests).toEqual([]);
  });

  it(
    'is refused when a rotated token file turns bad: the daemon sends nothing with it and never prints it',
    { timeout: 90_000 },
    async () => {
      const { tmp, api, cleanups } = world;
      await tmp.write('token', 'good-token-1234567890\n');
      for (const org of ECHO_ORGS.slice(1)) await rm(tmp.path(`manifests/${org}.yaml`));
      const live = startEnvsync(
        [
          ...`run --manifests manifests --state state.json --api-url ${api.url}`.split(' '),
          ...'--token-file token --listen 127.0.0.1:0 --interval 0'.split(' '),
        ],
        { cwd: tmp.dir },
      );
      cleanups.push(() => live.kill());
      const url = await live.listenUrl();
      await waitFor('a pass', () => live.stderr().includes('"msg":"pass '), { timeoutMs: WAIT_MS });
      const before = api.requests.length;
      await tmp.write('token', 'rotated"bad\\token-0987654321\n');
      await (await request(`${url}/reconcile`, { method: 'POST' })).body.dump();
      await waitFor('the refused token', () => live.stderr().includes('RFC 6750'), {
        timeoutMs: WAIT_MS,
      });
      const rotated = api.requests
        .slice(before)
        .filter((r) => r.authorization?.includes('rotated'));
      expect(rotated).toEqual([]);
      expect(await (await request(`${url}/status`)).body.text()).not.toContain('rotated');
      expect(live.stderr()).not.toContain('rotated');
    },
  );
});

describe('an --api-url with user information', () => {
  it(
    'is refused without echoing the user name or password, parseable or not, from every command',
    { timeout: 180_000 },
    async () => {
      const tmp = await tempDir();
      try {
        await tmp.write('manifests/acme.yaml', ECHO_MANIFESTS['acme.yaml'] ?? '');
        const urls = [
          'http://admin:PaSsWoRd1@127.0.0.1:1',
          'https://admin:PaSsWoRd1@api.example.com/',
          'http://admin:Pa ss Wo rd1@',
          'http://admin:PaSsWoRd1/x@127.0.0.1',
          '//admin:PaSsWoRd1@api.example.com',
        ];
        const env: Record<string, string> = { ENVSYNC_TOKEN: 'a-token-1234' };
        const rest: Record<string, string[]> = {
          plan: ['--manifests', 'manifests'],
          sync: ['--manifests', 'manifests'],
          export: ['--org', 'acme'],
          run: ['--manifests', 'manifests', '--listen', '127.0.0.1:0'],
        };
        // Every address through plan, also from the environment; every command with a parseable
        // and an unparseable one.
        const cases = urls.flatMap((url, i) => [
          { argv: ['plan', ...(rest['plan'] ?? [])], env: { ...env, ENVSYNC_API_URL: url } },
          ...(i === 0 || i === 2 ? Object.keys(rest) : ['plan']).map((command) => ({
            argv: [command, ...(rest[command] ?? []), '--api-url', url],
            env,
          })),
        ]);
        // Two at a time: the machine is shared. `run` in a child process (were the address taken,
        // it would start and wait for signals), the one-shot commands in this process.
        for (let i = 0; i < cases.length; i += 2) {
          await Promise.all(
            cases.slice(i, i + 2).map(async ({ argv, env: vars }) => {
              const where = `${argv.join(' ')} ${vars.ENVSYNC_API_URL ?? ''}`;
              const cli = argv[0] === 'run' ? envsync : envsyncInProcess;
              const result = await cli([...argv, '--log-level', 'trace'], {
                cwd: tmp.dir,
                env: vars,
              });
              expect(result.code, where).toBe(1);
              expect(result.stderr, where).toContain('--api-url');
              for (const secret of ['PaSsWoRd1', 'Pa ss', 'admin'])
                expect((result.stdout + result.stderr).includes(secret), where).toBe(false);
            }),
          );
        }
      } finally {
        await tmp.cleanup();
      }
    },
  );
});

describe('the emulator, whose tokens are its own flags', () => {
  it('shows none in its answers, stdout or stderr', async () => {
    const token = 'tkn-RECOGNISABLE-7f3a9c2e5b1d';
    const emulator = startEnvsync(
      `emulator --port 0 --token ${token}=acme --log-level trace`.split(' '),
    );
    const outputs: [string, string][] = [];
    try {
      const url = await waitFor(
        'listening',
        () => /^listening on (\S+)/.exec(emulator.stdout())?.[1],
      );
      for (const auth of [`Bearer ${token}`, `Bearer ${token}-wrong`, `Basic ${token}`]) {
        const answer = await request(`${url}/api/v2/environments/acme`, {
          headers: { authorization: auth },
        });
        outputs.push([auth.slice(0, 6), await answer.body.text()]);
      }
    } finally {
      emulator.child.kill('SIGTERM');
      await emulator.exited;
    }
    outputs.push(['stdout', emulator.stdout()], ['stderr', emulator.stderr()]);
    expect(leaks(outputs, { emulator: token })).toEqual([]);
  });
});
