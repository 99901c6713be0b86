import { describe, expect, it } from 'vitest';
import { RequestGate } from '../../src/api/gate.ts';
import { manualClock } from '../helpers/clock.ts';

describe('RequestGate', () => {
  it('never lets more than the limit through at once', async () => {
    const gate = new RequestGate(3, manualClock());
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        await gate.acquire();
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setImmediate(r));
        running--;
        gate.release();
      }),
    );
    expect(peak).toBe(3);
    expect(gate.inFlight).toBe(0);
  });

  it('a 429 pauses every worker until Retry-After and halves the limit once per pause', async () => {
    const clock = manualClock();
    const gate = new RequestGate(8, clock);
    gate.throttled(1000);
    gate.throttled(1000); // the same window: counted once
    expect(gate.limit).toBe(4);
    const starts: number[] = [];
    const workers = Array.from({ length: 6 }, async () => {
      await gate.acquire();
      starts.push(clock.now());
      await clock.sleep(10);
      gate.release();
    });
    await clock.advance(999);
    expect(starts).toEqual([]);
    await clock.advance(1);
    for (let t = 0; t < 200; t++) await clock.advance(10);
    await Promise.all(workers);
    expect(starts).toHaveLength(6);
    expect(Math.min(...starts)).toBe(1000);
    // Nothing was admitted before the 429, so the gate paces at pause / limit until told more.
    expect(starts.every((t, i) => i === 0 || t - (starts[i - 1] ?? 0) >= 125)).toBe(true);
  });

  it('after a 429, paces request starts to the rate the server admitted', async () => {
    const clock = manualClock();
    const gate = new RequestGate(8, clock);
    // Five successes in the first 100 ms, then a 429 asking for 900 ms: 5 per second.
    for (let i = 0; i < 5; i++) gate.succeeded();
    await clock.advance(100);
    gate.throttled(900);
    expect(gate.interval).toBe(200);
    const starts: number[] = [];
    const workers = Array.from({ length: 3 }, async () => {
      await gate.acquire();
      starts.push(clock.now());
      gate.release();
    });
    for (let t = 0; t < 20; t++) await clock.advance(100);
    await Promise.all(workers);
    expect(starts).toEqual([1000, 1200, 1400]);
  });

  it('grows back towards the configured concurrency on success', () => {
    const gate = new RequestGate(8, manualClock());
    gate.throttled(0);
    expect(gate.limit).toBe(4);
    for (let i = 0; i < 40; i++) gate.succeeded();
    expect(gate.limit).toBe(8);
  });

  it('an aborted waiter leaves the queue', async () => {
    const gate = new RequestGate(1, manualClock());
    await gate.acquire();
    const controller = new AbortController();
    const waiting = gate.acquire(controller.signal);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    gate.release();
    expect(gate.inFlight).toBe(0);
  });
});
