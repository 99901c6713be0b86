/** `suspend: true`, sync windows (an injected clock, never a wait) and `sync --observe`. */
import { describe, expect, it } from 'vitest';
import { json, putsAndGets, syncWorld } from '../helpers/sync-world.ts';

const { tmp, emulator, run } = syncWorld();

const ACME = (extra = '') =>
  `org: acme\n${extra}environments:\n  - {name: web, type: K8S, description: Web tier}\n`;
const BETA = 'org: beta\nenvironments:\n  - {name: api, type: K8S, description: API}\n';

/** Monday 2026-11-23, 08:30 UTC: inside "allow mon-fri 08:00 8h", outside "allow sat 10:00 1h". */
const MONDAY = Date.parse('2026-11-23T08:30:00Z');
const written = async (api: Parameters<typeof putsAndGets>[0]) =>
  (await putsAndGets(api)).writes.length;

describe('suspend: true', () => {
  it('plans the org and sends it nothing; other orgs go on; a plan with only it pending exits 0', async () => {
    const api = await emulator({ profile: 'kosli' });
    await tmp().write('manifests/acme.yaml', ACME('suspend: true\n'));
    await tmp().write('manifests/beta.yaml', BETA);
    const plan = await run(api.url, ['plan']);
    expect(plan.stdout).toContain('org acme (suspended: planned only, nothing is sent)');
    expect(plan.stdout).toContain('+ create web');

    const sync = await run(api.url, ['sync'], ['-o', 'json']);
    expect(sync.code, sync.stderr).toBe(0);
    const report = json(sync.stdout);
    expect(report.summary['suspendedOrgs']).toBe(1);
    expect(report.orgs.map((o) => [o.org, o.suspended ?? false, o.changes[0]?.result])).toEqual([
      ['acme', true, 'planned'],
      ['beta', false, 'applied'],
    ]);
    const store = await api.getStore();
    expect(store.orgs['acme'] ?? []).toEqual([]);
    expect((store.orgs['beta'] ?? []).map((e) => e.name)).toEqual(['api']);

    const detailed = await run(api.url, ['plan', '--detailed-exitcode']);
    expect(detailed.code, detailed.stdout).toBe(0);
    const markdown = await run(api.url, ['plan'], ['-o', 'markdown']);
    expect(markdown.stdout).toContain('| acme | ⏸️ suspended |');
  });
});

describe('sync windows in a one-shot sync', () => {
  it('sends inside an allow window; outside, plans only, says when the next opens and sends nothing; --ignore-windows sends anyway', async () => {
    const api = await emulator({ profile: 'kosli', orgs: ['acme'] });
    await tmp().write('manifests/acme.yaml', ACME());
    const sync = (extra: string[], env: Record<string, string> = {}) =>
      run(api.url, ['sync'], extra, env, () => MONDAY);
    const outside = await sync(['--sync-window', 'allow sat 10:00 1h UTC']);
    expect(outside.code, outside.stderr).toBe(0);
    expect(outside.stdout).toContain('+ create web');
    expect(outside.stdout).toContain(
      'Outside the sync windows: nothing was sent; waiting for a sync window (opens at 2026-11-28T10:00:00.000Z).',
    );
    expect(outside.stderr).toContain('--ignore-windows sends anyway');
    // The same from the environment, and a deny window that covers the time.
    const denied = await sync(['-o', 'json'], {
      ENVSYNC_SYNC_WINDOWS: 'allow * 00:00 24h; deny mon 08:00 1h UTC',
    });
    expect(json(denied.stdout)).toMatchObject({
      dryRun: true,
      window: { open: false, opensAt: '2026-11-23T09:00:00.000Z' },
    });
    expect(await written(api)).toBe(0);

    const ignored = await sync([
      '--sync-window',
      'deny * 00:00 24h',
      '--ignore-windows',
      '-o',
      'json',
    ]);
    expect(ignored.code, ignored.stderr).toBe(0);
    expect(ignored.stderr).toContain('outside the sync windows');
    expect(ignored.stderr).toContain('--ignore-windows: sending anyway');
    expect(json(ignored.stdout)).toMatchObject({ window: { open: true, ignored: true } });
    expect(await written(api)).toBe(1);

    await tmp().write('manifests/acme.yaml', ACME().replace('Web tier', 'Web'));
    const inside = await sync(['--sync-window', 'allow mon-fri 08:00 8h UTC', '-o', 'json']);
    expect(inside.code, inside.stderr).toBe(0);
    expect(json(inside.stdout).dryRun).toBe(false);
    expect(await written(api)).toBe(2);

    const unreadable = await sync(['--sync-window', 'allow weekdays 9am 8h']);
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toContain('--sync-window: "weekdays" is not a day or a range');
  });
});

describe('sync --observe', () => {
  it('is refused with a pointer to plan; nothing is read or sent', async () => {
    const api = await emulator({ profile: 'kosli', orgs: ['acme'] });
    await tmp().write('manifests/acme.yaml', ACME());
    const sync = await run(api.url, ['sync', '--observe']);
    expect(sync.code).toBe(1);
    expect(sync.stderr).toContain('--observe is for "envsync run"');
    expect(sync.stderr).toContain('run "envsync plan"');
    expect(await api.getRequests(10)).toEqual([]);
  });
});
