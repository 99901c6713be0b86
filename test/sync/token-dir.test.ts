/**
 * A token per org (`--token-dir`), against an emulator that allows each token its own org only
 * (another org's token is refused, 403).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, symlink } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envsyncInProcess } from '../helpers/cli.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { FIXTURE_POLICIES, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { json, putsAndGets } from '../helpers/sync-world.ts';
import { tempDir } from '../helpers/tmp.ts';

const ACME_TOKEN = 'fF9q4Tq9Lm2Zx7Vb';
const BETA_TOKEN = 'Kq3Zr8Wm1Tx5Pb7N';
/** The default token (ENVSYNC_TOKEN or --token-file): the service allows it gamma only. */
const DEFAULT_TOKEN = 'Hw6Yc2Jd9Rn4Qs8G';

const NO_TOKEN = (org: string) =>
  `no token: no file ${org} in token directory tokens, and no default token (--token-file or ENVSYNC_TOKEN)`;

const MANIFESTS: Record<string, string> = {
  'acme.yaml': `org: acme
policies: [{name: acme-rules, file: policies/acme-rules.yaml}]
environments:
  - {name: prod, type: K8S, description: Production, policies: [pci, acme-rules], tags: {team: platform}}
`,
  'policies/acme-rules.yaml': '_schema: https://kosli.com/schemas/policy/environment/v1\n',
  'beta.yaml':
    'org: beta\nenvironments:\n  - {name: web, type: K8S, description: Web, tags: {team: web}}\n',
  'gamma.yaml':
    'org: gamma\nenvironments:\n  - {name: batch, type: logical, description: Batch jobs}\n',
};

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator;

beforeEach(async () => {
  tmp = await tempDir();
  api = await startTestEmulator({
    profile: 'kosli',
    orgs: ['acme', 'beta', 'gamma'],
    tokens: [
      { token: ACME_TOKEN, orgs: ['acme'] },
      { token: BETA_TOKEN, orgs: ['beta'] },
      { token: DEFAULT_TOKEN, orgs: ['gamma'] },
    ],
    policyDocuments: { acme: FIXTURE_POLICIES, beta: FIXTURE_POLICIES, gamma: FIXTURE_POLICIES },
  });
  for (const [file, text] of Object.entries(MANIFESTS)) await tmp.write(`manifests/${file}`, text);
  await tmp.write('tokens/acme', `${ACME_TOKEN}\n`);
  await tmp.write('tokens/beta', BETA_TOKEN);
});
afterEach(async () => {
  await api.close();
  await tmp.cleanup();
});

/** The CLI in this process, in the temp folder, with `env` only (no token unless given). */
function run(command: string[], extra: string[] = [], env: Record<string, string> = {}) {
  const flags = `--manifests manifests --state state.json --api-url ${api.url} --retry-delay 10ms`;
  return envsyncInProcess([...command, ...flags.split(' '), ...extra], { cwd: tmp.dir, env });
}

const withDefault = { ENVSYNC_TOKEN: DEFAULT_TOKEN };

/** The orgs of a JSON report: status and error. */
const outcomes = (stdout: string) =>
  Object.fromEntries(json(stdout).orgs.map((o) => [o.org, [o.status, o.error ?? null]]));

/** The requests the emulator answered with a refusal of the credentials (401 or 403). */
async function refused(): Promise<string[]> {
  return (await api.getRequests(1000))
    .filter((r) => r.status === 401 || r.status === 403)
    .map((r) => `${r.method} ${r.path}`);
}

