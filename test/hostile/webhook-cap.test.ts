/** POST /reconcile's body limit (1 MiB) holds from every address, with a secret or not. */
import { networkInterfaces } from 'node:os';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { beforeEach, describe, expect, it } from 'vitest';
import { MAX_WEBHOOK_BODY_BYTES } from '../../src/daemon/http.ts';
import { useDaemonWorld } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'Wh7cap-Zq2Lx9Vt4Kp';
const SECRET = 'cap-secret-Rn5Tw8Yb2Mq6';
const FIVE_MB = 5 * 1024 * 1024;

const world = useDaemonWorld([{ token: TOKEN, orgs: null }]);
beforeEach(async () => {
  await world.tmp.write(
    'manifests/acme.yaml',
    'org: acme\nenvironments: [{name: prod, type: K8S, description: p}]\n',
  );
});

/** An IPv4 address of this machine that is not loopback, if it has one. */
function externalAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
}

/** The passes a webhook started or joined, from the daemon's pass log lines. */
function webhookPasses(logs: Record<string, unknown>[]): number {
  return logs.filter(
    (l) =>
      String(l['msg']).startsWith('pass ') &&
      Array.isArray(l['trigger']) &&
      (l['trigger'] as string[]).includes('webhook'),
  ).length;
}

/** `size` bytes in chunks of 64 KiB, sent without a Content-Length (chunked). */
function streamed(size: number): Readable {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let left = size;
  return new Readable({
    read() {
      this.push(left <= 0 ? null : chunk.subarray(0, Math.min(left, chunk.length)));
      left -= chunk.length;
    },
  });
}

async function post(url: string, body: string | Readable, headers: Record<string, string> = {}) {
  const response = await request(url, { method: 'POST', body, headers });
  await response.body.dump();
  return response.statusCode;
}

async function daemon(webhookSecret?: string) {
  const started = await world.start({
    flags: { 'webhook-min-interval': '0' },
    listenHost: '0.0.0.0',
    ...(webhookSecret === undefined ? {} : { webhookSecret }),
  });
  await waitFor('the first pass', () => started.passes() >= 1);
  await started.daemon.idle();
  return started;
}

describe('the webhook body limit', () => {
  it.each([
    ['without a secret', undefined],
    ['with a secret', SECRET],
  ])('refuses 5 MB from loopback %s: 413, no pass', async (_name, secret) => {
    const d = await daemon(secret);
    const url = `http://127.0.0.1:${d.port}/reconcile`;
    const auth = secret === undefined ? {} : { authorization: `Bearer ${secret}` };
    expect(await post(url, 'x'.repeat(FIVE_MB), auth)).toBe(413);
    expect(await post(url, streamed(FIVE_MB), auth)).toBe(413);
    expect(await post(url, 'x'.repeat(MAX_WEBHOOK_BODY_BYTES + 1), auth)).toBe(413);
    expect(d.daemon.status().passRunning).toBe(false);
    expect(webhookPasses(d.logs())).toBe(0);
    // At the limit the body is still taken, and the pass runs.
    expect(await post(url, 'x'.repeat(MAX_WEBHOOK_BODY_BYTES), auth)).toBe(202);
    await waitFor('the webhook pass', () => webhookPasses(d.logs()) === 1);
  });

  it('refuses 5 MB from every address of the machine, with the secret', async () => {
    const d = await daemon(SECRET);
    const addresses = ['127.0.0.1', externalAddress()].filter((a) => a !== undefined);
    for (const address of addresses) {
      const url = `http://${address}:${d.port}/reconcile`;
      expect(await post(url, streamed(FIVE_MB), { authorization: `Bearer ${SECRET}` })).toBe(413);
    }
    expect(webhookPasses(d.logs())).toBe(0);
  });
});
