import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { DaemonStatus } from '../../src/daemon/status.ts';
import { manifestOf, useDaemonWorld } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'daemon-token-5e8f0a';

const world = useDaemonWorld([{ token: TOKEN, orgs: null }]);

const manifest = manifestOf;
const daemon = (flags: Record<string, string> = {}) => world.start({ flags });
const description = (org: string, name: string) => world.description(org, name);
/** Whether the service describes `org`'s environment `name` as `text`. */
const described = (org: string, name: string, text: string) => async () =>
  (await description(org, name)) === text;

async function get(url: string) {
  const response = await request(url);
  const text = await response.body.text();
  return { status: response.statusCode, text, json: () => JSON.parse(text) as DaemonStatus };
}

describe('envsync run (in-process daemon, real files, real chokidar, emulator over HTTP)', () => {
  it('applies at start, then applies a file edit, an atomic save and a new folder', async () => {
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'one' }));
    const d = await daemon();
    await waitFor('first pass', described('acme', 'prod', 'one'));
    await writeFile(world.tmp.path('manifests/acme.yaml'), manifest('acme', { prod: 'two' }));
    // How fast an edit reaches the service is the benchmark's to measure (watch p95).
    await waitFor('edit applied', described('acme', 'prod', 'two'));
    // Editors' atomic saves: write a temp file, rename it over the manifest.
    await writeFile(
      world.tmp.path('manifests/.acme.yaml.tmp'),
      manifest('acme', { prod: 'three' }),
    );
    await rename(world.tmp.path('manifests/.acme.yaml.tmp'), world.tmp.path('manifests/acme.yaml'));
    await waitFor('atomic save applied', described('acme', 'prod', 'three'));
    // New folders and new files in them.
    await world.tmp.write('manifests/teams/beta/beta.yaml', manifest('beta', { web: 'w' }));
    await waitFor('new folder applied', described('beta', 'web', 'w'));
    // A file event looks only at the org whose manifests changed.
    await d.daemon.idle();
    expect(d.daemon.status().lastPass?.trigger[0]).toMatch(/^file /);
  });

  it('a burst of 40 writes gives at most a few passes', async () => {
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'start' }));
    const d = await daemon();
    await waitFor('first pass', described('acme', 'prod', 'start'));
    await d.daemon.idle();
    const before = d.passes();
    for (let i = 0; i < 40; i++)
      await writeFile(world.tmp.path('manifests/acme.yaml'), manifest('acme', { prod: `v${i}` }));
    await waitFor('last write applied', described('acme', 'prod', 'v39'));
    await d.daemon.idle();
    const passes = d.passes() - before;
    expect(passes).toBeGreaterThanOrEqual(1);
    expect(passes).toBeLessThanOrEqual(3);
  });

  it('sees five git-sync swaps in a row, with the old worktree deleted each time', async () => {
    const root = world.tmp.path('git');
    const publish = async (hash: string, text: string) => {
      await mkdir(path.join(root, '.worktrees', hash, 'manifests'), { recursive: true });
      await writeFile(
        path.join(root, '.worktrees', hash, 'manifests', 'acme.yaml'),
        manifest('acme', { prod: text }),
      );
      await symlink(path.join('.worktrees', hash), path.join(root, 'repo.tmp'));
      await rename(path.join(root, 'repo.tmp'), path.join(root, 'repo'));
    };
    await publish('aaa000', 'rev 0');
    const d = await daemon({ manifests: 'git/repo/manifests' });
    await waitFor('rev 0', described('acme', 'prod', 'rev 0'));
    let previous = 'aaa000';
    for (let i = 1; i <= 5; i++) {
      const hash = `c0ffee${i}`;
      await publish(hash, `rev ${i}`);
      await rm(path.join(root, '.worktrees', previous), { recursive: true, force: true });
      previous = hash;
      await waitFor(`rev ${i}`, described('acme', 'prod', `rev ${i}`));
      await waitFor(`revision ${hash} reported`, () => d.daemon.status().revision === hash);
    }
    const metrics = await get(`${d.url}/metrics`);
    expect(metrics.text).toContain('envsync_revision_info{revision="c0ffee5"} 1');
    await d.daemon.idle();
    expect(
      d.logs().some((l) => l['revision'] === 'c0ffee5' && String(l['msg']).startsWith('pass')),
    ).toBe(true);
  });

  it('heals drift made by hand on the interval', async () => {
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'declared' }));
    await daemon({ interval: '400ms' });
    await waitFor('first pass', described('acme', 'prod', 'declared'));
    const store = await world.api.getStore();
    const env = store.orgs['acme']?.[0];
    if (env === undefined) throw new Error('expected the environment');
    await world.api.putStore({ ...store, orgs: { acme: [{ ...env, description: 'by hand' }] } });
    await waitFor('drift healed', described('acme', 'prod', 'declared'));
    expect(await description('acme', 'prod')).toBe('declared');
  });

  it('holds an org whose manifests turn invalid at its last state, says why, and goes on with the others', async () => {
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'good' }));
    await world.tmp.write('manifests/beta.yaml', manifest('beta', { web: 'one' }));
    const d = await daemon();
    await waitFor('first pass', described('beta', 'web', 'one'));
    await writeFile(
      world.tmp.path('manifests/acme.yaml'),
      manifest('acme', { prod: 'broken' }).replace('type: K8S', 'type: k8s'),
    );
    await writeFile(world.tmp.path('manifests/beta.yaml'), manifest('beta', { web: 'two' }));
    await waitFor('beta applied', described('beta', 'web', 'two'));
    await d.daemon.idle();
    expect(await description('acme', 'prod')).toBe('good');
    const status = (await get(`${d.url}/status`)).json();
    expect(status.orgs['acme']?.status).toBe('invalid');
    expect(status.orgs['acme']?.lastError?.errors).toEqual([
      {
        file: 'manifests/acme.yaml',
        line: 4,
        column: 11,
        path: 'environments[0].type',
        message:
          '"k8s" is not one of K8S, ECS, S3, lambda, server, docker, azure-apps, cloud-run, logical (did you mean "K8S"?)',
      },
    ]);
    expect(status.orgs['acme']?.lastSuccess).not.toBeNull();
    const metrics = (await get(`${d.url}/metrics`)).text;
    expect(metrics).toContain('envsync_org_manifest_errors{org="acme"} 1');
    // Fixed: applied, and the error is gone.
    await writeFile(world.tmp.path('manifests/acme.yaml'), manifest('acme', { prod: 'fixed' }));
    await waitFor('fixed applied', described('acme', 'prod', 'fixed'));
    await d.daemon.idle();
    expect(d.daemon.status().orgs['acme']).toMatchObject({ status: 'ok', lastError: null });
  });

  it('backs off a failing org instead of retrying it on every event; other orgs are not slowed', async () => {
    await world.restartEmulator([{ token: TOKEN, orgs: ['beta'] }]);
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'p' }));
    await world.tmp.write('manifests/beta.yaml', manifest('beta', { web: 'w0' }));
    const d = await daemon();
    await waitFor('acme failed', () => d.daemon.status().orgs['acme']?.status === 'failed');
    for (let i = 1; i <= 5; i++) {
      await writeFile(world.tmp.path('manifests/beta.yaml'), manifest('beta', { web: `w${i}` }));
      await waitFor(`beta w${i}`, described('beta', 'web', `w${i}`));
    }
    const acmeRequests = (await world.api.getRequests(1000)).filter((r) =>
      r.path.includes('/acme'),
    );
    expect(acmeRequests).toHaveLength(1);
    expect(d.daemon.status().orgs['acme']).toMatchObject({ failures: 1 });
    expect(d.daemon.status().orgs['acme']?.nextAttemptAt).not.toBeNull();
  });

  it('serves /healthz, /readyz, /metrics, /status and POST /reconcile', async () => {
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'p' }));
    const d = await daemon();
    await waitFor('ready', async () => (await get(`${d.url}/readyz`)).status === 200);
    expect((await get(`${d.url}/healthz`)).status).toBe(200);
    const status = (await get(`${d.url}/status`)).json();
    expect(status).toMatchObject({ revision: null, ready: true, errors: [], shard: null });
    expect(status.orgs['acme']).toMatchObject({ status: 'ok', pending: 0, lastError: null });
    expect(status.lastPass).toMatchObject({ result: 'success', trigger: ['start'] });
    const metrics = (await get(`${d.url}/metrics`)).text;
    for (const name of [
      'envsync_passes_total{result="success"}',
      'envsync_pass_duration_seconds_bucket',
      'envsync_org_pending_changes{org="acme"} 0',
      'envsync_org_last_success_timestamp_seconds{org="acme"}',
      'envsync_changes_total{action="create",result="applied"} 1',
      'envsync_http_requests_total{method="PUT",status="201"} 1',
      'envsync_http_throttled_total 0',
      'envsync_revision_info',
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ])
      expect(metrics).toContain(name);
    const passes = d.passes();
    const webhook = await request(`${d.url}/reconcile`, { method: 'POST', body: '{}' });
    await webhook.body.dump();
    expect(webhook.statusCode).toBe(202);
    await waitFor('webhook pass', () => d.passes() > passes);
    expect(d.daemon.status().lastPass?.trigger).toEqual(['webhook']);
    expect((await get(`${d.url}/nope`)).status).toBe(404);
    expect((await get(`${d.url}/reconcile`)).status).toBe(405);
  });

  it('a sharded replica reconciles only its own orgs', async () => {
    const { shardOf } = await import('../../src/core/shard.ts');
    const orgs = ['acme', 'beta', 'gamma', 'delta', 'omega', 'zeta'];
    for (const org of orgs)
      await world.tmp.write(`manifests/${org}.yaml`, manifest(org, { e: org }));
    const d = await daemon({ 'shard-index': '1', 'shard-count': '3' });
    await waitFor('first pass', () => d.daemon.status().passes > 0);
    await d.daemon.idle();
    const mine = orgs.filter((org) => shardOf(org, 3) === 1).sort();
    expect(Object.keys(d.daemon.status().orgs)).toEqual(mine);
    const store = await world.api.getStore();
    expect(
      Object.keys(store.orgs)
        .filter((org) => (store.orgs[org] ?? []).length > 0)
        .sort(),
    ).toEqual(mine);
  });
});

