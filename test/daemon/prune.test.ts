/**
 * `prune: true` in the daemon, against the kosli emulator over HTTP: an archive within
 * `--max-archive` is carried out; more than that in one pass is refused whole, the org's other
 * changes apply, a notification says why, and `/status` and the status page name the refused
 * archives and the unmanaged environments.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { DaemonStatus } from '../../src/daemon/status.ts';
import { passNow, useDaemonWorld } from '../helpers/daemon.ts';
import { startReceiver } from '../notify/receiver.ts';
import { waitFor } from '../helpers/wait.ts';

const world = useDaemonWorld([{ token: 'prune-test-token-4b1e7d90', orgs: null }]);

const manifest = (names: readonly string[], description = 'd') =>
  `org: acme\nprune: true\nenvironments:\n${names
    .map((name) => `  - name: ${name}\n    type: K8S\n    description: ${description}\n`)
    .join('')}`;

describe('prune in the daemon', () => {
  it('archives within the limit, refuses a mass archive with a notification, and names what it left', async () => {
    const receiver = await startReceiver();
    world.cleanups.push(() => receiver.close());
    // Made by hand: never archived, named as unmanaged.
    await world.api.putStore({
      orgs: { acme: [{ name: 'hand-made', type: 'K8S', description: 'by hand' }] },
    });
    const names = ['a', 'b', 'c', 'd', 'e', 'keep'];
    await world.tmp.write('manifests/acme.yaml', manifest(names));
    const started = await world.start({
      flags: { 'max-archive': '3', 'notify-url': [receiver.url] },
    });
    const pass = () => passNow(started);
    const live = async () =>
      ((await world.api.getStore()).orgs['acme'] ?? [])
        .filter((e) => !e.archived)
        .map((e) => e.name)
        .sort();
    await pass();
    expect(await live()).toEqual(['a', 'b', 'c', 'd', 'e', 'hand-made', 'keep']);

    // One removed: archived at the next pass.
    await world.tmp.write('manifests/acme.yaml', manifest(['b', 'c', 'd', 'e', 'keep']));
    await pass();
    expect(await live()).toEqual(['b', 'c', 'd', 'e', 'hand-made', 'keep']);

    // Four at once, over --max-archive 3: none archived, the other change applies, and a
    // notification names the count and the flag.
    await world.tmp.write('manifests/acme.yaml', manifest(['keep'], 'changed'));
    await pass();
    expect(await live()).toEqual(['b', 'c', 'd', 'e', 'hand-made', 'keep']);
    const kept = ((await world.api.getStore()).orgs['acme'] ?? []).find((e) => e.name === 'keep');
    expect(kept?.description).toBe('changed');
    await waitFor(
      'the guard notification',
      () =>
        receiver
          .deliveries()
          .some(
            (e) =>
              e.json['type'] === 'org.failed' &&
              JSON.stringify(e.json).includes('would archive 4 environments in one pass') &&
              JSON.stringify(e.json).includes('--max-archive 3'),
          ),
      { timeoutMs: 60_000 },
    );

    const status = (await (await request(`${started.url}/status`)).body.json()) as DaemonStatus;
    const acme = status.orgs['acme'];
    expect(acme?.status).toBe('failed');
    expect(acme?.unmanagedNames).toEqual(['hand-made']);
    expect(acme?.pendingArchives?.map((a) => [a.name, a.result])).toEqual([
      ['b', 'failed'],
      ['c', 'failed'],
      ['d', 'failed'],
      ['e', 'failed'],
    ]);
    for (const archive of acme?.pendingArchives ?? [])
      expect(archive.error).toContain('--max-archive 3');
    const page = await (await request(`${started.url}/`)).body.text();
    expect(page).toContain('Pending archives');
    expect(page).toContain('<code>hand-made</code>');
  });
});
