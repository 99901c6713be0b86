/**
 * A hostile service that echoes the token back (the Authorization header, the bare token, its
 * JSON-escaped and \u-escaped forms) in 400/403/429/500 bodies, in messages longer than the
 * 300-character excerpt, in names and descriptions of its listings, and in non-JSON bodies.
 * Every command and every sink runs against it at trace and debug log levels; every output is
 * then searched for the token and for each of its substrings of 12 characters or more.
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsync, envsyncInProcess, startEnvsync, type CliResult } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const FRAGMENT = 12;

/**
 * Each token, and whether every command runs with it (`all`) or only those that write files and
 * the trace-level sync (the second token checks the masking's spellings, not each command again).
 */
const TOKENS: [string, string, 'all' | 'writers'][] = [
  ['a token with + / ~ . - _ =', 'Ab3+x/y~z.w-v_u9Qk7LmN2pR8sT4hJ6==', 'all'],
  // Base64 of random bytes: + / and = padding, 86 characters.
  ['a long random token', `${randomBytes(64).toString('base64').replace(/=+$/, '')}==`, 'writers'],
];

/** The forms a careless service echoes a token in. */
function echoes(token: string) {
  const auth = `Bearer ${token}`;
  return {
    auth,
    /** A JSON string literal's inner text with slashes escaped (`\/`), as PHP writes them. */
    slashEscaped: JSON.stringify(auth).slice(1, -1).replace(/\//g, '\\/'),
    /** Every character as a \u escape. */
    unicodeEscaped: Array.from(auth)
      .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join(''),
    /** A message whose excerpt (300 characters) would end in the middle of the token. */
    long: (what: string) =>
      `${'request rejected; '.repeat(15)}it carried Authorization: ${what} ${'.'.repeat(200)}`,
  };
}

/** The fake service: one org per way of answering (see the file's comment). */
function echoingService(token: string) {
  const e = echoes(token);
  const json = (status: number, body: string, headers: Record<string, string> = {}) => ({
    status,
    body,
    headers: { 'content-type': 'application/json', ...headers },
  });
  // A name made of the token's name-safe characters: a valid environment name.
  const nameLike = token.replace(/[^A-Za-z0-9._~-]/g, '') || 'x';
  const answers: Record<string, (method: string) => ReturnType<typeof json>> = {
    acme: (method) =>
      method === 'GET'
        ? json(
            200,
            `[{"name":"web","type":"K8S","description":"w"},` +
              `{"name":"old","type":"K8S","description":"${e.long(e.slashEscaped)} ${e.unicodeEscaped}"}]`,
          )
        : json(
            400,
            `{"message":"${e.long(e.slashEscaped)}","errors":{"authorization":"${e.slashEscaped}","token":"${token}"}}`,
          ),
    beta: () => json(403, `{"message":"forbidden: ${e.unicodeEscaped} is not allowed"}`),
    gamma: () => ({
      status: 500,
      body: `<html>${e.long(e.auth)}</html>`,
      headers: { 'content-type': 'text/html' },
    }),
    delta: () => json(429, `{"message":"slow down, ${e.long(token)}"}`, { 'retry-after': '0' }),
    names: () =>
      json(
        200,
        `[{"name":"${nameLike}","type":"K8S","description":"${e.slashEscaped}"},` +
          `{"name":"unmanaged-${nameLike.slice(0, 40)}","type":"K8S"}]`,
      ),
    plain: () => ({
      status: 200,
      body: `not json: ${e.long(e.auth)}`,
      headers: { 'content-type': 'text/plain' },
    }),
  };
  // Production's policy documents, echoing it in a description and in a policy's YAML.
  const documents = json(
    200,
    `[{"name":"echo","description":"${e.slashEscaped}","versions":[{"version":1,"policy_yaml":"key: ${e.long(e.slashEscaped)}\\n"}]}]`,
  );
  return startFakeApi((req, res) => {
    if (req.url?.startsWith('/api/v2/policies/') === true) {
      res.writeHead(documents.status, documents.headers).end(documents.body);
      return;
    }
    const org = /\/api\/v2\/environments\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '';
    const answer = answers[org]?.(req.method ?? 'GET') ?? json(404, '{"message":"no such org"}');
    res.writeHead(answer.status, answer.headers).end(answer.body);
  });
}

const MANIFESTS: Record<string, string> = {
  'acme.yaml':
    'org: acme\nenvironments:\n  - name: web\n    type: K8S\n    description: w\n  - name: api\n    type: K8S\n    description: d\n',
  'beta.yaml': 'org: beta\nenvironments:\n  - name: web\n    type: K8S\n    description: d\n',
  'gamma.yaml': 'org: gamma\nenvironments:\n  - name: web\n    type: K8S\n    description: d\n',
  'delta.yaml': 'org: delta\nenvironments:\n  - name: web\n    type: K8S\n    description: d\n',
  'names.yaml': 'org: names\nenvironments:\n  - name: web\n    type: K8S\n    description: d\n',
  'plain.yaml': 'org: plain\nenvironments:\n  - name: web\n    type: K8S\n    description: d\n',
};

/** The token's substrings of FRAGMENT characters (any longer one holds one), in every form. */
function fragments(token: string): string[] {
  const forms = [token, encodeURIComponent(token), JSON.stringify(token).slice(1, -1)];
  const out = new Set<string>();
  for (const form of forms)
    for (let i = 0; i + FRAGMENT <= form.length; i++) out.add(form.slice(i, i + FRAGMENT));
  return [...out];
}

/** Every file under `dir`, except those the test wrote itself (manifests, the token file). */
async function writtenFiles(dir: string): Promise<[string, string][]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files: [string, string][] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const relative = path.relative(dir, file);
    if (relative === 'token' || relative.startsWith('manifests')) continue;
    files.push([relative, await readFile(file, 'utf8')]);
  }
  return files;
}

