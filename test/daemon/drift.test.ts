/**
 * The daemon names drift as drift, against the emulator over real HTTP in both of its profiles:
 * a value changed on the service behind its back is set back, logged as drift, counted in
 * envsync_drift_healed_total, notified as drift.healed and listed on the status page (escaped); a
 * manifest change applied after it is none of these.
 */
import { writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { DaemonStatus } from '../../src/daemon/status.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import type { TestEmulator } from '../helpers/emulator.ts';
import { syncWorld, TOKEN } from '../helpers/sync-world.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from '../notify/receiver.ts';

const world = syncWorld();
const { tmp } = world;

/** A safety net for a loaded machine, not a timing. */
const WAIT_MS = 60_000;

const manifest = (prod: string) => `org: acme
environments:
  - name: prod
    type: K8S
    description: ${JSON.stringify(prod)}
  - name: web
    type: S3
    description: Web assets
`;

async function get(url: string): Promise<string> {
  const response = await request(url);
  return response.body.text();
}

async function describedAs(api: TestEmulator, name: string): Promise<string | undefined> {
  return (await api.getStore()).orgs['acme']?.find((env) => env.name === name)?.description;
}

async function editByHand(api: TestEmulator, name: string, description: string): Promise<void> {
  const store = await api.getStore();
  const env = store.orgs['acme']?.find((e) => e.name === name);
  if (env === undefined) throw new Error(`acme/${name} is not in the store`);
  env.description = description;
  await api.putStore(store);
}

describe.each(['spec', 'kosli'] as const)('the daemon against the %s profile', (profile) => {
  it('heals drift and says so: log line, metric, notification, status page; a manifest change is not drift', async () => {
    const api = await world.emulator({ profile });
    const receiver = await startReceiver();
    await tmp().write('manifests/acme.yaml', manifest('Production'));
    const d = await startTestDaemon({
      apiUrl: api.url,
      cwd: tmp().dir,
      token: TOKEN,
      flags: { manifests: 'manifests', state: 'state.json', 'notify-url': [receiver.url] },
      notify: { policy: { baseDelayMs: 20, maxAttempts: 3, timeoutMs: 60_000 } },
    });
    try {
      const pass = async () => {
        const before = d.passes();
        d.daemon.trigger('test');
        await waitFor('the pass', () => d.passes() > before, { timeoutMs: WAIT_MS });
        await d.daemon.idle();
      };
      const healedMetric = async () =>
        /^envsync_drift_healed_total\{org="acme"\} (\d+)$/m.exec(
          await get(`${d.url}/metrics`),
        )?.[1];
      const status = async () => JSON.parse(await get(`${d.url}/status`)) as DaemonStatus;
      const lines = (message: string) => d.logs().filter((line) => line['msg'] === message);

      // The first pass creates both: no drift, and the series exists at 0.
      await waitFor('first pass', async () => (await describedAs(api, 'web')) === 'Web assets', {
        timeoutMs: WAIT_MS,
      });
      await d.daemon.idle();
      expect(await healedMetric()).toBe('0');
      expect(lines('create acme/prod')).toMatchObject([{ cause: 'change' }]);

      // Someone edits prod at the service; the next pass sets it back.
      await editByHand(api, 'prod', '<img src=x onerror=alert(1)> by hand');
      await pass();
      expect(await describedAs(api, 'prod')).toBe('Production');
      expect(lines('update acme/prod (drift)')).toMatchObject([
        { org: 'acme', env: 'prod', action: 'update', cause: 'drift', fields: ['description'] },
      ]);
      expect(await healedMetric()).toBe('1');
      expect(d.logs().at(-1)?.['msg']).toMatch(/^pass success: 1 applied \(1 drift healed\), /);
      await waitFor('drift.healed', () => receiver.deliveries().length >= 1, {
        timeoutMs: WAIT_MS,
      });
      expect(receiver.deliveries()[0]?.json).toMatchObject({
        type: 'drift.healed',
        subject: 'acme',
        data: {
          environments: [
            {
              name: 'prod',
              action: 'update',
              fields: {
                description: { from: '<img src=x onerror=alert(1)> by hand', to: 'Production' },
              },
            },
          ],
        },
      });
      const found = (await status()).orgs['acme']?.recentDrift;
      expect(found).toEqual([
        {
          environment: 'prod',
          field: 'description',
          found: '<img src=x onerror=alert(1)> by hand',
          declared: 'Production',
          at: expect.any(String),
        },
      ]);
      const page = await get(`${d.url}/`);
      expect(page).toContain(
        '<tr><td data-label="Environment"><code>prod</code></td><td data-label="Field"><code>description</code></td><td data-label="Found"><code>&quot;&lt;img src=x onerror=alert(1)&gt; by hand&quot;</code></td><td data-label="Declared"><code>&quot;Production&quot;</code></td>',
      );
      expect(page).not.toContain('<img src=x');

      // The manifest changes: applied as a change, neither counted nor notified as drift.
      await writeFile(tmp().path('manifests/acme.yaml'), manifest('Production, v2'));
      await waitFor(
        'the change',
        async () => (await describedAs(api, 'prod')) === 'Production, v2',
        {
          timeoutMs: WAIT_MS,
        },
      );
      await d.daemon.idle();
      expect(lines('update acme/prod')).toMatchObject([{ cause: 'change' }]);
      expect(await healedMetric()).toBe('1');

      // Drift again, on web: the second notification is about web, so none came in between.
      await editByHand(api, 'web', 'changed by hand');
      await pass();
      expect(await healedMetric()).toBe('2');
      await waitFor('the second drift.healed', () => receiver.deliveries().length >= 2, {
        timeoutMs: WAIT_MS,
      });
      expect(receiver.deliveries().map((e) => e.json['type'])).toEqual([
        'drift.healed',
        'drift.healed',
      ]);
      expect(receiver.deliveries()[1]?.json).toMatchObject({
        data: { environments: [{ name: 'web' }] },
      });
      expect((await status()).orgs['acme']?.recentDrift.map((x) => x.environment)).toEqual([
        'web',
        'prod',
      ]);
      expect(JSON.stringify(d.logs())).not.toContain(TOKEN);
      expect(await get(`${d.url}/`)).not.toContain(TOKEN);
    } finally {
      await d.stop();
      await receiver.close();
    }
  });
});
