/** `envsync run`'s settings, derived from daemon-table.ts: their shape, the shard and its checks. */
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  resolveDaemonSettings,
  type DaemonFlags,
  type DaemonSettings,
} from '../../src/config/daemon-settings.ts';
import { DAEMON_SETTINGS } from '../../src/config/daemon-table.ts';
import { resolveSetting } from '../../src/config/resolve.ts';

/** The rows read only through `shard` and `notify`. */
const FEEDING = [
  'shardCount',
  'shardIndex',
  'shardFromHostname',
  'notifyUrls',
  'notifyFormat',
  'notifySecretFile',
];

const resolve = (flags: DaemonFlags, env: NodeJS.ProcessEnv = {}, host = () => 'laptop') =>
  resolveDaemonSettings(flags, env, {}, host);

describe('the daemon settings', () => {
  it('hold every other row of the table under its id, resolved as the table says', () => {
    const flags = { interval: '1m', listen: ':1', emulator: true, 'public-url': 'https://a/' };
    const env = { ENVSYNC_SETTLE: '2s', ENVSYNC_WEBHOOK_SECRET_FILE: 'secret' };
    const settings: Record<string, unknown> = resolve(flags, env);
    const plain = Object.keys(DAEMON_SETTINGS).filter((id) => !FEEDING.includes(id));
    expect(Object.keys(settings).sort()).toEqual([...plain, 'shard', 'notify'].sort());
    for (const id of plain) {
      const setting = DAEMON_SETTINGS[id as keyof typeof DAEMON_SETTINGS];
      expect(settings[id], id).toEqual(resolveSetting(setting, { flags, env }));
    }
    expect(settings).toMatchObject({ intervalMs: 60_000, settleMs: 2000, emulator: true });
  });

  it('are typed by their parsers: a setting read under the wrong type fails tsc', () => {
    expectTypeOf<DaemonSettings['intervalMs']>().toEqualTypeOf<number>();
    expectTypeOf<DaemonSettings['listen']>().toEqualTypeOf<{ host: string; port: number }>();
    expectTypeOf<DaemonSettings['webhookSecretFile']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<DaemonSettings>().not.toHaveProperty('shardIndex');
    expectTypeOf<DaemonFlags['interval']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<DaemonFlags['notify-url']>().toEqualTypeOf<string[] | undefined>();
    const settings = resolve({});
    // @ts-expect-error: a duration is a number of milliseconds
    const text: string = settings.debounceMs;
    expect(text).toBe(200);
  });
});

describe('the shard', () => {
  it('none without sharding flags', () => {
    expect(resolve({}).shard).toBeUndefined();
  });

  it('from --shard-count and --shard-index, or from the environment', () => {
    expect(resolve({ 'shard-count': '3', 'shard-index': '2' }).shard).toEqual({
      index: 2,
      count: 3,
    });
    expect(resolve({}, { ENVSYNC_SHARD_COUNT: '2', ENVSYNC_SHARD_INDEX: '0' }).shard).toEqual({
      index: 0,
      count: 2,
    });
  });

  it("the index from a StatefulSet pod's hostname: $HOSTNAME, else the host's name", () => {
    const flags = { 'shard-count': '4', 'shard-from-hostname': true };
    expect(resolve(flags, { HOSTNAME: 'envsync-3' }).shard).toEqual({ index: 3, count: 4 });
    expect(resolve(flags, {}, () => 'envsync-1.envsync.default.svc').shard).toEqual({
      index: 1,
      count: 4,
    });
    // The hostname wins over an index given beside it.
    expect(resolve({ ...flags, 'shard-index': '0' }, { HOSTNAME: 'envsync-2' }).shard?.index).toBe(
      2,
    );
    expect(() => resolve(flags, { HOSTNAME: 'envsync' })).toThrow(
      '--shard-from-hostname: hostname "envsync" does not end in -<ordinal> (as a StatefulSet pod\'s does)',
    );
  });

  it('refuses half a shard and an index out of range', () => {
    const needsBoth =
      'sharding needs both --shard-count N and --shard-index I (or --shard-from-hostname)';
    expect(() => resolve({ 'shard-count': '3' })).toThrow(needsBoth);
    expect(() => resolve({ 'shard-index': '0' })).toThrow(needsBoth);
    expect(() => resolve({ 'shard-count': '3', 'shard-index': '3' })).toThrow(
      '--shard-index 3 must be below --shard-count 3',
    );
    expect(() => resolve({ 'shard-count': '0', 'shard-index': '0' })).toThrow(
      '--shard-index 0 must be below --shard-count 0',
    );
  });
});