describe.each(TOKENS)('with %s, a token-echoing service', (_name, token, commands) => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let api: Awaited<ReturnType<typeof echoingService>>;
  const outputs: [string, string][] = [];

  function expectClean() {
    expect(outputs.length).toBeGreaterThan(0);
    const leaks: string[] = [];
    const parts = fragments(token);
    for (const [where, text] of outputs) {
      const found = parts.filter((part) => text.includes(part));
      // Named by count only: a failure must not print what leaked.
      if (found.length > 0) leaks.push(`${where}: ${found.length} fragment(s)`);
    }
    expect(leaks).toEqual([]);
  }

  function keep(name: string, result: CliResult) {
    outputs.push([`${name} stdout`, result.stdout], [`${name} stderr`, result.stderr]);
    return result;
  }

  beforeEach(async () => {
    outputs.length = 0;
    tmp = await tempDir();
    api = await echoingService(token);
    for (const [file, text] of Object.entries(MANIFESTS))
      await tmp.write(`manifests/${file}`, text);
    await tmp.write('token', `${token}\n`);
  });
  afterEach(async () => {
    await api.close();
    await tmp.cleanup();
  });

  const common = (level: string) => [
    '--manifests',
    'manifests',
    '--state',
    'state.json',
    '--api-url',
    api.url,
    '--retries',
    '1',
    '--retry-delay',
    '10ms',
    '--log-level',
    level,
  ];

  it(
    'no one-shot command puts it, or 12 characters of it, in any output or written file',
    { timeout: 180_000 },
    async () => {
      const env = { ENVSYNC_TOKEN: token };
      // The CLI's `main` in this process, which is given the streams a command writes all of its
      // output to (a relative --token-file is found from the command's directory, `cwd`).
      const run = (name: string, args: string[], extra: Record<string, string> = {}) =>
        envsyncInProcess(args, { cwd: tmp.dir, env: { ...env, ...extra } }).then((r) =>
          keep(name, r),
        );

      const all = commands === 'all';
      const exportArgs = (...orgs: string[]) => [
        'export',
        '--api-url',
        api.url,
        ...orgs.flatMap((org) => ['--org', org]),
      ];
      // Commands that share no file run side by side; the syncs share the state file (locked).
      const planned = await Promise.all([
        run('plan --out', [
          'plan',
          ...common('debug'),
          '--out',
          'plan.json',
          '--annotations',
          'github',
          '--summary-file',
          'plan-summary.md',
        ]),
        run('export --out', [
          ...exportArgs('acme', 'plain'),
          '--out',
          'exported',
          '--log-level',
          'debug',
        ]),
        ...(all
          ? [
              run('validate', ['validate', '--manifests', 'manifests', '--log-level', 'trace']),
              ...['text', 'json', 'markdown'].map((output) =>
                run(`plan -o ${output}`, ['plan', ...common('trace'), '-o', output]),
              ),
              run('export', [...exportArgs('acme', 'names', 'beta'), '--log-level', 'trace']),
            ]
          : []),
      ]);
      expect(planned[0].code).toBe(1);
      const synced = await Promise.all([
        run('sync', [
          'sync',
          ...common('trace'),
          '--annotations',
          'github',
          '--summary-file',
          'sync-summary.md',
        ]),
        // Pretty logs unescape what JSON escaped: they are masked as they are written.
        run('sync -o json, pretty logs', [
          'sync',
          ...common('trace'),
          '-o',
          'json',
          '--annotations',
          'github',
          '--log-format',
          'pretty',
        ]),
        ...(all
          ? [
              run('sync (step summary)', ['sync', ...common('debug'), '-o', 'markdown'], {
                GITHUB_STEP_SUMMARY: path.join(tmp.dir, 'step-summary.md'),
              }),
              run('sync --plan', ['sync', ...common('trace'), '--plan', 'plan.json']),
              run('sync (token file)', ['sync', ...common('trace'), '--token-file', 'token']),
            ]
          : []),
      ]);
      expect(synced[0].code).toBe(1);

      const files = await writtenFiles(tmp.dir);
      const names = files.map(([name]) => name);
      for (const expected of [
        'plan.json',
        'plan-summary.md',
        'sync-summary.md',
        ...(all ? ['step-summary.md'] : []),
        'state.json',
        path.join('exported', 'acme.yaml'),
      ])
        expect(names).toContain(expected);
      // Its policy document holds the token: not exported, or a sync would send it back masked.
      expect(names).not.toContain(path.join('exported', 'policies', 'acme', 'echo.yaml'));
      outputs.push(...files);

      // The service did echo it, and envsync said what happened, in its place.
      const seen = outputs.map(([, text]) => text).join('\n');
      expect(api.requests.some((r) => r.authorization === `Bearer ${token}`)).toBe(true);
      expect(seen).toContain('[REDACTED]');
      expect(seen).toContain('token was refused (403)');
      expect(seen).toContain('400');
      expect(seen).toContain('500');
      expect(seen).toContain('429');
      expectClean();
    },
  );

  it(
    'envsync run puts it in none of its logs, /status, /metrics, /healthz, /readyz or its state file',
    { timeout: 90_000 },
    async () => {
      const run = startEnvsync(
        [
          'run',
          ...common('trace'),
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
        await waitFor('a pass', () => run.stderr().includes('"msg":"pass '), { timeoutMs: 30_000 });
        for (const endpoint of ['/', '/status', '/metrics', '/healthz', '/readyz']) {
          const response = await request(`${url}${endpoint}`);
          outputs.push([endpoint, await response.body.text()]);
        }
        const status = outputs.find(([where]) => where === '/status')?.[1] ?? '';
        expect(status).toContain('"acme"');
        expect(status).toContain('[REDACTED]');
        // The status page shows the same service text, masked as well.
        expect(outputs.find(([where]) => where === '/')?.[1]).toContain('[REDACTED]');
      } finally {
        run.child.kill('SIGTERM');
        await run.exited;
      }
      outputs.push(['run stdout', run.stdout()], ['run stderr', run.stderr()]);
      outputs.push(...(await writtenFiles(tmp.dir)));
      expectClean();
    },
  );
});

