import { writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestDaemon } from '../helpers/daemon.ts';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts';
import { startFakeApi } from '../helpers/fake-api.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'outage-test-token-66b0';

let tmp: Awaited<ReturnType<typeof tempDir>>;
let api: TestEmulator | undefined;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).toReversed()) await cleanup();
  await api?.close();
  api = undefined;
  await tmp.cleanup();
});

const manifest = (org: string, type = 'K8S') =>
  `org: ${org}\nenvironments:\n  - name: prod\n    type: ${type}\n    description: p\n`;

async function daemon(apiUrl: string, flags: Record<string, string> = {}) {
  const started = await startTestDaemon({
    apiUrl,
    cwd: tmp.dir,
    token: TOKEN,
    flags: { manifests: 'manifests', state: 'state.json', ...flags },
  });
  cleanups.push(() => started.stop());
  return started;
}

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
    cleanups.push(() => fake.close());
    await tmp.write('manifests/acme.yaml', 'org: acme\nenvironments: []\n');
    const d = await daemon(fake.url, { retries: '0', timeout: '60s' });
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
    api = await startTestEmulator({ profile: 'kosli', tokens: [{ token: TOKEN, orgs: ['beta'] }] });
    await tmp.write('manifests/acme.yaml', manifest('acme')); // its token is refused: failed
    await tmp.write('manifests/beta.yaml', manifest('beta'));
    const d = await daemon(api.url);
    await waitFor('first pass', () => d.passes() >= 1);
    expect(d.daemon.status().orgs).toMatchObject({
      acme: { status: 'failed' },
      beta: { status: 'ok' },
    });
    expect((await readyz(d.url)).status).toBe(200);

    await api.setFaults({ failRate: 1 });
    await writeFile(tmp.path('manifests/beta.yaml'), manifest('beta').replace('p\n', 'q\n'));
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
