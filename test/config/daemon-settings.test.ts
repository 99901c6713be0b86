/** `envsync run`'s settings: every row under its id, and the shard and its checks. */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  DAEMON_SETTINGS,
  resolveDaemonSettings,
  type DaemonSettings,
} from '../../src/config/daemon-settings.ts';
import { resolveSetting, type Flags } from '../../src/config/setting.ts';

const resolve = (flags: Flags, env: NodeJS.ProcessEnv = {}, host = () => 'laptop') =>
  resolveDaemonSettings(flags, env, {}, host);

describe('the daemon settings', () => {
  it('hold every row of the table under its id, but those that only feed `shard` and `notify`', () => {
    const flags = { interval: '1m', listen: ':1', emulator: true, 'public-url': 'https://a/' };
    const env = { ENVSYNC_SETTLE: '2s', ENVSYNC_WEBHOOK_SECRET_FILE: 'secret' };
    const settings: Record<string, unknown> = resolve(flags, env);
    const feeding = /^(shard|notify|github)/;
    const plain = Object.keys(DAEMON_SETTINGS).filter((id) => !feeding.test(id));
    expect(Object.keys(settings).sort()).toEqual([...plain, 'shard', 'notify'].sort());
    for (const id of plain) {
      const setting = DAEMON_SETTINGS[id as keyof typeof DAEMON_SETTINGS];
      expect(settings[id], id).toEqual(resolveSetting(setting, { flags, env }));
    }
    expect(settings).toMatchObject({ intervalMs: 60_000, settleMs: 2000, emulator: true });
    expectTypeOf<DaemonSettings['listen']>().toEqualTypeOf<{ host: string; port: number }>();
    expectTypeOf<DaemonSettings['webhookSecretFile']>().toEqualTypeOf<string | undefined>();
  });
});

describe('the shard', () => {
  it('none without sharding flags; else from the flags or the environment', () => {
    expect(resolve({}).shard).toBeUndefined();
    expect(resolve({ 'shard-count': '3', 'shard-index': '2' }).shard).toEqual({
      index: 2,
      count: 3,
    });
    const env = { ENVSYNC_SHARD_COUNT: '2', ENVSYNC_SHARD_INDEX: '0' };
    expect(resolve({}, env).shard).toEqual({ index: 0, count: 2 });
  });

  it("the index from a StatefulSet pod's hostname: $HOSTNAME, else the host's name", () => {
    const flags = { 'shard-count': '4', 'shard-from-hostname': true };
    expect(resolve(flags, { HOSTNAME: 'envsync-3' }).shard).toEqual({ index: 3, count: 4 });
    const host = () => 'envsync-1.envsync.default.svc';
    expect(resolve(flags, {}, host).shard).toEqual({ index: 1, count: 4 });
    // The hostname wins over an index given beside it.
    const both = { ...flags, 'shard-index': '0' };
    expect(resolve(both, { HOSTNAME: 'envsync-2' }).shard?.index).toBe(2);
    expect(() => resolve(flags, { HOSTNAME: 'envsync' })).toThrow(
      '--shard-from-hostname: hostname "envsync" does not end in -<ordinal> (as a StatefulSet pod\'s does)',
    );
  });

  it.each([
    [
      { 'shard-count': '3' },
      'sharding needs both --shard-count N and --shard-index I (or --shard-from-hostname)',
    ],
    [{ 'shard-index': '0' }, 'sharding needs both --shard-count N and --shard-index I'],
    [{ 'shard-count': '3', 'shard-index': '3' }, '--shard-index 3 must be below --shard-count 3'],
    [{ 'shard-count': '0', 'shard-index': '0' }, '--shard-index 0 must be below --shard-count 0'],
  ])('refuses half a shard and an index out of range: %j', (flags, message) => {
    expect(() => resolve(flags)).toThrow(message);
  });
});