describe('a token that is not a Bearer token', () => {
  it(
    'is refused before any request, with a usage error that does not show it',
    { timeout: 60_000 },
    async () => {
      const tmp = await tempDir();
      const api = await echoingService('unused-token');
      try {
        await tmp.write('manifests/acme.yaml', MANIFESTS['acme.yaml'] as string);
        const bad = 'SeCrEt"with\\quotes-and,commas';
        await tmp.write('token', `${bad}\n`);
        for (const [name, env, args] of [
          ['ENVSYNC_TOKEN', { ENVSYNC_TOKEN: bad }, []],
          ['--token-file', {}, ['--token-file', 'token']],
        ] as const) {
          const result = await envsyncInProcess(
            [
              'plan',
              '--manifests',
              'manifests',
              '--api-url',
              api.url,
              '--log-level',
              'trace',
              ...args,
            ],
            { cwd: tmp.dir, env },
          );
          expect(result.code, name).toBe(1);
          expect(result.stderr).toContain('RFC 6750');
          expect(result.stderr).not.toContain('SeCrEt');
          expect(result.stdout).not.toContain('SeCrEt');
        }
        expect(api.requests).toEqual([]);
      } finally {
        await api.close();
        await tmp.cleanup();
      }
    },
  );

  it(
    'with the Bearer prefix copied along, says to drop the prefix, sends nothing and does not show it',
    { timeout: 60_000 },
    async () => {
      const tmp = await tempDir();
      const api = await echoingService('unused-token');
      try {
        await tmp.write('manifests/acme.yaml', MANIFESTS['acme.yaml'] as string);
        const token = 'Xq7-prefixed-token-5d1c';
        await tmp.write('token', `bearer  ${token}\n`);
        const args = ['plan', '--manifests', 'manifests', '--api-url', api.url];
        const results = [
          [
            'ENVSYNC_TOKEN',
            await envsyncInProcess(args, {
              cwd: tmp.dir,
              env: { ENVSYNC_TOKEN: `Bearer ${token}` },
            }),
          ],
          [
            'token file token',
            await envsyncInProcess([...args, '--token-file', 'token'], { cwd: tmp.dir }),
          ],
        ] as const;
        for (const [source, result] of results) {
          expect(result, source).toMatchObject({
            code: 1,
            stdout: '',
            stderr: `envsync plan: ${source}: the token starts with "Bearer ": drop the Bearer prefix, envsync adds it (the token is not shown)\n`,
          });
        }
        expect(api.requests).toEqual([]);
      } finally {
        await api.close();
        await tmp.cleanup();
      }
    },
  );

  it(
    'is refused when a rotated token file turns bad: the daemon sends nothing with it and never prints it',
    { timeout: 90_000 },
    async () => {
      const tmp = await tempDir();
      const api = await echoingService('unused-token');
      await tmp.write('manifests/acme.yaml', MANIFESTS['acme.yaml'] as string);
      await tmp.write('token', 'good-token-1234567890\n');
      const run = startEnvsync(
        [
          'run',
          '--manifests',
          'manifests',
          '--state',
          'state.json',
          '--api-url',
          api.url,
          '--token-file',
          'token',
          '--listen',
          '127.0.0.1:0',
          '--interval',
          '0',
          '--log-level',
          'debug',
        ],
        { cwd: tmp.dir },
      );
      const bad = 'rotated"bad\\token-0987654321';
      try {
        const url = await run.listenUrl();
        await waitFor('a pass', () => run.stderr().includes('"msg":"pass '), { timeoutMs: 30_000 });
        const before = api.requests.length;
        await tmp.write('token', `${bad}\n`);
        await request(`${url}/reconcile`, { method: 'POST' });
        await waitFor('the refused token', () => run.stderr().includes('RFC 6750'), {
          timeoutMs: 30_000,
        });
        expect(
          api.requests.slice(before).filter((r) => r.authorization?.includes('rotated')),
        ).toEqual([]);
        const status = await (await request(`${url}/status`)).body.text();
        expect(status).not.toContain('rotated');
      } finally {
        run.child.kill('SIGTERM');
        await run.exited;
        await api.close();
        await tmp.cleanup();
      }
      expect(run.stderr()).not.toContain('rotated');
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
        await tmp.write('manifests/acme.yaml', MANIFESTS['acme.yaml'] as string);
        const urls = [
          'http://admin:PaSsWoRd1@127.0.0.1:1',
          'https://admin:PaSsWoRd1@api.example.com/',
          'http://admin:Pa ss Wo rd1@',
          'http://admin:PaSsWoRd1/x@127.0.0.1',
          '//admin:PaSsWoRd1@api.example.com',
        ];
        const cases: { where: string; argv: string[]; env: Record<string, string> }[] = [];
        // Every address through plan; every command with a parseable and an unparseable one.
        const everyCommand = new Set([urls[0], urls[2]]);
        for (const url of urls) {
          for (const command of everyCommand.has(url)
            ? ['plan', 'sync', 'export', 'run']
            : ['plan']) {
            const rest =
              command === 'export'
                ? ['--org', 'acme']
                : command === 'run'
                  ? ['--manifests', 'manifests', '--listen', '127.0.0.1:0']
                  : ['--manifests', 'manifests'];
            const env = { ENVSYNC_TOKEN: 'a-token-1234' };
            cases.push({
              where: `${command} ${url}`,
              argv: [command, ...rest, '--api-url', url],
              env,
            });
            // The same address from the environment.
            if (command === 'plan')
              cases.push({
                where: `${command} ENVSYNC_API_URL=${url}`,
                argv: [command, ...rest],
                env: { ...env, ENVSYNC_API_URL: url },
              });
          }
        }
        // Two at a time: the machine is shared. `run` in a child process (were the address taken,
        // it would start and wait for signals), the one-shot commands in this process.
        for (let i = 0; i < cases.length; i += 2) {
          await Promise.all(
            cases.slice(i, i + 2).map(async ({ where, argv, env }) => {
              const cli = argv[0] === 'run' ? envsync : envsyncInProcess;
              const result = await cli([...argv, '--log-level', 'trace'], {
                cwd: tmp.dir,
                env,
                timeoutMs: 60_000,
              });
              expect(result.code, where).toBe(1);
              expect(result.stderr, where).toContain('--api-url');
              for (const output of [result.stdout, result.stderr]) {
                expect(output, where).not.toContain('PaSsWoRd1');
                expect(output, where).not.toContain('Pa ss');
                expect(output, where).not.toContain('admin');
              }
            }),
          );
        }
      } finally {
        await tmp.cleanup();
      }
    },
  );
});
