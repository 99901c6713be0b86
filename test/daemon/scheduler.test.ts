import { describe, expect, it } from 'vitest';
import { shardOf } from '../../src/core/shard.ts';
import { PassScheduler } from '../../src/daemon/scheduler.ts';
import { manualClock } from '../helpers/clock.ts';

describe('PassScheduler', () => {
  it('coalesces a burst of debounced triggers into one pass, once the debounce passed quietly', async () => {
    const clock = manualClock(1_000);
    const passes: (readonly string[])[] = [];
    const scheduler = new PassScheduler(async (reasons) => void passes.push(reasons), 30, clock);
    for (let i = 0; i < 40; i++) scheduler.debounced(`write ${i % 3}`);
    await clock.advance(29);
    expect(passes).toEqual([]);
    scheduler.debounced('write 0');
    await clock.advance(29);
    expect(passes).toEqual([]);
    await clock.advance(1);
    await scheduler.idle();
    expect(passes).toEqual([['write 0', 'write 1', 'write 2']]);
  });

  it('a trigger during a pass schedules exactly one more pass, never a pile', async () => {
    const clock = manualClock(1_000);
    let release: () => void = () => undefined;
    let running = 0;
    let peak = 0;
    const passes: (readonly string[])[] = [];
    const scheduler = new PassScheduler(
      async (reasons) => {
        running++;
        peak = Math.max(peak, running);
        passes.push(reasons);
        if (passes.length === 1) await new Promise<void>((resolve) => (release = resolve));
        running--;
      },
      10,
      clock,
    );
    scheduler.now('first');
    expect(scheduler.passStartedAt).toBe(1_000);
    for (let i = 0; i < 10; i++) scheduler.now(`during ${i}`);
    scheduler.debounced('file');
    await clock.advance(50);
    expect(passes).toHaveLength(1);
    release();
    await scheduler.idle();
    expect(scheduler.passStartedAt).toBeUndefined();
    expect(passes).toHaveLength(2);
    expect(passes[1]).toContain('during 9');
    expect(passes[1]).toContain('file');
    expect(peak).toBe(1);
  });

  it('stop waits for the pass in flight and refuses new triggers', async () => {
    const clock = manualClock(1_000);
    let finished = false;
    const scheduler = new PassScheduler(
      async () => {
        await clock.sleep(50);
        finished = true;
      },
      10,
      clock,
    );
    scheduler.now('one');
    const stopped = scheduler.stop();
    await clock.advance(49);
    expect(finished).toBe(false);
    await clock.advance(1);
    await stopped;
    expect(finished).toBe(true);
    scheduler.now('after stop');
    expect([scheduler.running, clock.pending]).toEqual([false, 0]);
  });
});

describe('sharding by rendezvous hashing', () => {
  const orgs = Array.from({ length: 2000 }, (_, i) => `org-${i}`);

  it('puts every org on exactly one shard, spread evenly', () => {
    for (const count of [1, 2, 3, 5, 8]) {
      const sizes = Array.from({ length: count }, () => 0);
      const shards = orgs.map((org) => shardOf(org, count));
      expect(
        shards.filter((shard) => !(Number.isInteger(shard) && shard >= 0 && shard < count)),
      ).toEqual([]);
      for (const shard of shards) sizes[shard] = (sizes[shard] ?? 0) + 1;
      const expected = orgs.length / count;
      for (const size of sizes) expect(Math.abs(size - expected)).toBeLessThan(expected * 0.15);
    }
  });

  it('going from N to N+1 replicas moves about 1/(N+1) of the orgs, all to the new one', () => {
    for (const n of [1, 2, 4, 7]) {
      const moved = orgs.filter((org) => shardOf(org, n) !== shardOf(org, n + 1));
      expect(moved.every((org) => shardOf(org, n + 1) === n)).toBe(true);
      const fraction = moved.length / orgs.length;
      expect(fraction).toBeGreaterThan((1 / (n + 1)) * 0.8);
      expect(fraction).toBeLessThan((1 / (n + 1)) * 1.2);
    }
  });
});