describe('targeted passes', () => {
  it('a file event reconciles only the orgs whose manifests changed; the interval and webhook look at all', async () => {
    for (const org of ['acme', 'beta', 'gamma'])
      await world.tmp.write(`manifests/${org}.yaml`, manifest(org, { e: org }));
    const d = await daemon();
    await waitFor('first pass', described('gamma', 'e', 'gamma'));
    await d.daemon.idle();
    const gets = async () =>
      (await world.api.getRequests(1000)).filter((r) => r.method === 'GET').map((r) => r.path);
    const before = (await gets()).length;
    await writeFile(world.tmp.path('manifests/beta.yaml'), manifest('beta', { e: 'beta v2' }));
    await waitFor('beta applied', described('beta', 'e', 'beta v2'));
    await d.daemon.idle();
    const afterEdit = await gets();
    // One GET to observe beta and one to verify the PUT: acme and gamma are not looked at.
    expect(afterEdit.slice(before)).toEqual([
      '/api/v2/environments/beta',
      '/api/v2/environments/beta',
    ]);
    d.daemon.trigger('webhook');
    await waitFor('webhook pass', () => d.daemon.status().lastPass?.trigger[0] === 'webhook');
    await d.daemon.idle();
    expect((await gets()).slice(afterEdit.length).sort()).toEqual([
      '/api/v2/environments/acme',
      '/api/v2/environments/beta',
      '/api/v2/environments/gamma',
    ]);
  });
});
