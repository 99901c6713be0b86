import { readFile, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATE_VERSION } from '../../src/state/codec.ts';
import { StateLockTimeoutError, StateStore, StateWriteError } from '../../src/state/store.ts';
import { manualClock } from '../helpers/clock.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitFor } from '../helpers/wait.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const logger = pino({ level: 'silent' });
const API = 'http://127.0.0.1:8080/';

describe('the state file', () => {
  it('groups environments by record (version 2 and later), in a stable order, and reads back the same', async () => {
    const file = tmp.path('state.json');
    const state = await StateStore.load(file, logger, API);
    state.set('acme', {
      prod: { include_scaling: true, policies: ['baseline', 'pci'] },
      dev: { include_scaling: false, policies: [] },
      qa: { include_scaling: false, policies: [] },
      stuck: {
        include_scaling: true,
        policies: ['pci'],
        notConverged: { desired: '["K8S","a",true,["pci"]]', observed: '["K8S","b",null,null]' },
      },
    });
    state.set('beta', { x: { include_scaling: true, policies: ['baseline', 'pci'] } });
    await state.save();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      version: STATE_VERSION,
      api: API,
      orgs: {
        acme: [
          { include_scaling: false, policies: [], environments: ['dev', 'qa'] },
          { include_scaling: true, policies: ['baseline', 'pci'], environments: ['prod'] },
          {
            include_scaling: true,
            policies: ['pci'],
            not_converged: {
              desired: '["K8S","a",true,["pci"]]',
              observed: '["K8S","b",null,null]',
            },
            environments: ['stuck'],
          },
        ],
        beta: [{ include_scaling: true, policies: ['baseline', 'pci'], environments: ['x'] }],
      },
    });
    const again = await StateStore.load(file, logger, API);
    expect({ ...again.get('acme') }).toEqual({ ...state.get('acme') });
    expect({ ...again.get('beta') }).toEqual({ ...state.get('beta') });
    // Equal records are one object in memory, whichever org they belong to.
    expect(again.get('beta')['x']).toBe(again.get('acme')['prod']);
  });

  it('keeps records apart whose policies only join to the same text', async () => {
    const file = tmp.path('state.json');
    const state = await StateStore.load(file, logger, API);
    state.set('acme', {
      x: { include_scaling: false, policies: ['a\u0000b'] },
      y: { include_scaling: false, policies: ['a', 'b'] },
      z: { include_scaling: false, policies: ['a,b'] },
    });
    await state.save();
    const again = (await StateStore.load(file, logger, API)).get('acme');
    expect(again['x']?.policies).toEqual(['a\u0000b']);
    expect(again['y']?.policies).toEqual(['a', 'b']);
    expect(again['z']?.policies).toEqual(['a,b']);
  });

  it('looks records up as get() reads them, from groups in any order of names', async () => {
    const file = tmp.path('state.json');
    // Names out of order, and "b" in two groups (the last one counts, as for get()).
    await writeFile(
      file,
      JSON.stringify({
        version: 2,
        orgs: {
          acme: [
            { include_scaling: true, policies: [], environments: ['z', 'b', 'm'] },
            { include_scaling: false, policies: ['pci'], environments: ['c', 'a', 'b'] },
          ],
        },
      }),
    );
    const state = await StateStore.load(file, logger, API);
    const lookup = state.lookup('acme');
    const records = state.get('acme');
    for (const name of ['a', 'b', 'c', 'm', 'z', 'nope', '']) {
      expect(lookup(name), name).toBe(records[name]);
    }
    expect(lookup('b')?.policies).toEqual(['pci']);
    expect(lookup('z')?.include_scaling).toBe(true);
    expect(state.lookup('other')('a')).toBeUndefined();
  });

  it("keeps each environment's fingerprint beside its name (version 3), grouped by record as before", async () => {
    const file = tmp.path('state.json');
    const state = await StateStore.load(file, logger, API);
    const LARGEST = Number.MAX_SAFE_INTEGER;
    state.set('acme', {
      dev: { include_scaling: false, policies: [], fingerprint: 1 },
      qa: { include_scaling: false, policies: [] },
      prod: { include_scaling: true, policies: ['pci'], fingerprint: LARGEST },
      stage: { include_scaling: true, policies: ['pci'], fingerprint: 0xabc },
      old: { include_scaling: true, policies: [] },
    });
    await state.save();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      version: 3,
      api: API,
      orgs: {
        acme: [
          {
            include_scaling: false,
            policies: [],
            environments: ['dev', 'qa'],
            fingerprints: [1, null],
          },
          {
            include_scaling: true,
            policies: ['pci'],
            environments: ['prod', 'stage'],
            fingerprints: [LARGEST, 0xabc],
          },
          { include_scaling: true, policies: [], environments: ['old'] },
        ],
      },
    });
    const again = await StateStore.load(file, logger, API);
    const records = again.get('acme');
    expect({ ...records }).toEqual({ ...state.get('acme') });
    expect(records['prod']).toEqual({
      include_scaling: true,
      policies: ['pci'],
      fingerprint: LARGEST,
    });
    expect(records['qa']).toEqual({ include_scaling: false, policies: [] });
    const lookup = again.lookup('acme');
    for (const name of ['dev', 'qa', 'prod', 'stage', 'old', 'nope']) {
      expect(lookup(name), name).toEqual(records[name]);
    }
  });

  it('reads a version 2 file: its records have no fingerprint, which reads as unknown', async () => {
    const file = tmp.path('state.json');
    await writeFile(
      file,
      JSON.stringify({
        version: 2,
        orgs: {
          acme: [
            // A key version 2 never had is not read as one.
            {
              include_scaling: true,
              policies: [],
              environments: ['a'],
              fingerprints: [1],
            },
          ],
        },
      }),
    );
    const state = await StateStore.load(file, logger, API);
    expect(state.lookup('acme')('a')).toEqual({ include_scaling: true, policies: [] });
    expect(state.get('acme')['a']?.fingerprint).toBeUndefined();
  });

  it('sorts the names of a version 3 group written out of order with their fingerprints', async () => {
    const file = tmp.path('state.json');
    await writeFile(
      file,
      JSON.stringify({
        version: 3,
        orgs: {
          acme: [
            {
              include_scaling: false,
              policies: [],
              environments: ['z', 'a', 'm'],
              fingerprints: [15, null, 1],
            },
          ],
        },
      }),
    );
    const lookup = (await StateStore.load(file, logger, API)).lookup('acme');
    expect(lookup('z')?.fingerprint).toBe(15);
    expect(lookup('a')?.fingerprint).toBeUndefined();
    expect(lookup('m')?.fingerprint).toBe(1);
  });

  it.each([
    ['one fingerprint too few', [1]],
    ['a text', ['1', null]],
    ['a negative number', [-1, null]],
    ['a fraction', [1.5, null]],
    ['more than 53 bits', [2 ** 53, null]],
    ['not a list', 1],
  ])('a version 3 group with fingerprints %s starts empty', async (_title, fingerprints) => {
    const file = tmp.path('state.json');
    const group = { include_scaling: true, policies: [], environments: ['a', 'b'], fingerprints };
    await writeFile(file, JSON.stringify({ version: 3, orgs: { acme: [group] } }));
    const warnings: string[] = [];
    const state = await StateStore.load(
      file,
      pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) }),
      API,
    );
    expect(state.get('acme')).toEqual({});
    expect(warnings.join('')).toContain('malformed record');
  });

  it('reads a version 1 file (one object per environment) and rewrites it as the current version', async () => {
    const file = tmp.path('state.json');
    // Written as text: in a JS object literal, `__proto__` would set the prototype, not a key.
    await writeFile(
      file,
      '{"version": 1, "orgs": {"acme": {"prod": {"include_scaling": true, "policies": ["pci"]},' +
        ' "__proto__": {"include_scaling": false, "policies": []}}}}',
    );
    const state = await StateStore.load(file, logger, API);
    expect(state.get('acme')['prod']).toEqual({ include_scaling: true, policies: ['pci'] });
    // A name that is special to objects is only a name here.
    expect(Object.hasOwn(state.get('acme'), '__proto__')).toBe(true);
    state.set('acme', state.get('acme'));
    await state.save();
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({
      version: STATE_VERSION,
      orgs: {
        acme: [
          { include_scaling: false, policies: [], environments: ['__proto__'] },
          { include_scaling: true, policies: ['pci'], environments: ['prod'] },
        ],
      },
    });
  });

  it.each([
    ['a group without environments', [{ include_scaling: true, policies: [] }]],
    [
      'a group with a non-string name',
      [{ include_scaling: true, policies: [], environments: [1] }],
    ],
    ['a group with a bad record', [{ include_scaling: 'no', policies: [], environments: ['a'] }]],
    ['an org that is not a list', { a: { include_scaling: true, policies: [] } }],
  ])('a version 2 file with %s starts empty', async (_title, org) => {
    const file = tmp.path('state.json');
    await writeFile(file, JSON.stringify({ version: 2, orgs: { acme: org } }));
    const warnings: string[] = [];
    const state = await StateStore.load(
      file,
      pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) }),
      API,
    );
    expect(state.get('acme')).toEqual({});
    expect(warnings.join('')).toMatch(/malformed record|unexpected shape/);
  });

  it.each([
    ['garbage', 'this is not json {{{', 'not valid JSON'],
    ['truncated', '{"version": 1, "orgs": {"alpha": {"env-1": {"include_sc', 'not valid JSON'],
    ['of a future version', '{"version": 99, "orgs": {}}', 'newer than this envsync understands'],
    ['of the wrong shape', '{"version": 1, "orgs": []}', 'unexpected shape'],
    [
      'a version 1 file whose org is not a mapping',
      '{"version": 1, "orgs": {"alpha": [1]}}',
      'unexpected shape',
    ],
    [
      'a version 1 file with a malformed record',
      '{"version": 1, "orgs": {"alpha": {"env-1": {"include_scaling": "yes", "policies": []}}}}',
      'malformed record',
    ],
  ])(
    'a state file that is %s starts empty, with a warning saying so',
    async (_title, content, warning) => {
      const file = tmp.path('state.json');
      await writeFile(file, content);
      const warnings: string[] = [];
      const state = await StateStore.load(
        file,
        pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) }),
        API,
      );
      expect(state.get('alpha')).toEqual({});
      expect(warnings.join('')).toContain(warning);
    },
  );
});

