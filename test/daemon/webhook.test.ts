import { createHmac } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { request } from 'undici';
import { beforeEach, describe, expect, it } from 'vitest';
import { webhookRefusal } from '../../src/daemon/http.ts';
import { manifestOf, useDaemonWorld } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'webhook-test-token-3c1d';
const SECRET = 'hook-secret-9f2b71c4e0aa';

const world = useDaemonWorld([{ token: TOKEN, orgs: null }]);
beforeEach(async () => {
  await world.tmp.write('manifests/acme.yaml', manifestOf('acme', { prod: 'p' }));
});

/** The passes a webhook started or joined, from the daemon's pass log lines. */
const webhookPasses = (logs: Record<string, unknown>[]) =>
  logs.filter((l) => (l['trigger'] as string[] | undefined)?.includes('webhook')).length;

async function post(url: string, body = '{}', headers: Record<string, string> = {}) {
  const response = await request(url, { method: 'POST', body, headers });
  const text = await response.body.text();
  return { status: response.statusCode, text };
}

/** An IPv4 address of this machine that is not loopback, if it has one. */
function externalAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;
}

describe('webhook decisions (pure)', () => {
  const body = Buffer.from('{"ref":"refs/heads/main"}');
  const hmac = createHmac('sha256', SECRET).update(body).digest('hex');
  const MISSING =
    'this address must send the webhook secret (Authorization: Bearer, or X-Hub-Signature-256)';
  const WRONG = 'the webhook secret does not match';
  const refusal = (address: string | undefined, headers = {}, sent = body) =>
    webhookRefusal(SECRET, address, headers, sent);

  const LOOPBACK = '127.0.0.1 127.8.9.10 ::1 ::ffff:127.0.0.1 ::FFFF:127.1.2.3'.split(' ');
  const OTHERS = '10.0.0.1 ::ffff:10.0.0.1 fd00::2 128.0.0.1 127.0.0.1.evil ::2'.split(' ');
  it.each([...LOOPBACK, ...OTHERS, '', undefined])(
    'knows loopback by the address: %j',
    (address) => {
      const loopback = address !== undefined && LOOPBACK.includes(address);
      expect(refusal(address)).toBe(loopback ? undefined : MISSING);
      // Without a secret, any address may.
      expect(webhookRefusal(undefined, address, {}, body)).toBeUndefined();
    },
  );

  it.each([
    [{}, body, MISSING],
    [{ authorization: `Bearer ${SECRET}` }, body, undefined],
    [{ authorization: `bearer ${SECRET}` }, body, undefined],
    [{ authorization: `Bearer ${SECRET}x` }, body, WRONG],
    [{ authorization: `Basic ${SECRET}` }, body, WRONG],
    [{ authorization: 'Bearer' }, body, WRONG],
    [{ 'x-hub-signature-256': `sha256=${hmac}` }, body, undefined],
    [{ 'x-hub-signature-256': `sha256=${hmac.toUpperCase()}` }, body, undefined],
    [{ 'x-hub-signature-256': `sha256=${hmac}` }, Buffer.from('{}'), WRONG],
    [{ 'x-hub-signature-256': hmac }, body, WRONG],
    [{ 'x-hub-signature-256': `sha256=${SECRET}` }, body, WRONG],
  ])('takes the secret as Bearer or GitHub HMAC of the body only: %j', (headers, sent, said) => {
    expect(refusal('10.0.0.1', headers, sent)).toBe(said);
  });
});

