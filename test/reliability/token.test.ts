import { readFile } from 'node:fs/promises';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsyncInProcess, startEnvsync, type CliResult } from '../helpers/cli.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'tkn-RECOGNISABLE-7f3a9c2e5b1d';
/** A distinctive part, so a partial leak (a prefix, a slice) is caught too. */
const PART = 'RECOGNISABLE-7f3a';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;

beforeEach(async () => {
  tmp = await tempDir();
  api = await startTestEmulator({
    profile: 'kosli',
    tokens: [{ token: TOKEN, orgs: ['acme'] }],
    seed: 5,
    faults: { failRate: 0.2 },
  });
  await tmp.write(
    'manifests/acme.yaml',
    'org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n',
  );
  await tmp.write(
    'manifests/beta.yaml',
    'org: beta\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n',
  );
  await tmp.write('manifests/broken.yaml', 'org: gamma\nenvironments: {}\n');
  await tmp.write('token', `${TOKEN}\n`);
});
afterEach(async () => {
  await api.close();
  await tmp.cleanup();
});

function expectNoToken(where: string, text: string) {
  expect(text.includes(TOKEN), `${where} contains the token`).toBe(false);
  expect(text.includes(PART), `${where} contains part of the token`).toBe(false);
}

const shared = (url: string) => [
  '--manifests',
  'manifests',
  '--state',
  'state.json',
  '--api-url',
  url,
  '--retry-delay',
  '10ms',
  '--log-level',
  'trace',
];

// The one-shot commands run as the CLI's `main` in this process: a command writes all of its output
// to the streams it is given (src/main.ts), the text a child process would print.
describe('the token never leaks', () => {
  it('from any one-shot command: success, failures, retries, every output format, trace logs, the state file', async () => {
    const results: [string, CliResult][] = [];
    const env = { ENVSYNC_TOKEN: TOKEN };
    for (const output of ['text', 'json', 'markdown']) {
      results.push([
        `plan ${output}`,
        await envsyncInProcess(['plan', ...shared(api.url), '-o', output], { cwd: tmp.dir, env }),
      ]);
      results.push([
        `sync ${output}`,
        await envsyncInProcess(['sync', ...shared(api.url), '-o', output], { cwd: tmp.dir, env }),
      ]);
    }
    results.push([
      'validate',
      await envsyncInProcess(['validate', '--manifests', 'manifests', '--log-level', 'trace'], {
        cwd: tmp.dir,
        env,
      }),
    ]);
    results.push([
      'token file',
      await envsyncInProcess(['sync', ...shared(api.url), '--token-file', 'token'], {
        cwd: tmp.dir,
      }),
    ]);
    results.push([
      'refused token',
      await envsyncInProcess(['sync', ...shared(api.url)], {
        cwd: tmp.dir,
        env: { ENVSYNC_TOKEN: `${TOKEN}x` },
      }),
    ]);
    results.push([
      'bad flag',
      await envsyncInProcess(['sync', ...shared(api.url), '--concurrency', 'many'], {
        cwd: tmp.dir,
        env,
      }),
    ]);
    results.push([
      'plain http',
      await envsyncInProcess(['sync', ...shared('http://api.example.invalid')], {
        cwd: tmp.dir,
        env,
      }),
    ]);
    results.push([
      'connection refused',
      await envsyncInProcess(['sync', ...shared('http://127.0.0.1:9'), '--retries', '1'], {
        cwd: tmp.dir,
        env,
      }),
    ]);
    for (const [name, result] of results) {
      expectNoToken(`${name} stdout`, result.stdout);
      expectNoToken(`${name} stderr`, result.stderr);
    }
    // The runs did happen: retries, a 403 for beta, a 401 for the wrong token.
    expect(results.some(([, r]) => r.stderr.includes('retrying'))).toBe(true);
    expect(results.some(([, r]) => r.stdout.includes('token was refused (403)'))).toBe(true);
    expect(results.some(([, r]) => r.stdout.includes('token was refused (401)'))).toBe(true);
    expectNoToken('state file', await readFile(tmp.path('state.json'), 'utf8'));
  });

  it('even when the server echoes the Authorization header back in its errors', async () => {
    const echo = await startFakeApi((req, res) => {
      const auth = req.headers.authorization ?? '';
      if (req.method === 'GET' && req.url?.includes('acme'))
        res
          .writeHead(200, { 'content-type': 'text/plain' })
          .end(`not json, your header was ${auth}`);
      else if (req.method === 'GET')
        res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
      else
        res
          .writeHead(req.url?.includes('beta') ? 400 : 503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: `rejected ${auth}`, errors: { token: auth } }));
    });
    try {
      for (const output of ['text', 'json', 'markdown']) {
        const result = await envsyncInProcess(
          ['sync', ...shared(echo.url), '-o', output, '--retries', '1'],
          { cwd: tmp.dir, env: { ENVSYNC_TOKEN: TOKEN } },
        );
        expect(result.stdout).toContain('[REDACTED]');
        expectNoToken(`echo ${output} stdout`, result.stdout);
        expectNoToken(`echo ${output} stderr`, result.stderr);
      }
    } finally {
      await echo.close();
    }
  });

  it('from envsync run: its logs, /status and /metrics', async () => {
    const run = startEnvsync(
      [
        'run',
        ...shared(api.url),
        '--token-file',
        'token',
        '--listen',
        '127.0.0.1:0',
        '--interval',
        '0',
      ],
      { cwd: tmp.dir },
    );
    try {
      const url = await run.listenUrl();
      await waitFor('a pass', () => run.stderr().includes('"msg":"pass '));
      const status = await (await request(`${url}/status`)).body.text();
      const metrics = await (await request(`${url}/metrics`)).body.text();
      expect(status).toContain('"acme"');
      expectNoToken('/status', status);
      expectNoToken('/metrics', metrics);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
    expectNoToken('run stderr', run.stderr());
  });

  it('from the emulator, whose tokens are its own flags', async () => {
    const emulator = startEnvsync([
      'emulator',
      '--port',
      '0',
      '--token',
      `${TOKEN}=acme`,
      '--log-level',
      'trace',
    ]);
    try {
      const url = await waitFor(
        'listening',
        () => /^listening on (\S+)/.exec(emulator.stdout())?.[1],
      );
      for (const auth of [`Bearer ${TOKEN}`, `Bearer ${TOKEN}-wrong`, `Basic ${TOKEN}`]) {
        const response = await request(`${url}/api/v2/environments/acme`, {
          headers: { authorization: auth },
        });
        expectNoToken('emulator answer', await response.body.text());
      }
    } finally {
      emulator.child.kill('SIGTERM');
      await emulator.exited;
    }
    expectNoToken('emulator stdout', emulator.stdout());
    expectNoToken('emulator stderr', emulator.stderr());
  });
});
