import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { NotifyEvent } from '../../src/notify/events.ts';
import { Masker } from '../../src/core/mask.ts';
import { Notifier, type NotifyPolicy, type NotifyResult } from '../../src/notify/delivery.ts';
import type { TargetFormat } from '../../src/notify/format.ts';
import { systemClock } from '../../src/runtime/system-clock.ts';
import { waitFor } from '../helpers/wait.ts';

/** A safety net for a loaded machine, not a timing. */
const WAIT_MS = 60_000;
import { startReceiver, type Receiver } from './receiver.ts';

const receivers: Receiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

function event(n: number): NotifyEvent {
  return {
    type: 'org.failed',
    org: 'acme',
    revision: null,
    time: '2026-11-23T02:00:00.000Z',
    summary: `failure ${n}`,
    data: {
      type: 'org.failed',
      reason: `reason ${n}`,
      environments: [],
      omitted: 0,
      previous: 'ok',
    },
  };
}

function notifier(
  url: string,
  policy: Partial<NotifyPolicy>,
  with_ = { format: 'cloudevents' as TargetFormat, secrets: new Masker() },
) {
  const counts: NotifyResult[] = [];
  let id = 0;
  const n = new Notifier({
    targets: [{ url: new URL(url), format: with_.format }],
    secret: undefined,
    clock: systemClock,
    logger: pino({ level: 'silent' }),
    policy,
    source: 'urn:envsync:test',
    link: undefined,
    secrets: with_.secrets,
    newId: () => `id-${++id}`,
    count: (result) => counts.push(result),
  });
  return { n, counts };
}

describe('Notifier: a bounded queue per receiver', () => {
  it('a full queue drops its oldest notification and counts it; what is kept is delivered in order', async () => {
    const r = await startReceiver((n) => (n === 0 ? 'hang' : { status: 204 }));
    receivers.push(r);
    const { n, counts } = notifier(r.url, { queueLimit: 2, timeoutMs: 300 });
    // The first is taken at once (and held by the receiver); 2..4 are dropped for 5 and 6.
    n.notify([1, 2, 3, 4, 5, 6].map(event));
    expect(counts).toEqual(['dropped', 'dropped', 'dropped']);
    expect(n.status()).toMatchObject({ dropped: 3, targets: [{ queued: 2 }] });
    // The held request times out and is tried again (delivered), then 5 and 6.
    await waitFor('three delivered', () => n.status().delivered === 3, { timeoutMs: WAIT_MS });
    const reasons = r.deliveries().map((got) => (got.json['data'] as { reason: string }).reason);
    expect(reasons).toEqual(['reason 1', 'reason 5', 'reason 6']);
    await n.close();
  });
});

it('a commit status is masked before it is cut to 140 characters: no piece of a secret is left', async () => {
  const r = await startReceiver(() => ({ status: 201 }));
  receivers.push(r);
  const token = 'ghs_0123456789abcdefghijABCDEFGHIJ';
  const secrets = new Masker();
  secrets.add(token);
  const { n } = notifier(r.url, {}, { format: 'github', secrets });
  n.statuses('4b825dc6', [
    { org: 'acme', state: 'failure', description: `${'x'.repeat(134)}${token}` },
  ]);
  await waitFor('the status', () => r.deliveries().length === 1, { timeoutMs: WAIT_MS });
  expect(r.deliveries()[0]?.json['description']).toBe(`${'x'.repeat(134)}[REDA…`);
  expect(JSON.stringify(r.deliveries())).not.toContain(token.slice(0, 4));
  await n.close();
});