describe('--token-dir: a token per org', () => {
  it('plan and sync send each org its own token, tags, policies and policy documents included', async () => {
    const plan = await run(['plan'], ['--token-dir', 'tokens', '-o', 'json'], withDefault);
    expect(plan.code, plan.stderr).toBe(0);
    const ok = ['ok', null];
    expect(outcomes(plan.stdout)).toEqual({ acme: ok, beta: ok, gamma: ok });

    const sync = await run(['sync'], ['--token-dir', 'tokens', '-o', 'json'], withDefault);
    expect(sync.code, sync.stderr).toBe(0);
    expect(outcomes(sync.stdout)).toEqual({ acme: ok, beta: ok, gamma: ok });
    const { paths } = await putsAndGets(api);
    for (const sent of [
      'PUT /api/v2/policies/acme',
      'POST /api/v2/environments/acme/prod/policies',
      'PATCH /api/v2/tags/acme/environment/prod',
      'PATCH /api/v2/tags/beta/environment/web',
      'PUT /api/v2/environments/gamma',
    ])
      expect(paths).toContain(sent);
    expect(await refused()).toEqual([]);
    const store = await api.getStore();
    expect(store.orgs['acme']?.find((e) => e.name === 'prod')?.tags).toEqual({ team: 'platform' });
    expect(store.orgs['beta']?.map((e) => e.name)).toEqual(['web']);
    expect(store.orgs['gamma']?.map((e) => e.name)).toEqual(['batch']);
  });

  it("one token for every org, or an org's file holding another org's token: that org is refused, the others go on", async () => {
    // The control of the test above: what it would see were every request sent with one token.
    const one = outcomes((await run(['sync'], ['-o', 'json'], withDefault)).stdout);
    const statuses = (orgs: typeof one) => ['acme', 'beta', 'gamma'].map((o) => orgs[o]?.[0]);
    expect(statuses(one).join()).toBe('failed,failed,ok');
    expect(one['acme']?.[1]).toContain('(403)');
    await tmp.write('tokens/acme', BETA_TOKEN);
    const before = (await refused()).length;
    const sync = await run(['sync'], ['--token-dir', 'tokens', '-o', 'json'], withDefault);
    expect(sync.code).toBe(1);
    const orgs = outcomes(sync.stdout);
    expect(orgs['acme']?.[1]).toContain('(403)');
    expect(statuses(orgs).join()).toBe('failed,ok,ok');
    const refusals = (await refused()).slice(before);
    expect(refusals.every((request) => request.includes('/acme'))).toBe(true);
  });

  it('an org with no file uses the default token: ENVSYNC_TOKEN, or --token-file', async () => {
    await tmp.write('default-token', `${DEFAULT_TOKEN}\n`);
    for (const [how, extra, env] of [
      ['ENVSYNC_TOKEN', [], withDefault],
      ['--token-file', ['--token-file', 'default-token'], {}],
    ] as const) {
      const plan = await run(['plan'], ['--token-dir', 'tokens', '-o', 'json', ...extra], env);
      expect(plan.code, how).toBe(0);
      expect(outcomes(plan.stdout)['gamma'], how).toEqual(['ok', null]);
    }
  });

  it('an org with no file and no default token fails alone, naming the org and the directory; nothing is sent for it', async () => {
    const sync = await run(['sync'], ['--token-dir', 'tokens', '-o', 'json']);
    expect(sync.code).toBe(1);
    expect(outcomes(sync.stdout)).toEqual({
      acme: ['ok', null],
      beta: ['ok', null],
      gamma: ['failed', NO_TOKEN('gamma')],
    });
    const { paths } = await putsAndGets(api);
    expect(paths.some((p) => p.includes('/acme'))).toBe(true);
    expect(paths.filter((p) => p.includes('gamma'))).toEqual([]);
    // The text report says it under the org.
    const plan = await run(['plan'], ['--token-dir', 'tokens']);
    expect(plan.code).toBe(1);
    expect(plan.stdout).toContain(`org gamma (failed)\n  error: ${NO_TOKEN('gamma')}\n`);
  });

  it('export reads each org with its own token; an org with none fails alone', async () => {
    await run(['sync'], ['--token-dir', 'tokens'], withDefault);
    const exportArgs = ['export', '--api-url', api.url, '--token-dir', 'tokens'];
    const orgs = ['--org', 'acme', '--org', 'beta', '--org', 'gamma'];
    const all = await envsyncInProcess([...exportArgs, ...orgs], {
      cwd: tmp.dir,
      env: withDefault,
    });
    expect(all.code, all.stderr).toBe(0);
    for (const org of ['acme', 'beta', 'gamma']) expect(all.stdout).toContain(`org: ${org}\n`);

    const without = await envsyncInProcess([...exportArgs, ...orgs], { cwd: tmp.dir });
    expect(without.code).toBe(1);
    const lines = without.stderr.split('\n');
    expect(lines).toContain(`envsync export: org gamma: ${NO_TOKEN('gamma')}`);
    expect(lines.filter((line) => line.includes('org gamma'))).toHaveLength(1);
    expect(without.stdout).toContain('org: acme\n');
    expect(without.stdout).toContain('org: beta\n');
    expect(without.stdout).not.toContain('org: gamma\n');
    expect(await refused()).toEqual([]);
  });

  it('reads a Kubernetes secret volume as it is: a link per key, its ..data and dated folders ignored', async () => {
    // As the kubelet lays it out: the keys live in a dated folder, `..data` points at it, and each
    // key is a link through `..data`.
    const dir = tmp.path('secret');
    await mkdir(`${dir}/..2026_01_01_00_00_00.000000001`, { recursive: true });
    await tmp.write('secret/..2026_01_01_00_00_00.000000001/acme', ACME_TOKEN);
    await tmp.write('secret/..2026_01_01_00_00_00.000000001/beta', BETA_TOKEN);
    await symlink('..2026_01_01_00_00_00.000000001', `${dir}/..data`);
    await symlink('..data/acme', `${dir}/acme`);
    await symlink('..data/beta', `${dir}/beta`);
    // A dotfile named like nothing an org may be called: never read as gamma's token.
    await tmp.write('secret/.gamma', DEFAULT_TOKEN);
    const sync = await run(['sync'], ['--token-dir', 'secret', '-o', 'json']);
    expect(sync.code).toBe(1);
    expect(outcomes(sync.stdout)).toEqual({
      acme: ['ok', null],
      beta: ['ok', null],
      gamma: [
        'failed',
        'no token: no file gamma in token directory secret, and no default token (--token-file or ENVSYNC_TOKEN)',
      ],
    });
  });

  it('a file that is not a usable token fails its org alone, naming the file and never the token', async () => {
    await tmp.write('tokens/beta', `Bearer ${BETA_TOKEN}\n`);
    await tmp.write('tokens/gamma', '  \n');
    const sync = await run(['sync'], ['--token-dir', 'tokens', '-o', 'json'], withDefault);
    expect(sync.code).toBe(1);
    expect(outcomes(sync.stdout)).toEqual({
      acme: ['ok', null],
      beta: [
        'failed',
        'token file tokens/beta: the token starts with "Bearer ": drop the Bearer prefix, envsync adds it (the token is not shown)',
      ],
      // An empty file is not "no file": the default token does not stand in for it.
      gamma: ['failed', 'token file tokens/gamma is empty'],
    });
    for (const text of [sync.stdout, sync.stderr]) expect(text.includes('Kq3Zr8')).toBe(false);
    const { paths } = await putsAndGets(api);
    expect(paths.filter((p) => p.includes('beta') || p.includes('gamma'))).toEqual([]);
  });

  it('a token directory that cannot be read stops the command before any request', async () => {
    const plan = await run(['plan'], ['--token-dir', 'no-such-dir'], withDefault);
    expect(plan).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'envsync plan: token directory no-such-dir cannot be read (ENOENT)\n',
    });
    expect(await api.getRequests(1000)).toEqual([]);
  });
});

