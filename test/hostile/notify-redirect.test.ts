/**
 * A notification receiver that answers with a redirect: the notification fails at once (never
 * followed nor retried), and the log line says so, even after failures that were retried.
 */
import { writeFile } from 'node:fs/promises';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { Behaviour } from '../notify/receiver.ts';
import { startReceiver } from '../notify/receiver.ts';
import { useDaemonWorld, type startTestDaemon } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';

const TOKEN = 'Nt9redir-Kq4Zx7Lm2';
/** A safety net for a loaded machine, not a timing. */
const WAIT = { timeoutMs: 60_000 };

const world = useDaemonWorld([{ token: TOKEN, orgs: null }]);

/** A manifest the daemon finds invalid (`k8s` is no type): each new one is an event. */
const invalid = (type: string) =>
  `org: acme\nenvironments:\n  - name: prod\n    type: ${type}\n    description: p\n`;

async function daemonNotifying(behaviour: Behaviour) {
  const receiver = await startReceiver(behaviour);
  world.cleanups.push(() => receiver.close());
  await world.tmp.write('manifests/acme.yaml', invalid('k8s'));
  const d = await world.start({
    flags: { 'notify-url': [receiver.url] },
    notify: { policy: { baseDelayMs: 20, maxAttempts: 3, timeoutMs: 60_000 } },
  });
  return { d, receiver };
}

/** Waits until `d` has counted `n` failed notifications. */
async function failed(d: Awaited<ReturnType<typeof startTestDaemon>>, n: number): Promise<void> {
  const count = async () => {
    const text = await (await request(`${d.url}/metrics`)).body.text();
    return Number(/^envsync_notifications_total\{result="failed"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };
  await waitFor(`${n} failed notification(s)`, async () => (await count()) === n, WAIT);
}

const notifyLines = (d: Awaited<ReturnType<typeof startTestDaemon>>) =>
  d.logs().filter((l) => String(l['msg']).startsWith('notifications to'));

const REDIRECT = { status: 307, headers: { location: 'http://127.0.0.1:9/elsewhere' } };

describe('a receiver answering with a redirect', () => {
  it('fails the notification at once, and the log says it is a redirect, not retried', async () => {
    const { d, receiver } = await daemonNotifying(() => REDIRECT);
    await failed(d, 1);
    expect(receiver.all).toHaveLength(1);
    const lines = notifyLines(d);
    expect(lines).toHaveLength(1);
    const msg = String(lines[0]?.['msg']);
    expect(msg).toContain('HTTP 307');
    expect(msg).toContain('redirect, which is never followed');
    expect(msg).toContain('not retried');
    expect(msg).not.toContain('tried again');
    expect(lines[0]).toMatchObject({ level: 40, failure: 'redirect' });
  });

  it('after failures that are retried, logs again when the receiver starts redirecting', async () => {
    const { d, receiver } = await daemonNotifying((n) => (n < 3 ? { status: 503 } : REDIRECT));
    await failed(d, 1);
    expect(receiver.all).toHaveLength(3);
    await writeFile(world.tmp.path('manifests/acme.yaml'), invalid('k9s'));
    await failed(d, 2);
    expect(receiver.all).toHaveLength(4);
    const messages = notifyLines(d).map((l) => String(l['msg']));
    expect(messages).toHaveLength(2);
    expect(messages[0]).toContain('HTTP 503');
    expect(messages[0]).toContain('tried again, up to 3 attempts');
    expect(messages[1]).toContain('HTTP 307');
    expect(messages[1]).toContain('never followed');
  });
});
