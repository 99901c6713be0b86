/**
 * The daemon names drift as drift, against the emulator over real HTTP in both of its profiles: a
 * value changed on the service behind its back is set back, logged as drift, counted in
 * envsync_drift_healed_total and listed in /status; a manifest change applied after it is none of
 * these. (notify-daemon.test.ts delivers drift.healed; page.test.ts shows the drift, escaped.)
 */
import { writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { DaemonStatus } from '../../src/daemon/status.ts';
import { startReceiver } from '../notify/receiver.ts';
import { envsync, envsyncInProcess } from '../helpers/cli.ts';
import { passNow, startTestDaemon } from '../helpers/daemon.ts';
import { editByHand, type TestEmulator } from '../helpers/emulator.ts';
import { syncWorld, TOKEN } from '../helpers/sync-world.ts';
import { waitFor } from '../helpers/wait.ts';

const world = syncWorld();
const { tmp } = world;

const manifest = (prod: string) => `org: acme
environments:
  - name: prod
    type: K8S
    description: ${JSON.stringify(prod)}
  - name: web
    type: S3
    description: Web assets
`;

const get = async (url: string) => (await request(url)).body.text();

async function describedAs(api: TestEmulator, name: string): Promise<string | undefined> {
  return (await api.getStore()).orgs['acme']?.find((env) => env.name === name)?.description;
}

describe.each(['spec', 'kosli'] as const)('the daemon against the %s profile', (profile) => {
  it('heals drift and says so: log line, metric, /status; a manifest change is not drift', async () => {
    const api = await world.emulator({ profile });
    await tmp().write('manifests/acme.yaml', manifest('Production'));
    const d = await startTestDaemon({
      apiUrl: api.url,
      cwd: tmp().dir,
      token: TOKEN,
      flags: { manifests: 'manifests', state: 'state.json' },
    });
    try {
      const healed = async () =>
        /^envsync_drift_healed_total\{org="acme"\} (\d+)$/m.exec(
          await get(`${d.url}/metrics`),
        )?.[1];
      const status = async () => JSON.parse(await get(`${d.url}/status`)) as DaemonStatus;
      const lines = (message: string) => d.logs().filter((line) => line['msg'] === message);

      // The first pass creates both: no drift, and the series exists at 0.
      await waitFor('first pass', async () => (await describedAs(api, 'web')) === 'Web assets');
      await d.daemon.idle();
      expect(await healed()).toBe('0');
      expect(lines('create acme/prod')).toMatchObject([{ cause: 'change' }]);

      // Someone edits prod at the service; the next pass sets it back.
      await editByHand(api, 'acme', 'prod', '<img src=x onerror=alert(1)> by hand');
      await passNow(d);
      expect(await describedAs(api, 'prod')).toBe('Production');
      expect(lines('update acme/prod (drift)')).toMatchObject([
        { org: 'acme', env: 'prod', action: 'update', cause: 'drift', fields: ['description'] },
      ]);
      expect(await healed()).toBe('1');
      expect(d.logs().at(-1)?.['msg']).toMatch(/^pass success: 1 applied \(1 drift healed\), /);
      expect((await status()).orgs['acme']?.recentDrift).toEqual([
        {
          environment: 'prod',
          field: 'description',
          found: '<img src=x onerror=alert(1)> by hand',
          declared: 'Production',
          at: expect.any(String),
        },
      ]);

      // The manifest changes: applied as a change, not counted as drift.
      await writeFile(tmp().path('manifests/acme.yaml'), manifest('Production, v2'));
      await waitFor(
        'the change',
        async () => (await describedAs(api, 'prod')) === 'Production, v2',
      );
      await d.daemon.idle();
      expect(lines('update acme/prod')).toMatchObject([{ cause: 'change' }]);
      expect(await healed()).toBe('1');

      // Drift again, on web: counted, and listed first.
      await editByHand(api, 'acme', 'web', 'changed by hand');
      await passNow(d);
      expect(await healed()).toBe('2');
      const drifts = (await status()).orgs['acme']?.recentDrift.map((x) => x.environment);
      expect(drifts).toEqual(['web', 'prod']);
      expect(JSON.stringify(d.logs())).not.toContain(TOKEN);
    } finally {
      await d.stop();
    }
  });
});

describe('drift for every environment, whoever made it', () => {
  it('a fresh observe daemon over exported manifests reports a hand edit as drift; normal mode heals it; envsync status says so', async () => {
    const api = await world.emulator({ profile: 'kosli' });
    await api.putStore({ orgs: { acme: [{ name: 'prod', type: 'K8S', description: 'Prod' }] } });
    const auth = { env: { ENVSYNC_TOKEN: TOKEN }, cwd: tmp().dir };
    const out = ['export', '--org', 'acme', '--out', 'manifests', '--api-url', api.url];
    expect((await envsyncInProcess(out, auth)).code).toBe(0);
    const r = await startReceiver();
    const where = { apiUrl: api.url, cwd: tmp().dir, token: TOKEN, notify: { policy: {} } };
    const start = (observe: boolean) =>
      startTestDaemon({
        ...where,
        flags: { manifests: 'manifests', state: 'state.json', observe, 'notify-url': [r.url] },
      });
    const types = () => r.deliveries().map((e) => e.json['type']);
    const status = (d: { url: string }, ...more: string[]) =>
      envsync(['status', '--url', d.url, ...more]);
    let d = await start(true);
    try {
      await waitFor('the first pass', () => d.passes() > 0);
      await d.daemon.idle();
      await editByHand(api, 'acme', 'prod', 'by hand');
      for (const _ of [1, 2]) await passNow(d);
      expect(d.daemon.status().orgs['acme']).toMatchObject({ state: 'drifted', sync: 'drifted' });
      expect(await get(`${d.url}/`)).toContain('<div class="band st-drifted" id="sync">');
      const metrics = (await get(`${d.url}/metrics`)).split('\n');
      expect(metrics).toContain('envsync_org_drift_pending{org="acme"} 1');
      expect(metrics).toContain('envsync_org_sync{org="acme",status="drifted"} 1');
      await waitFor('drift.detected', () => types().includes('drift.detected'));
      expect(types().filter((type) => type === 'drift.detected')).toHaveLength(1);
      const text = await status(d);
      expect(text.code).toBe(2);
      expect(text.stdout).toMatch(
        /^ORG +HEALTH +SYNC +REVISION +LAST PASS +MESSAGE\nacme +healthy +drifted +- +20\S+Z +drifted\n$/,
      );
      const json = await status(d, '--org', 'acme', '-o', 'json');
      expect(JSON.parse(json.stdout)).toMatchObject({ orgs: [{ org: 'acme', sync: 'drifted' }] });
      expect(json.code).toBe(2);
    } finally {
      await d.stop();
    }
    d = await start(false);
    try {
      await waitFor('the heal', async () => (await describedAs(api, 'prod')) === 'Prod');
      await d.daemon.idle();
      expect(await get(`${d.url}/metrics`)).toContain('envsync_drift_healed_total{org="acme"} 1\n');
      await waitFor('drift.healed', () => types().includes('drift.healed'));
      const synced = await status(d);
      expect(synced.stdout, synced.stderr).toMatch(/\nacme +healthy +synced /);
      expect(synced.code).toBe(0);
      await writeFile(tmp().path('manifests/acme.yaml'), 'org: acme\nenvironments: 3\n');
      await waitFor('invalid', () => d.daemon.status().orgs['acme']?.status === 'invalid');
      expect((await status(d, '-o', 'json')).code).toBe(1);
    } finally {
      await d.stop();
      await r.close();
    }
    const gone = await status(d);
    const refused = `envsync status: cannot read ${d.url}/status: connect ECONNREFUSED`;
    expect(gone).toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining(refused) });
  });
});