describe('POST /reconcile cannot drive load', () => {
  it('300 posts within the minimum interval run one webhook pass; the rest join the next one', async () => {
    const d = await world.start({ flags: { 'webhook-min-interval': '1h' } });
    await waitFor('first pass', () => d.passes() >= 1);
    const getsBefore = (await world.api.getRequests(1000)).filter((r) => r.method === 'GET').length;
    const answers = [];
    for (let batch = 0; batch < 10; batch++) {
      answers.push(
        ...(await Promise.all(Array.from({ length: 30 }, () => post(`${d.url}/reconcile`)))),
      );
    }
    expect(answers.every((a) => a.status === 202)).toBe(true);
    const bodies = answers.map((a) => JSON.parse(a.text) as { pass: string; runAt: string });
    // One post starts a pass now, one schedules the next an hour later; all others join one.
    expect(bodies.filter((b) => b.pass === 'scheduled')).toHaveLength(2);
    const first = Math.min(...bodies.map((b) => Date.parse(b.runAt)));
    const last = bodies.at(-1) as { pass: string; runAt: string };
    expect(last.pass).toBe('joined the next webhook pass');
    expect(Date.parse(last.runAt)).toBeGreaterThanOrEqual(first + 3_600_000 - 1_000);
    await waitFor('the webhook pass', () => webhookPasses(d.logs()) === 1);
    await d.daemon.idle();
    expect(webhookPasses(d.logs())).toBe(1);
    // One org: one more listing, not 300.
    const getsAfter = (await world.api.getRequests(1000)).filter((r) => r.method === 'GET').length;
    expect(getsAfter - getsBefore).toBe(1);
  });

  it('a burst of posts runs at most one webhook pass per minimum interval, and the joined pass does run', async () => {
    const d = await world.start({ flags: { 'webhook-min-interval': '1s' } });
    await waitFor('first pass', () => d.passes() >= 1);
    const started = Date.now();
    for (let batch = 0; batch < 8; batch++) {
      await Promise.all(Array.from({ length: 25 }, () => post(`${d.url}/reconcile`)));
    }
    const burstMs = Date.now() - started;
    // The posts that came after the first pass started all join one more pass, a second later.
    await waitFor('the joined pass', () => webhookPasses(d.logs()) >= 2);
    await d.daemon.idle();
    // At most one pass per started second of the burst, plus the pass the last posts joined.
    expect(webhookPasses(d.logs())).toBeLessThanOrEqual(Math.ceil(burstMs / 1000) + 1);
  });
});

describe('the webhook secret', () => {
  const external = externalAddress();

  it('is needed from a non-loopback address: wrong or missing gets 401 and no pass; Bearer or GitHub HMAC starts one', async () => {
    const d = await world.start({
      flags: { 'webhook-min-interval': '0' },
      listenHost: '0.0.0.0',
      webhookSecret: SECRET,
    });
    await waitFor('first pass', () => d.passes() >= 1);
    await d.daemon.idle();
    // Loopback (a git-sync sidecar in the same pod) needs no secret.
    expect((await post(`http://127.0.0.1:${d.port}/reconcile`)).status).toBe(202);
    await waitFor('loopback pass', () => webhookPasses(d.logs()) === 1);
    await d.daemon.idle();
    if (external === undefined) {
      // No address but loopback on this machine: the decision is proved by the pure tests above.
      return;
    }
    const url = `http://${external}:${d.port}/reconcile`;
    const body = '{"ref":"refs/heads/main"}';
    const hmac = createHmac('sha256', SECRET).update(body).digest('hex');
    const refused = [
      await post(url, body),
      await post(url, body, { authorization: 'Bearer not-the-secret' }),
      // A header any caller can write does not make it loopback.
      await post(url, body, { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1' }),
    ];
    expect(refused.map((r) => r.status)).toEqual([401, 401, 401]);
    const tooLarge = await post(url, 'x'.repeat(1024 * 1024 + 1), {
      authorization: `Bearer ${SECRET}`,
    });
    expect([tooLarge.status, d.daemon.status().passRunning]).toEqual([413, false]);
    expect(webhookPasses(d.logs())).toBe(1);

    expect((await post(url, body, { authorization: `Bearer ${SECRET}` })).status).toBe(202);
    await waitFor('Bearer pass', () => webhookPasses(d.logs()) === 2);
    await d.daemon.idle();
    expect((await post(url, body, { 'x-hub-signature-256': `sha256=${hmac}` })).status).toBe(202);
    await waitFor('HMAC pass', () => webhookPasses(d.logs()) === 3);
    await d.daemon.idle();
    expect(webhookPasses(d.logs())).toBe(3);

    // The secret is never in an answer, /status, /metrics or a log line.
    const status = await request(`http://127.0.0.1:${d.port}/status`);
    const metrics = await request(`http://127.0.0.1:${d.port}/metrics`);
    const texts = [
      ...refused.map((r) => r.text),
      await status.body.text(),
      await metrics.body.text(),
      JSON.stringify(d.logs()),
    ];
    for (const text of texts) expect(text).not.toContain(SECRET);
    expect(d.logs().some((l) => String(l['msg']).includes('POST /reconcile refused'))).toBe(true);
  });
});