describe('writing the state file', () => {
  it('merges: a store writes only the orgs it changed, and keeps what another writer saved of the others', async () => {
    const file = tmp.path('state.json');
    const first = await StateStore.load(file, logger, API);
    const second = await StateStore.load(file, logger, API);
    first.set('acme', { prod: { include_scaling: true, policies: ['pci'] } });
    second.set('beta', { web: { include_scaling: false, policies: [] } });
    await first.save();
    // The second store loaded before the first wrote: a plain rewrite would drop acme.
    await second.save();
    const again = await StateStore.load(file, logger, API);
    expect(again.get('acme')).toEqual({ prod: { include_scaling: true, policies: ['pci'] } });
    expect(again.get('beta')).toEqual({ web: { include_scaling: false, policies: [] } });
    // The other writer's records are read into the store too, for its next plans.
    expect(second.get('acme')).toEqual({ prod: { include_scaling: true, policies: ['pci'] } });
    // And an org the second store changes again is its own, whatever the file says.
    first.set('beta', { web: { include_scaling: true, policies: ['x'] } });
    await first.save();
    second.set('beta', { web: { include_scaling: false, policies: ['y'] } });
    await second.save();
    expect((await StateStore.load(file, logger, API)).get('beta')).toEqual({
      web: { include_scaling: false, policies: ['y'] },
    });
  });

  it('a write that fails rejects with a StateWriteError naming the file and what to do; the changes stay pending and the next save writes them', async () => {
    await writeFile(tmp.path('blocker'), 'a file where a directory belongs');
    const file = tmp.path('blocker', 'state.json');
    const state = await StateStore.load(file, logger, API);
    state.set('acme', { prod: { include_scaling: true, policies: [] } });
    const failure = await state.save().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StateWriteError);
    expect((failure as StateWriteError).file).toBe(file);
    expect((failure as Error).message).toContain(`cannot write the state file ${file}`);
    expect((failure as Error).message).toContain('fix the path given to --state');
    // Every caller waiting on that write hears of it, the forced one too.
    await expect(state.save({ always: true })).rejects.toThrow(StateWriteError);
    await rm(tmp.path('blocker'));
    await state.save();
    expect((await StateStore.load(file, logger, API)).get('acme')).toEqual({
      prod: { include_scaling: true, policies: [] },
    });
  });

  it('coalesces: many saves at once all resolve, with everything written, and the lock is released', async () => {
    const file = tmp.path('state.json');
    const state = await StateStore.load(file, logger, API);
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        state.set(`org-${i}`, { env: { include_scaling: i % 2 === 0, policies: [] } });
        await state.save();
      }),
    );
    const again = await StateStore.load(file, logger, API);
    for (let i = 0; i < 20; i++) {
      expect(again.get(`org-${i}`)).toEqual({
        env: { include_scaling: i % 2 === 0, policies: [] },
      });
    }
    await expect(readFile(`${file}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it('two stores of one file in one process take turns (the lock is per process too)', async () => {
    const file = tmp.path('state.json');
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => StateStore.load(file, logger, API)),
    );
    await Promise.all(
      stores.map(async (store, i) => {
        for (let round = 0; round < 5; round++) {
          store.set(`org-${i}`, { env: { include_scaling: round % 2 === 0, policies: [] } });
          await store.save();
        }
      }),
    );
    const again = await StateStore.load(file, logger, API);
    for (let i = 0; i < 4; i++) {
      expect(again.get(`org-${i}`)).toEqual({ env: { include_scaling: true, policies: [] } });
    }
  });

  it('a lock held by a live process on this host makes a save wait, then fail with a StateLockTimeoutError', async () => {
    const file = tmp.path('state.json');
    await writeFile(
      `${file}.lock`,
      JSON.stringify({ pid: process.ppid, hostname: hostname(), startedAt: 'then' }),
    );
    const state = await StateStore.load(file, logger, API, { lockTimeoutMs: 100 });
    state.set('acme', {});
    const failure = await state.save().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(StateLockTimeoutError);
    expect((failure as Error).message).toContain(
      `locked by another envsync writer (pid ${process.ppid} on host ${hostname()}, since then)`,
    );
    expect((failure as Error).message).toContain(`delete ${file}.lock`);
  });

  it("waits for another writer's lock on the store's clock: it gives up once that clock passes the timeout", async () => {
    const file = tmp.path('state.json');
    await writeFile(
      `${file}.lock`,
      JSON.stringify({ pid: process.ppid, hostname: hostname(), startedAt: 'then' }),
    );
    const clock = manualClock();
    const state = await StateStore.load(file, logger, API, { lockTimeoutMs: 600_000, clock });
    state.set('acme', {});
    let outcome: unknown;
    void state.save().then(
      () => (outcome = 'saved'),
      (error: unknown) => (outcome = error),
    );
    // Ten minutes of the clock, in steps: each lets the waiting writer poll the lock once more.
    for (let step = 0; step < 6; step++) {
      await waitFor('the writer to wait on the clock', () => clock.pending > 0);
      expect(outcome).toBeUndefined();
      await clock.advance(100_000);
    }
    await waitFor('the save to give up', () => outcome !== undefined);
    expect(outcome).toBeInstanceOf(StateLockTimeoutError);
    expect((outcome as Error).message).toContain('waited 600s for it');
  });
});
