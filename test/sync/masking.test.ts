/**
 * The token is masked where text leaves envsync, never in the data it compares, applies and
 * records: a token per org, whose org shares a few characters with it.
 */
import { readFile } from 'node:fs/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { json, putsAndGets, syncWorld } from '../helpers/sync-world.ts';

/** Org acme42's token: it holds the org's name, 6 characters, as random keys may. */
const TOKEN = 'Tq9Lacme42xZ7Vb3Wm1TkP8s';
/** Org beta's token. */
const BETA_TOKEN = 'Kq3Zr8Wm1Tx5Pb7NcY2dHw6Y';
/** 8 characters of beta's token: not a secret, as no run shorter than 12 is. */
const PREFIX = BETA_TOKEN.slice(0, 8);

const world = syncWorld();
const tmp = () => world.tmp();
beforeEach(async () => {
  await tmp().write('tokens/acme42', `${TOKEN}\n`);
  await tmp().write('tokens/beta', `${BETA_TOKEN}\n`);
});

async function emulator(profile: 'spec' | 'kosli', store?: unknown) {
  const api = await world.emulator({
    profile,
    orgs: ['acme42', 'beta'],
    tokens: [
      { token: TOKEN, orgs: ['acme42'] },
      { token: BETA_TOKEN, orgs: ['beta'] },
    ],
  });
  if (store !== undefined) await api.putStore(store);
  return api;
}

/** The CLI in this process, in the temp folder, with the token directory. */
const run = (url: string, args: string[]) =>
  world.cli([...args, '--api-url', url, '--token-dir', 'tokens', '--retry-delay', '10ms']);

const syncArgs = ['--manifests', 'manifests', '--state', 'state.json'];
const manifest = (org: string, description: string, extra = '') =>
  tmp().write(
    `manifests/${org}.yaml`,
    `org: ${org}\nenvironments:\n  - {name: web, type: K8S, description: ${description}${extra}}\n`,
  );

/** Whether `text` holds a run of 12 characters of beta's token. */
const holdsToken = (text: string) =>
  Array.from({ length: BETA_TOKEN.length - 11 }, (_, i) => BETA_TOKEN.slice(i, i + 12)).some(
    (piece) => text.includes(piece),
  );

describe('the token masked where it leaves, never in the data', () => {
  it('an org whose name is 6 characters of its token syncs, shows and converges', async () => {
    const { url } = await emulator('spec');
    await manifest('acme42', 'Web');
    const sync = await run(url, ['sync', ...syncArgs, '-o', 'json']);
    expect(sync.code, sync.stdout).toBe(0);
    expect(json(sync.stdout).orgs.map((o) => [o.org, o.status, o.error ?? null])).toEqual([
      ['acme42', 'ok', null],
    ]);
    const plan = await run(url, ['plan', ...syncArgs, '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(plan.stdout).toContain('org acme42');
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update');
  });

  it('a description holding 8 characters of the token converges, and shows them', async () => {
    const api = await emulator('spec');
    const { url } = api;
    const description = `deploy key ${PREFIX}...`;
    await manifest('beta', description);
    const sync = await run(url, ['sync', ...syncArgs, '-o', 'json']);
    expect(sync.code, sync.stdout).toBe(0);
    expect(sync.stdout).toContain(PREFIX);
    const plan = await run(url, ['plan', ...syncArgs, '--detailed-exitcode']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update');
    const store = await api.getStore();
    expect(store.orgs['beta']?.map((env) => env.description)).toEqual([description]);
  });

  it('export leaves out a value that holds the token, and says which', async () => {
    const { url } = await emulator('kosli', {
      orgs: {
        beta: [
          { name: 'api', type: 'K8S', description: 'API' },
          {
            name: 'web',
            type: 'K8S',
            description: `echoed Bearer ${BETA_TOKEN}`,
            tags: { team: 'w' },
          },
        ],
      },
    });
    const exported = await run(url, ['export', '--org', 'beta', '--out', 'exported']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toContain('environment web: description');
    const text = await readFile(tmp().path('exported/beta.yaml'), 'utf8');
    expect(holdsToken(text)).toBe(false);
    expect(text).not.toContain('[REDACTED]');
    expect(text).toContain('description: API');
    expect(text).toContain('team: w');
  });

  it('the state file records a mark of a change that did not take, holding the token, as not known', async () => {
    // Production keeps include_scaling false (sent by the contract dialect): the change never takes,
    // and what the listing shows after it holds the token (in a tag no manifest declares).
    const api = await emulator('kosli', {
      orgs: {
        beta: [
          { name: 'web', type: 'K8S', description: 'Web', tags: { echo: `Bearer ${BETA_TOKEN}` } },
        ],
      },
    });
    await manifest('beta', 'Web', ', include_scaling: true');
    const puts = async () => (await putsAndGets(api)).puts;
    const contract = [...syncArgs, '--api-dialect', 'contract'];
    const first = await run(api.url, ['sync', ...contract, '-o', 'json']);
    expect(json(first.stdout).orgs[0]?.changes.map((c) => c.result)).toEqual(['not-converged']);
    const state = await readFile(tmp().path('state.json'), 'utf8');
    expect(holdsToken(state)).toBe(false);
    expect(state).not.toContain('[REDACTED]');
    expect(state).not.toContain('not_converged');
    // Not known to fail: the next sync sends it again rather than trust a masked record.
    expect(await puts()).toBe(1);
    await run(api.url, ['sync', ...contract]);
    expect(await puts()).toBe(2);
  });

  it('plan --out saves masked what it only shows, and saves no plan that would send the token', async () => {
    const api = await emulator('kosli', {
      orgs: { beta: [{ name: 'web', type: 'K8S', description: `echoed Bearer ${BETA_TOKEN}` }] },
    });
    const { url } = api;
    // What the service holds is only shown: saved masked, and the reviewed plan applies.
    await manifest('beta', 'clean');
    const planned = await run(url, ['plan', ...syncArgs, '--out', 'plan.json']);
    expect(planned.code, planned.stderr).toBe(0);
    const saved = await readFile(tmp().path('plan.json'), 'utf8');
    expect(holdsToken(saved)).toBe(false);
    expect(saved).toContain('echoed Bearer [REDACTED]');
    const applied = await run(url, ['sync', ...syncArgs, '--plan', 'plan.json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect((await api.getStore()).orgs['beta']?.[0]?.description).toBe('clean');

    // A plan that would send the token (here the manifest's own value) is not saved.
    await manifest('beta', `rotated from ${BETA_TOKEN}`);
    const refused = await run(url, ['plan', ...syncArgs, '--out', 'plan2.json']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('--out plan2.json: the plan was not saved');
    expect(refused.stderr).toContain('org beta, environment web');
    expect(holdsToken(refused.stderr + refused.stdout)).toBe(false);
    await expect(readFile(tmp().path('plan2.json'), 'utf8')).rejects.toThrow(/ENOENT/);
  });
});
