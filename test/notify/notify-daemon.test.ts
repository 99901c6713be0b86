import { createHmac } from 'node:crypto';
import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { beforeEach, describe, expect, it } from 'vitest';
import type { NotifyPolicy } from '../../src/notify/delivery.ts';
import { manifestOf, passNow, useDaemonWorld } from '../helpers/daemon.ts';
import { startFakeGitHub } from '../helpers/fake-github.ts';
import { waitFor } from '../helpers/wait.ts';

import { startReceiver, type Behaviour, type Receiver } from './receiver.ts';

const TOKEN = 'notify-test-token-7c41d9e2';
/** A token that serves beta only: acme is refused with it. */
const BETA_ONLY = 'notify-beta-only-token-55aa';
/** A safety net for a loaded machine, not a timing. */
const WAIT = { timeoutMs: 60_000 };

const world = useDaemonWorld([
  { token: TOKEN, orgs: null },
  { token: BETA_ONLY, orgs: ['beta'] },
]);
beforeEach(() => world.tmp.write('token', TOKEN));

const manifest = manifestOf;
const NO_ORG = 'environments:\n  - name: x\n    type: S3\n    description: x\n';
const FAST: Partial<NotifyPolicy> = { baseDelayMs: 20, maxAttempts: 3, timeoutMs: 60_000 };

async function receiver(behaviour?: Behaviour): Promise<Receiver> {
  const started = await startReceiver(behaviour);
  world.cleanups.push(() => started.close());
  return started;
}

/** A daemon reading its token from a file, notifying with short retries (or `policy`). */
const daemon = (
  flags: Record<string, string | string[] | boolean> = {},
  policy: Partial<NotifyPolicy> = {},
  more: Partial<Parameters<typeof world.start>[0]> = {},
) =>
  world.start({
    tokenFile: world.tmp.path('token'),
    flags,
    notify: { policy: { ...FAST, ...policy } },
    ...more,
  });

type Daemon = Awaited<ReturnType<typeof daemon>>;
const pass = passNow;

/** Each delivery as `subject:type` (`-` for no subject). */
const kinds = (r: Receiver) =>
  r.deliveries().map(({ json }) => {
    const { subject = '-', type } = json as { subject?: string; type: string };
    return `${subject}:${type}`;
  });

async function metric(d: Daemon, result: string): Promise<number> {
  const text = await (await request(`${d.url}/metrics`)).body.text();
  const line = new RegExp(`^envsync_notifications_total\\{result="${result}"\\} (\\d+)`, 'm');
  return Number(line.exec(text)?.[1] ?? Number.NaN);
}

