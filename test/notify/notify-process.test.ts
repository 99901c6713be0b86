import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startEnvsync, type LiveCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

/** A safety net for a loaded machine, not a timing. */
const WAIT_MS = 60_000;
import { startReceiver, type Receiver } from './receiver.ts';

const RECEIVER = fileURLToPath(
  new URL('../../examples/notifications/receiver.mjs', import.meta.url),
);

let tmp: Awaited<ReturnType<typeof tempDir>> | undefined;
const running: LiveCli[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const cli of running.splice(0)) await cli.kill();
  for (const r of receivers.splice(0)) await r.close();
  await tmp?.cleanup();
  tmp = undefined;
});

describe('notifications from `envsync run` as a process', () => {
  it('SIGTERM with a receiver that never answers: exits 0 at once, and the URL path is never logged', async () => {
    tmp = await tempDir();
    const credential = 'PathCredential0123456789abcdef';
    await tmp.write(
      'manifests/acme.yaml',
      'org: acme\nenvironments:\n  - name: prod\n    type: k8s\n    description: x\n',
    );
    const hung = await startReceiver(() => 'hang');
    receivers.push(hung);
    const args = 'run --emulator --manifests manifests --state state.json --listen 127.0.0.1:0';
    const run = startEnvsync([...args.split(' '), '--interval', '0', '--shutdown-timeout', '30s'], {
      cwd: tmp.dir,
      env: { ENVSYNC_NOTIFY_URLS: `slack:${hung.url}/services/T1/B2/${credential}` },
    });
    running.push(run);
    const url = await run.listenUrl();
    await waitFor('the receiver holds the notification', () => hung.hanging() === 1, {
      timeoutMs: WAIT_MS,
    });
    const status = await (await request(`${url}/status`)).body.text();
    expect(status).toContain(`${hung.url}/…`);
    run.child.kill('SIGTERM');
    // A guard, not a timing: the drain is bounded (about a second), far below this.
    expect(await run.exitedWithin(10_000)).toEqual({ code: 0, signal: null });
    const output = `${run.stderr()}${run.stdout()}${status}`;
    expect(output).not.toContain(credential);
    expect(output).not.toContain('/services/T1');
    expect(JSON.parse(hung.all[0]?.body ?? '{}')).toHaveProperty('text');
  });

  it('examples/notifications/receiver.mjs accepts a signed event and refuses a forged one', async () => {
    tmp = await tempDir();
    const secret = 'example-receiver-secret-42';
    await tmp.write('secret', `${secret}\n`);
    const child = spawn(process.execPath, [RECEIVER], {
      cwd: tmp.dir,
      env: { PATH: process.env['PATH'] ?? '', NOTIFY_SECRET_FILE: 'secret', PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('close', resolve));
    try {
      let stderr = '';
      let stdout = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      const address = await waitFor('listening', () => /http:\/\/\S+/.exec(stderr)?.[0], {
        timeoutMs: WAIT_MS,
      });
      const body = JSON.stringify({
        specversion: '1.0',
        id: 'e1',
        source: 'urn:envsync:test',
        type: 'org.failed',
        subject: 'acme',
        data: { summary: 'org acme failed: HTTP 503' },
      });
      const post = async (signature: string) =>
        (
          await request(address, {
            method: 'POST',
            body,
            headers: {
              'content-type': 'application/cloudevents+json',
              'x-envsync-signature': signature,
            },
          })
        ).statusCode;
      const good = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      const forged = `sha256=${createHmac('sha256', 'wrong').update(body).digest('hex')}`;
      expect([await post(good), await post(forged)]).toEqual([204, 401]);
      await waitFor('printed', () => stdout.includes('org acme failed'), { timeoutMs: WAIT_MS });
      expect(stdout.trim().split('\n')).toHaveLength(1);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
