/**
 * The daemon's pause buttons, against the kosli emulator over HTTP: `--observe` plans every pass
 * and sends nothing, reports drift (status, metrics, a drift.detected notification); a suspended
 * org is planned and left alone; and outside a sync window a pass plans only, then the daemon
 * sends the moment the window opens. The windows see a clock set to the minute before a window
 * opens: the time is given, never waited for.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.ts';
import type { DaemonStatus } from '../../src/daemon/status.ts';
import { systemClock } from '../../src/runtime/system-clock.ts';
import { passNow as pass, useDaemonWorld } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';
import { startReceiver } from '../notify/receiver.ts';

const WAIT = { timeoutMs: 60_000 };
const world = useDaemonWorld([{ token: 'pause-test-token-5d2c8e71', orgs: null }]);

const manifest = (description: string, extra = '') =>
  `org: acme\n${extra}environments:\n  - name: web\n    type: K8S\n    description: ${description}\n`;

const daemon = (flags: Record<string, string | string[] | boolean>, clock?: Clock) =>
  world.start({ flags, ...(clock === undefined ? {} : { clock }) });

type Started = Awaited<ReturnType<typeof daemon>>;
const status = async (d: Started) =>
  (await (await request(`${d.url}/status`)).body.json()) as DaemonStatus;
const metrics = async (d: Started) => (await request(`${d.url}/metrics`)).body.text();
/** Waits for the daemon's first pass to be over. */
const firstPass = async (d: Started) => {
  await waitFor('the first pass', () => d.passes() > 0, WAIT);
  await d.daemon.idle();
};

const writes = async () =>
  (await world.api.getRequests(500)).filter((r) => r.method !== 'GET').length;

describe('observe mode', () => {
  it('sends nothing, and reports drift in /status, the metrics and a drift.detected notification', async () => {
    // A normal daemon applies the manifests and records them; then someone edits the service.
    await world.tmp.write('manifests/acme.yaml', manifest('Web tier'));
    const first = await daemon({});
    await firstPass(first);
    await first.stop();
    const store = await world.api.getStore();
    const web = store.orgs['acme']?.find((e) => e.name === 'web');
    expect(web?.description).toBe('Web tier');
    await world.api.putStore({
      ...store,
      orgs: { acme: (store.orgs['acme'] ?? []).map((e) => ({ ...e, description: 'by hand' })) },
    });
    const before = await writes();

    const receiver = await startReceiver();
    world.cleanups.push(() => receiver.close());
    const observer = await daemon({ observe: true, 'notify-url': [receiver.url] });
    await firstPass(observer);
    await pass(observer);
    expect(await writes()).toBe(before);
    const now = await status(observer);
    expect([now.mode, now.health.level]).toEqual(['observe', 'healthy']);
    expect(now.orgs['acme']).toMatchObject({ state: 'drifted', pending: 1 });
    expect(await metrics(observer)).toMatch(/^envsync_org_drift_pending\{org="acme"\} 1$/m);
    await waitFor(
      'drift.detected',
      () => receiver.deliveries().some((e) => e.json['type'] === 'drift.detected'),
      WAIT,
    );
    // Announced once: the second pass found the same drift.
    expect(receiver.deliveries().filter((e) => e.json['type'] === 'drift.detected')).toHaveLength(
      1,
    );
    expect((await world.api.getStore()).orgs['acme']?.[0]?.description).toBe('by hand');
  });
});

describe('suspend: true', () => {
  it('plans the org and sends it nothing; /status and the metrics say suspended', async () => {
    await world.tmp.write('manifests/acme.yaml', manifest('Web tier', 'suspend: true\n'));
    const d = await daemon({});
    await firstPass(d);
    expect(await writes()).toBe(0);
    expect((await status(d)).orgs['acme']).toMatchObject({
      state: 'suspended',
      suspended: true,
      pending: 1,
    });
    expect(await metrics(d)).toMatch(/^envsync_org_suspended\{org="acme"\} 1$/m);
    // Resumed: the next pass sends.
    await world.tmp.write('manifests/acme.yaml', manifest('Web tier'));
    await pass(d);
    await waitFor('the create', async () => (await writes()) > 0, WAIT);
    expect(await metrics(d)).toMatch(/^envsync_org_suspended\{org="acme"\} 0$/m);
  });
});

describe('sync windows in the daemon', () => {
  it('plans only while the window is closed, and sends when it opens', async () => {
    // The daemon's clock reads a Monday a minute before 09:00 UTC until the test moves it. Its
    // timers are real, and the long ones (the window's opening, a minute away; the requests'
    // timeouts are 30 s) are also kept, so
    // that the test can fire them when it moves the clock: nothing waits for the minute.
    const opensAt = Date.parse('2026-11-23T09:00:00Z');
    let now = opensAt - 60_000;
    const long: (() => void)[] = [];
    const clock: Clock = {
      ...systemClock,
      now: () => now,
      setTimer: (ms, callback, options) => {
        if (ms > 45_000) long.push(callback);
        return systemClock.setTimer(ms, callback, options);
      },
    };
    await world.tmp.write('manifests/acme.yaml', manifest('Web tier'));
    const d = await daemon({ 'sync-window': ['allow mon-fri 09:00 8h UTC'], interval: '0' }, clock);
    await firstPass(d);
    const closed = await status(d);
    expect(closed.window).toEqual({ open: false, opensAt: '2026-11-23T09:00:00.000Z' });
    expect(closed.orgs['acme']).toMatchObject({ state: 'waiting for window', pending: 1 });
    expect(
      d
        .logs()
        .some((l) =>
          String(l['msg']).includes(
            'this pass plans only, nothing is sent: waiting for a sync window (opens at 2026-11-23T09:00:00.000Z)',
          ),
        ),
    ).toBe(true);
    expect(await writes()).toBe(0);
    expect(long).toHaveLength(1);

    // 09:00: the window opens, and its timer starts the pass that sends (no interval, no event).
    now = opensAt;
    for (const fire of long) fire();
    await waitFor('the create', async () => (await writes()) > 0, WAIT);
    await d.daemon.idle();
    expect(
      d.logs().some((l) => (l['trigger'] as string[] | undefined)?.includes('sync window opens')),
    ).toBe(true);
    const open = await status(d);
    expect(open.window).toEqual({ open: true, closesAt: '2026-11-23T17:00:00.000Z' });
    expect(open.orgs['acme']?.state).toBe('synced');
  });
});
