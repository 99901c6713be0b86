/**
 * The daemon with a token per org (`--token-dir`), against the emulator (kosli profile) over real
 * HTTP, where each token is allowed its own org only: each org's requests carry its own token,
 * `/status` and the status page say where each came from, an org with no token fails alone, a
 * file rotated between passes is used at the next one, and `envsync run` starts without
 * ENVSYNC_TOKEN.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { DaemonStatus } from '../../src/daemon/status.ts';
import { startEnvsync } from '../helpers/cli.ts';
import { manifestOf, startTestDaemon, useDaemonWorld } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';

const ACME_TOKEN = 'fF9q4Tq9Lm2Zx7Vb';
const BETA_TOKEN = 'Kq3Zr8Wm1Tx5Pb7N';
/** The default token: the service allows it gamma only. */
const DEFAULT_TOKEN = 'Hw6Yc2Jd9Rn4Qs8G';

/** A safety net for a loaded machine, not a timing. */
const WAIT = { timeoutMs: 60_000 };

const world = useDaemonWorld([
  { token: ACME_TOKEN, orgs: ['acme'] },
  { token: BETA_TOKEN, orgs: ['beta'] },
  { token: DEFAULT_TOKEN, orgs: ['gamma'] },
]);

const TAGS = (org: string) => `    tags:\n      team: ${org}\n`;

const NO_TOKEN =
  'no token: no file gamma in token directory tokens, and no default token (--token-file or ENVSYNC_TOKEN)';

async function writeWorld(): Promise<void> {
  for (const org of ['acme', 'beta', 'gamma'])
    await world.tmp.write(
      `manifests/${org}.yaml`,
      manifestOf(org, { web: `${org} web` }, TAGS(org)),
    );
  await world.tmp.write('tokens/acme', `${ACME_TOKEN}\n`);
  await world.tmp.write('tokens/beta', `${BETA_TOKEN}\n`);
}

/** A daemon over the temp folder, its first pass done. */
async function daemon(token?: string) {
  const started = await startTestDaemon({
    apiUrl: world.api.url,
    cwd: world.tmp.dir,
    ...(token === undefined ? {} : { token }),
    tokenDir: 'tokens',
    flags: { manifests: 'manifests', state: 'state.json' },
  });
  world.cleanups.push(() => started.stop());
  await waitFor('a pass', () => started.passes() >= 1, WAIT);
  await started.daemon.idle();
  return started;
}

const status = async (url: string) =>
  (await (await request(`${url}/status`)).body.json()) as DaemonStatus;

/** Each org's status and token source, as `/status` says them. */
const orgsOf = (s: DaemonStatus) =>
  Object.fromEntries(
    Object.entries(s.orgs).map(([org, o]) => [org, [o.status, o.tokenSource] as const]),
  );

describe('envsync run with --token-dir', () => {
  it('sends each org its own token; /status says where each came from', async () => {
    await writeWorld();
    const d = await daemon(DEFAULT_TOKEN);
    expect(orgsOf(await status(d.url))).toEqual({
      acme: ['ok', 'token-dir:acme'],
      beta: ['ok', 'token-dir:beta'],
      gamma: ['ok', 'env ENVSYNC_TOKEN'],
    });
    const store = await world.api.getStore();
    for (const org of ['acme', 'beta', 'gamma'])
      expect(
        store.orgs[org]?.map((e) => [e.name, e.tags]),
        org,
      ).toEqual([['web', { team: org }]]);
    const refused = (await world.api.getRequests(1000)).filter((r) => r.status === 403);
    expect(refused).toEqual([]);
  });

  it('without a default token, only the org with no file fails; files are read again before each pass', async () => {
    await writeWorld();
    // acme's file holds the wrong org's token, and gamma has none.
    await world.tmp.write('tokens/acme', BETA_TOKEN);
    const d = await daemon();
    const first = await status(d.url);
    expect(orgsOf(first)).toEqual({
      acme: ['failed', 'token-dir:acme'],
      beta: ['ok', 'token-dir:beta'],
      gamma: ['failed', null],
    });
    expect(first.orgs['acme']?.lastError?.message).toContain('(403)');
    // Backing off, both: only their new tokens make them due at the next pass.
    expect(first.orgs['acme']?.nextAttemptAt).not.toBeNull();
    // gamma names itself and the directory, and sends nothing.
    expect(first.orgs['gamma']?.lastError?.message).toBe(NO_TOKEN);
    expect(d.logs().map((l) => l['msg'])).toContain(`org gamma failed: ${NO_TOKEN}`);
    const paths = (await world.api.getRequests(1000)).map((r) => r.path);
    expect(paths.filter((p) => p.includes('gamma'))).toEqual([]);

    await world.tmp.write('tokens/acme', `${ACME_TOKEN}\n`);
    await world.tmp.write('tokens/gamma', DEFAULT_TOKEN);
    d.daemon.trigger('SIGHUP');
    await waitFor('a second pass', () => d.passes() >= 2, WAIT);
    await d.daemon.idle();
    expect(orgsOf(await status(d.url))).toEqual({
      acme: ['ok', 'token-dir:acme'],
      beta: ['ok', 'token-dir:beta'],
      gamma: ['ok', 'token-dir:gamma'],
    });
    expect((await world.api.getStore()).orgs['gamma']?.map((e) => e.name)).toEqual(['web']);
  });

  it('starts without ENVSYNC_TOKEN or --token-file, and its /status names the sources', async () => {
    await writeWorld();
    const args = 'run --manifests manifests --state state.json --token-dir tokens --interval 0';
    const run = startEnvsync(
      [...args.split(' '), '--api-url', world.api.url, '--listen', '127.0.0.1:0'],
      { cwd: world.tmp.dir },
    );
    try {
      const url = await run.listenUrl();
      await waitFor('a pass', () => run.stderr().includes('"msg":"pass '), WAIT);
      expect(orgsOf(await status(url))).toEqual({
        acme: ['ok', 'token-dir:acme'],
        beta: ['ok', 'token-dir:beta'],
        gamma: ['failed', null],
      });
    } finally {
      run.child.kill('SIGTERM');
    }
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(run.stderr()).toContain(NO_TOKEN);
  });
});
