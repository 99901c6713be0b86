import { writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { manifestOf, useDaemonWorld } from '../helpers/daemon.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { waitFor } from '../helpers/wait.ts';

/** The emulator's token serves beta only: acme's requests are refused. */
const world = useDaemonWorld([{ token: 'outage-test-token-66b0', orgs: ['beta'] }]);

async function readyz(url: string): Promise<{ status: number; reason?: string }> {
  const response = await request(`${url}/readyz`);
  const body = (await response.body.json()) as { reason?: string };
  return { status: response.statusCode, ...(body.reason ? { reason: body.reason } : {}) };
}

describe('outages show at once, and the log tells the truth', () => {
  it("shows an org's failure in /status as soon as its first round fails, while the pass still runs", async () => {
    // The first listing answers 503; the next (round 2) hangs until the test lets it through.
    const held: ServerResponse[] = [];
    let released = false;
    let seen = 0;
    const fake = await startFakeApi((_req, res) => {
      seen++;
      if (seen === 1) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"message":"down for maintenance"}');
      } else if (!released) held.push(res);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
    world.cleanups.push(() => fake.close());
    await world.tmp.write('manifests/acme.yaml', 'org: acme\nenvironments: []\n');
    const d = await world.start({ apiUrl: fake.url, flags: { retries: '0', timeout: '60s' } });
    await waitFor('round 2 waiting', () => held.length === 1);
    const status = d.daemon.status();
    expect(status.passRunning).toBe(true);
    expect(status.orgs['acme']).toMatchObject({ status: 'failed' });
    expect(status.orgs['acme']?.lastError?.message).toContain('503');
    released = true;
    for (const res of held.splice(0))
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    await waitFor('recovered', () => d.daemon.status().orgs['acme']?.status === 'ok');
    await d.daemon.idle();
    expect((await readyz(d.url)).status).toBe(200);
  });

  it('/readyz: ready while an org is reconciled, 503 once every org fails, ready again on recovery', async () => {
    const { api, tmp } = world;
    await tmp.write('manifests/acme.yaml', manifestOf('acme', { prod: 'p' })); // refused: failed
    await tmp.write('manifests/beta.yaml', manifestOf('beta', { prod: 'p' }));
    const d = await world.start();
    await waitFor('first pass', () => d.passes() >= 1);
    expect(d.daemon.status().orgs).toMatchObject({
      acme: { status: 'failed' },
      beta: { status: 'ok' },
    });
    expect((await readyz(d.url)).status).toBe(200);

    await api.setFaults({ failRate: 1 });
    await writeFile(tmp.path('manifests/beta.yaml'), manifestOf('beta', { prod: 'q' }));
    await waitFor('beta failed', () => d.daemon.status().orgs['beta']?.status === 'failed');
    await waitFor('not ready', async () => (await readyz(d.url)).status === 503);
    expect((await readyz(d.url)).reason).toContain('every org (2) failed');
    expect(d.daemon.status().ready).toBe(false);
    const metrics = await request(`${d.url}/metrics`);
    expect(await metrics.body.text()).toContain('envsync_ready 0');

    // The API comes back: beta's backoff (5 s) ends, it is reconciled, the replica is ready.
    await api.setFaults({ failRate: 0 });
    await waitFor('ready again', async () => (await readyz(d.url)).status === 200, {
      timeoutMs: 30_000,
    });
    expect(d.daemon.status().orgs['beta']).toMatchObject({ status: 'ok' });
  });
});