describe('notifications from a real daemon to a real receiver on loopback', () => {
  it('each event type is delivered exactly once per transition, in order per org', async () => {
    const r = await receiver();
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'one' }));
    await world.tmp.write('manifests/beta.yaml', manifest('beta', { web: 'Web tier' }));
    await world.tmp.write('manifests/noorg.yaml', NO_ORG);
    // The contract dialect's PUT, which the kosli service ignores "" in: a change that never takes.
    const d = await daemon({
      'notify-url': r.url,
      'public-url': 'https://envsync.example.com/',
      'api-dialect': 'contract',
    });
    const arrived = (n: number, what: string) =>
      waitFor(what, () => r.deliveries().length >= n, WAIT);

    // The first pass: a problem that belongs to no org. A first apply is no drift.
    await arrived(1, 'manifests.error');
    await d.daemon.idle();

    // Someone edits the service by hand: the next pass sets it back.
    const store = await world.api.getStore();
    const prod = store.orgs['acme']?.find((env) => env.name === 'prod');
    if (prod === undefined) throw new Error('acme/prod was not created');
    prod.description = 'edited by hand';
    await world.api.putStore(store);
    await pass(d);
    await arrived(2, 'drift.healed');
    // A pass with nothing new says nothing.
    await pass(d);

    // beta's manifests break, then name a value the service does not take, then are fixed.
    await writeFile(
      world.tmp.path('manifests/beta.yaml'),
      manifest('beta', { web: 'x' }).replace('K8S', 'k8s'),
    );
    await arrived(3, 'org.invalid');
    await writeFile(
      world.tmp.path('manifests/beta.yaml'),
      manifest('beta', { web: '' }, '    include_scaling: true\n'),
    );
    await arrived(4, 'change.not-converged');
    await writeFile(world.tmp.path('manifests/beta.yaml'), manifest('beta', { web: 'Web tier' }));
    await arrived(5, 'org.recovered (beta)');

    // acme's token is refused: one org.failed, however many passes fail the same way.
    await writeFile(world.tmp.path('token'), BETA_ONLY);
    await pass(d);
    await arrived(6, 'org.failed');
    await pass(d);
    await writeFile(world.tmp.path('token'), TOKEN);
    await pass(d);
    await arrived(7, 'org.recovered (acme)');
    await pass(d);

    expect(kinds(r)).toEqual([
      '-:manifests.error',
      'acme:drift.healed',
      'beta:org.invalid',
      'beta:change.not-converged',
      'beta:org.recovered',
      'acme:org.failed',
      'acme:org.recovered',
    ]);
    const [stray, drift, invalid, notConverged, , failed] = r.deliveries().map((e) => e.json);
    expect(stray).toMatchObject({
      specversion: '1.0',
      type: 'manifests.error',
      source: 'https://envsync.example.com',
      data: {
        org: null,
        revision: null,
        link: 'https://envsync.example.com/',
        problems: [expect.objectContaining({ file: 'manifests/noorg.yaml' })],
      },
    });
    expect(typeof stray?.['id']).toBe('string');
    expect(Date.parse(String(stray?.['time']))).not.toBeNaN();
    expect(drift).toMatchObject({
      subject: 'acme',
      data: {
        environments: [
          {
            name: 'prod',
            action: 'update',
            fields: { description: { from: 'edited by hand', to: 'one' } },
          },
        ],
      },
    });
    expect(invalid).toMatchObject({
      data: { problems: [expect.objectContaining({ file: 'manifests/beta.yaml', line: 4 })] },
    });
    expect(JSON.stringify(notConverged)).toContain('it keeps');
    expect(failed).toMatchObject({ data: { previous: 'ok' } });

    // Every delivery came once, with the CloudEvents content type.
    await d.stop();
    expect(r.all).toHaveLength(7);
    for (const got of r.all) {
      expect(got.headers['content-type']).toBe('application/cloudevents+json; charset=utf-8');
      expect(got.headers['x-envsync-signature']).toBeUndefined();
    }
  });

  it('signs with --notify-secret-file (HMAC-SHA256 of the body), per URL format, with the revision', async () => {
    const secret = 'notify-signing-secret-0d9c3a';
    await world.tmp.write('notify-secret', `${secret}\n`);
    // A git-sync layout: the manifests are a link to the revision's worktree.
    await mkdir(world.tmp.path('repo/.worktrees/3f2a9c1'), { recursive: true });
    await world.tmp.write(
      'repo/.worktrees/3f2a9c1/acme.yaml',
      manifest('acme', { prod: 'one' }).replace('K8S', 'k8s'),
    );
    await symlink('.worktrees/3f2a9c1', world.tmp.path('repo/manifests'));
    const cloud = await receiver();
    const slack = await receiver(() => ({ status: 200 }));
    const d = await daemon({
      'notify-url': [cloud.url, `slack:${slack.url}/hooks/T01/B02`],
      'notify-secret-file': 'notify-secret',
      manifests: 'repo/manifests',
    });
    await waitFor('both receivers', () => cloud.all.length >= 1 && slack.all.length >= 1, WAIT);
    for (const got of [cloud.all[0], slack.all[0]]) {
      const expected = createHmac('sha256', secret).update(got?.body ?? '');
      expect(got?.headers['x-envsync-signature']).toBe(`sha256=${expected.digest('hex')}`);
    }
    expect(cloud.all[0]?.json).toMatchObject({
      type: 'org.invalid',
      subject: 'acme',
      data: { revision: '3f2a9c1' },
    });
    // The same event to both: one id.
    expect(slack.all[0]?.headers['x-envsync-delivery']).toBe(cloud.all[0]?.json['id']);
    expect(slack.all[0]?.headers['content-type']).toBe('application/json; charset=utf-8');
    const message = slack.all[0]?.json as { text: string; blocks: { type: string }[] };
    expect(message.text).toMatch(/^org.invalid: org acme /);
    expect(message.blocks.map((b) => b.type)).toEqual(['section', 'section', 'context']);
    expect(JSON.stringify(message.blocks)).toMatch(/manifests\/acme.yaml:4:11.*3f2a9c1/);
    // /status names the receivers by scheme and host only.
    const status = d.daemon.status();
    expect(status.notifications?.targets.map((t) => [t.url, t.format])).toEqual([
      [`${cloud.url}/`, 'cloudevents'],
      [`${slack.url}/…`, 'slack'],
    ]);
  });

  it('sets one commit status per org, revision and state on the commit git-sync names (github://)', async () => {
    const ghToken = 'ghs-commit-status-token-3e9d1f';
    const gh = await startFakeGitHub({ token: ghToken });
    world.cleanups.push(() => gh.close());
    gh.failNext.push(503); // tried again, as every notification
    await world.tmp.write('gh-token', ghToken);
    const sha = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
    const beta = manifest('beta', { web: 'x' }).replace('K8S', 'k8s');
    await world.tmp.write(`repo/.worktrees/${sha}/acme.yaml`, manifest('acme', { prod: 'one' }));
    await world.tmp.write(`repo/.worktrees/${sha}/beta.yaml`, beta);
    await symlink(`.worktrees/${sha}`, world.tmp.path('repo/manifests'));
    const github = { 'notify-url': 'github://acme-co/infra', 'github-token-file': 'gh-token' };
    const flags = { ...github, 'github-api-url': gh.url, manifests: 'repo/manifests' };
    const states = (from: number) =>
      gh.statuses.slice(from).map((s) => `${s['context']} ${s['state']}`);
    // A closed window holds acme's create (pending); beta's manifests are invalid (failure).
    const held = await daemon({ ...flags, 'sync-window': ['deny * 00:00 24h'] });
    await waitFor('two statuses', () => gh.statuses.length >= 2, WAIT);
    await pass(held); // the same states: nothing more
    await held.stop();
    expect(states(0)).toEqual(['envsync/acme pending', 'envsync/beta failure']);
    const said = Object.fromEntries(gh.statuses.map((s) => [s['state'], s['description']]));
    expect(said['pending']).toMatch(/^1 change \(prod\) not sent: waiting for a sync window/);
    expect(said['failure']).toMatch(/^invalid manifests: \S*beta\.yaml:\d+:\d+ /);
    const open = await daemon(flags);
    await waitFor('two more', () => gh.statuses.length >= 4, WAIT);
    await pass(open);
    await open.stop();
    expect(states(2)).toEqual(['envsync/acme success', 'envsync/beta failure']);
    expect(gh.statuses.every((s) => s['sha'] === sha && s['repo'] === 'acme-co/infra')).toBe(true);
    // A link into a directory that is not git-sync's names no commit: no status.
    await rename(world.tmp.path('repo/.worktrees'), world.tmp.path('repo/copies'));
    await symlink(`repo/copies/${sha}`, world.tmp.path('link'));
    const plain = await daemon({ ...flags, manifests: 'link' });
    await pass(plain);
    await plain.stop();
    expect(gh.statuses).toHaveLength(4);
    expect(JSON.stringify([held.logs(), open.logs(), plain.logs()])).not.toContain(ghToken);
  });

  it('a notify secret file that cannot be read stops the start, with what to do', async () => {
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: 'one' }));
    const flags = { 'notify-url': ['http://127.0.0.1:9/'], 'notify-secret-file': 'missing-secret' };
    await expect(daemon(flags)).rejects.toThrow(
      /--notify-secret-file \S*missing-secret cannot be read \(ENOENT\); pass a readable file/,
    );
  });

  it('no secret ever appears in a payload, /status or the log: token, webhook secret, notify secret, URL credentials', async () => {
    const webhookSecret = 'webhook-shared-secret-a1b2c3d4';
    const notifySecret = 'notify-secret-e5f6a7b8c9';
    const urlCredential = 'XyZ0123456789abcdefLongCredential';
    await world.tmp.write('notify-secret', notifySecret);
    const r = await receiver();
    const url = `${r.url}/services/T0AAA/B0BBB/${urlCredential}`;
    // Every secret in a text the events quote: the service's description, which it keeps when
    // sent an empty one by the contract dialect's PUT, and a manifest's type.
    const leaky = `token ${TOKEN} hook ${webhookSecret} notify ${notifySecret} url ${urlCredential}`;
    await world.api.putStore({
      orgs: { acme: [{ name: 'prod', type: 'K8S', description: leaky }] },
    });
    await world.tmp.write('manifests/acme.yaml', manifest('acme', { prod: '' }));
    await world.tmp.write(
      'manifests/beta.yaml',
      manifest('beta', { web: 'x' }).replace('K8S', JSON.stringify(leaky)),
    );
    const d = await daemon(
      {
        'notify-url': `slack:${url}`,
        'notify-secret-file': 'notify-secret',
        'api-dialect': 'contract',
      },
      {},
      { webhookSecret },
    );
    // acme: the service keeps its text (change.not-converged quotes both);
    // beta: the text is an invalid type (org.invalid quotes it).
    await waitFor('two events', () => r.all.length >= 2, WAIT);
    const payloads = r.all.map((got) => got.body).join('\n');
    const types = r.all.map((got) => String(got.json['text']).split(':')[0] ?? '');
    const sorted = types.toSorted((a, b) => a.localeCompare(b));
    expect(sorted).toEqual(['change.not-converged', 'org.invalid']);
    expect(payloads).toContain('[REDACTED]');
    for (const secret of [TOKEN, webhookSecret, notifySecret, urlCredential]) {
      expect(payloads).not.toContain(secret);
    }
    // The URL's path is never shown in /status nor in what the notifier logs (and `envsync
    // run` masks every secret in both besides).
    const shown = [
      JSON.stringify(d.daemon.status().notifications),
      JSON.stringify(d.logs().filter((l) => JSON.stringify(l).includes('127.0.0.1'))),
    ].join('\n');
    for (const secret of [urlCredential, '/services/T0AAA']) expect(shown).not.toContain(secret);
    expect(shown).toContain(`${r.url}/…`);
  });

  it('a receiver that is down never holds a pass: failures are counted, and logged once', async () => {
    const down = await receiver(() => 'drop');
    await world.tmp.write(
      'manifests/acme.yaml',
      manifest('acme', { prod: 'one' }).replace('K8S', 'k8s'),
    );
    const d = await daemon({ 'notify-url': down.url });
    await d.daemon.idle();
    // Three passes, three new problems: three events, none delivered.
    for (const type of ['k9s', 'k10s']) {
      await writeFile(
        world.tmp.path('manifests/acme.yaml'),
        manifest('acme', { prod: 'one' }).replace('K8S', type),
      );
      await waitFor('the pass', () => JSON.stringify(d.daemon.status().orgs).includes(type), WAIT);
    }
    await waitFor('three failed', async () => (await metric(d, 'failed')) === 3, WAIT);
    expect(down.all).toHaveLength(9); // three attempts each
    expect(await metric(d, 'delivered')).toBe(0);
    const failing = d.logs().filter((l) => String(l['msg']).includes('notifications to'));
    expect(failing).toHaveLength(1);
    expect(failing[0]).toMatchObject({ level: 40, notifyUrl: `${down.url}/` });
    expect(d.daemon.status().notifications?.targets[0]?.failing).toBeTruthy();
    expect(d.daemon.status().lastPass?.result).toBe('failed');
  });

  it('a receiver that answers 500 then 200 gets the event once more, after the Retry-After it asked for, and the recovery is logged once', async () => {
    const r = await receiver((n) =>
      n === 0 ? { status: 500, headers: { 'retry-after': '1' } } : { status: 204 },
    );
    await world.tmp.write(
      'manifests/acme.yaml',
      manifest('acme', { prod: 'one' }).replace('K8S', 'k8s'),
    );
    // The backoff alone would wait a minute: delivery within the wait below means Retry-After.
    const d = await daemon({ 'notify-url': r.url }, { baseDelayMs: 60_000 });
    await waitFor('delivered', async () => (await metric(d, 'delivered')) === 1, WAIT);
    expect(r.all).toHaveLength(2);
    expect(r.all[1]?.body).toBe(r.all[0]?.body);
    expect(r.deliveries()).toHaveLength(1);
    expect(await metric(d, 'failed')).toBe(0);
    const lines = d.logs().filter((l) => String(l['msg']).includes('notifications to'));
    expect(lines.map((l) => l['level'])).toEqual([40, 30]);
    expect(String(lines[1]?.['msg'])).toContain('delivered again');
  });

  it('a slow receiver (holding the request past the pass) never delays a pass; stop is prompt', async () => {
    const slow = await receiver(() => 'hang');
    await world.tmp.write(
      'manifests/acme.yaml',
      manifest('acme', { prod: 'one' }).replace('K8S', 'k8s'),
    );
    const d = await daemon({ 'notify-url': slow.url }, { timeoutMs: 600_000, drainMs: 200 });
    await waitFor('the receiver holds the request', () => slow.hanging() === 1, WAIT);
    // Passes go on, and /status shows them, while the receiver still holds the request.
    const before = d.passes();
    await pass(d);
    await pass(d);
    expect(d.passes()).toBe(before + 2);
    expect([d.daemon.status().lastPass?.result, slow.hanging()]).toEqual(['failed', 1]);
    // The stop waits a bounded drain time, then abandons what is left.
    const stopped = await Promise.race([
      d.stop().then(() => 'stopped'),
      new Promise((resolve) => setTimeout(resolve, 10_000, 'still waiting')),
    ]);
    expect([stopped, d.daemon.status().notifications?.abandoned]).toEqual(['stopped', 1]);
  });
});