describe('--token-dir with 1,000 keys', () => {
  it('plans every org with its own token', { timeout: 120_000 }, async () => {
    const orgs = Array.from({ length: 1000 }, (_, i) => `org-${i}`);
    const tokens = new Map(orgs.map((org) => [org, randomBytes(32).toString('base64url')]));
    // A service that lists every org empty and records each request's token (the emulator
    // checks tokens too, but looks for each of them in every request it records).
    const many = await startFakeApi((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"env":[]}');
    });
    try {
      for (const [org, token] of tokens) {
        await tmp.write(`many/tokens/${org}`, token);
        const env = '{name: web, type: K8S, description: Web}';
        await tmp.write(`many/manifests/${org}.yaml`, `org: ${org}\nenvironments: [${env}]\n`);
      }
      const plan = await envsyncInProcess(
        ['plan', '--manifests', 'manifests', '--api-url', many.url, '--token-dir', 'tokens'],
        { cwd: tmp.path('many'), env: {} },
      );
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toContain('Plan: 1000 to create');
      const sent = many.requests.map(({ url, authorization }) => {
        const org = /\/api\/v2\/environments\/([^/?]+)/.exec(url)?.[1] ?? '';
        return authorization === `Bearer ${tokens.get(org) ?? '-'}` ? org : `${org}: another token`;
      });
      expect(sent.toSorted()).toEqual(orgs.toSorted());
    } finally {
      await many.close();
    }
  });
});
