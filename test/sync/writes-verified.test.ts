/**
 * Every operation is verified: the emulator's `ignoredWrites` fault answers a write as if done and
 * does nothing, and envsync must say `not converged`.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { IgnorableWrite } from '../../src/emulator/index.ts';
import { passNow, useDaemonWorld } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from '../notify/receiver.ts';
import { json, putsAndGets, syncWorld } from '../helpers/sync-world.ts';

const world = syncWorld();
const { tmp, run } = world;

const env = (name: string, extra = '') =>
  `  - name: ${name}\n    type: K8S\n    description: ${name}\n${extra}`;

function manifest(envs: readonly string[], head = ''): string {
  return `org: acme\nprune: true\n${head}environments:\n${envs.join('')}`;
}

/** Syncs `before`, then turns on the fault for `write` and syncs `after`: its report and writes. */
async function syncIgnored(write: IgnorableWrite, before: string, after: string) {
  const api = await world.emulator({ profile: 'kosli', orgs: ['acme'] });
  await tmp().write('manifests/acme.yaml', before);
  const first = await run(api.url, ['sync']);
  expect(first.code, first.stdout + first.stderr).toBe(0);
  await tmp().write('manifests/acme.yaml', after);
  await api.setFaults({ ignoredWrites: [write] });
  const from = (await putsAndGets(api)).paths.length;
  const sync = await run(api.url, ['sync'], ['-o', 'json']);
  return { sync, report: json(sync.stdout), writes: (await putsAndGets(api, from)).writes };
}

describe('an operation the service answers but does not carry out', () => {
  it.each([
    [
      'archive',
      [env('web'), env('old')],
      [env('web')],
      {
        archives: [
          { name: 'old', result: 'not-converged', error: expect.stringContaining('still has') },
        ],
      },
      'PUT /api/v2/environments/acme/old/archive',
    ],
    [
      'rename',
      [env('web')],
      ['  - name: web-2\n    type: K8S\n    description: web\n    renamed_from: web\n'],
      {
        changes: [
          { name: 'web-2', result: 'not-converged', error: expect.stringContaining('rename') },
        ],
      },
      'PUT /api/v2/environments/acme/web/rename',
    ],
    [
      'policies',
      [env('web')],
      [env('web', '    policies: [pci]\n')],
      { changes: [{ name: 'web', result: 'not-converged' }] },
      'POST /api/v2/environments/acme/web/policies',
    ],
    [
      'tags',
      [env('web')],
      [env('web', '    tags: {team: web}\n')],
      { changes: [{ name: 'web', result: 'not-converged' }] },
      'PATCH /api/v2/tags/acme/environment/web',
    ],
  ] as const)('%s: not converged, exit 1, sent once', async (write, before, after, org, sent) => {
    const { sync, report, writes } = await syncIgnored(write, manifest(before), manifest(after));
    expect(sync.code, sync.stdout + sync.stderr).toBe(1);
    expect(report.orgs[0]).toMatchObject({ status: 'failed', ...org });
    expect(report.summary['notConverged']).toBe(1);
    expect(writes).toEqual([sent]);
  });

  it('a policy document upload is not converged, exit 1, sent once; the text report says so', async () => {
    const head = (file: string) => `policies:\n  - name: req\n    file: ${file}\n`;
    const api = await world.emulator({ profile: 'kosli', orgs: ['acme'] });
    await tmp().write('manifests/policies/req.yaml', 'rules: [one]\n');
    await tmp().write('manifests/policies/req2.yaml', 'rules: [two]\n');
    await tmp().write('manifests/acme.yaml', manifest([env('web')], head('policies/req.yaml')));
    expect((await run(api.url, ['sync'])).code).toBe(0);
    await tmp().write('manifests/acme.yaml', manifest([env('web')], head('policies/req2.yaml')));
    await api.setFaults({ ignoredWrites: ['policy-documents'] });
    const from = (await putsAndGets(api)).paths.length;
    const sync = await run(api.url, ['sync'], ['-o', 'text']);
    expect(sync.code, sync.stdout + sync.stderr).toBe(1);
    expect(sync.stdout).toMatch(/policy document req .*\[NOT CONVERGED\]/);
    expect(sync.stdout).toContain('its latest version does not hold the text sent');
    expect((await putsAndGets(api, from)).writes).toEqual(['PUT /api/v2/policies/acme']);
  });

  it('a policy document create that does not take holds back the environments attaching it', async () => {
    const api = await world.emulator({ profile: 'kosli', orgs: ['acme'], policyDocuments: {} });
    await tmp().write('manifests/policies/new.yaml', 'rules: [new]\n');
    await tmp().write(
      'manifests/acme.yaml',
      manifest(
        [env('web', '    policies: [brand-new]\n')],
        'policies:\n  - name: brand-new\n    file: policies/new.yaml\n',
      ),
    );
    await api.setFaults({ ignoredWrites: ['policy-documents'] });
    const sync = await run(api.url, ['sync'], ['-o', 'json']);
    expect(sync.code, sync.stdout + sync.stderr).toBe(1);
    const org = json(sync.stdout).orgs[0];
    expect(org?.policyDocuments).toMatchObject([{ name: 'brand-new', result: 'not-converged' }]);
    expect(org?.changes).toMatchObject([
      { name: 'web', result: 'failed', error: expect.stringContaining('did not take') },
    ]);
  });
});

describe('in the daemon', () => {
  const daemonWorld = useDaemonWorld([{ token: 'verify-token-5c2a9e17', orgs: null }]);

  it('an archive that does not take keeps the org from synced, and is announced', async () => {
    const { api } = daemonWorld;
    const receiver = await startReceiver();
    daemonWorld.cleanups.push(() => receiver.close());
    await daemonWorld.tmp.write('manifests/acme.yaml', manifest([env('web'), env('old')]));
    const started = await daemonWorld.start({
      flags: { 'notify-url': [receiver.url] },
      notify: { policy: { baseDelayMs: 20, maxAttempts: 3, timeoutMs: 60_000 } },
    });
    const pass = () => passNow(started);
    const status = async () =>
      (await (await request(`${started.url}/status`)).body.json()) as {
        orgs: Record<string, { status: string; state?: string; pendingArchives?: unknown[] }>;
      };
    await pass();
    await api.setFaults({ ignoredWrites: ['archive'] });
    await daemonWorld.tmp.write('manifests/acme.yaml', manifest([env('web')]));
    await pass();
    const acme = (await status()).orgs['acme'];
    expect(acme?.status).toBe('failed');
    expect(acme?.pendingArchives).toMatchObject([{ name: 'old', result: 'not-converged' }]);
    const page = await (await request(`${started.url}/`)).body.text();
    expect(page).toContain('not converged');
    await waitFor(
      'the not-converged notification',
      () =>
        receiver
          .deliveries()
          .some(
            (e) =>
              e.json['type'] === 'change.not-converged' &&
              JSON.stringify(e.json).includes('"action":"archive"'),
          ),
      { timeoutMs: 60_000 },
    );
  });
});
