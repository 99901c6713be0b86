import { describe, expect, it } from 'vitest';
import { RequestGate } from '../../src/api/gate.ts';
import { readListing } from '../../src/api/listing.ts';
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

describe('readListing (tolerant reader)', () => {
  it('reads the spec shape', async () => {
    expect(
      readListing({ env: [{ org: 'a', name: 'x', type: 'K8S', description: 'd' }] }, 'a'),
    ).toEqual({
      unnamed: 0,
      shape: 'env',
      environments: [
        {
          name: 'x',
          type: 'K8S',
          description: 'd',
          include_scaling: undefined,
          policies: undefined,
          tags: undefined,
        },
      ],
    });
  });

  it('reads a bare array with extra fields, unknown types, and null as "none" for lists, "not shown" for flags', async () => {
    const page = readListing(
      [
        {
          name: 'x',
          type: 'mainframe',
          description: 'd',
          include_scaling: true,
          policies: null,
          included_environments: null,
          require_provenance: null,
          tags: { team: 'a' },
          last_modified_at: 1.5,
          last_reported_at: null,
          state: null,
        },
      ],
      'a',
    );
    expect(page.environments).toStrictEqual([
      {
        name: 'x',
        type: 'mainframe',
        description: 'd',
        include_scaling: true,
        policies: [],
        require_provenance: undefined,
        included_environments: [],
        tags: { team: 'a' },
      },
    ]);
    // Only a missing key means "not shown".
    const silent = readListing(
      [{ name: 'y', type: 'K8S', description: '', include_scaling: null }],
      'a',
    );
    expect(silent.environments[0]).toMatchObject({
      include_scaling: undefined,
      policies: undefined,
      included_environments: undefined,
    });
  });

  it('reads policies given as objects with a name as those names, and lists as sets', async () => {
    const page = readListing(
      [
        {
          name: 'l',
          type: 'logical',
          description: '',
          include_scaling: null,
          policies: [{ name: 'sox', id: 7 }, 'pci', { name: 'baseline' }],
          included_environments: ['b', 'a'],
        },
      ],
      'a',
    );
    expect(page.environments[0]).toMatchObject({
      include_scaling: undefined,
      policies: ['baseline', 'pci', 'sox'],
      included_environments: ['a', 'b'],
    });
    expect(() => readListing([{ name: 'l', type: 'S3', policies: [{ id: 7 }] }], 'a')).toThrow(
      /listing entry is malformed/,
    );
  });

  it('reads the paginated envelope and says what to fetch next', async () => {
    const page = readListing(
      {
        page: 1,
        per_page: 2,
        total_pages: 3,
        total_count: 5,
        environments: [{ name: 'x', type: 'S3', description: '' }],
        _links: {},
      },
      'a',
    );
    expect(page.paging).toEqual({ page: 1, perPage: 2, totalPages: 3, totalCount: 5 });
    expect(page.shape).toBe('envelope');
  });

  it.each([
    ['null', null],
    ['a string', 'OK'],
    ['an object of the wrong shape', { environment: [] }],
    ['an entry without a name', [{ type: 'K8S', description: '' }]],
    ['env that is not a list', { env: {} }],
  ])('refuses %s', async (_title, body) => {
    expect(() => readListing(body, 'a')).toThrow(/listing/);
  });
});
