import { readFile, rm, writeFile } from 'node:fs/promises';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATE_VERSION } from '../../src/state/format.ts';
import { StateStore, StateWriteError } from '../../src/state/store.ts';
import { tempDir } from '../helpers/tmp.ts';

let tmp: Awaited<ReturnType<typeof tempDir>>;
beforeEach(async () => {
  tmp = await tempDir();
});
afterEach(async () => {
  await tmp.cleanup();
});

const logger = pino({ level: 'silent' });
const API = 'http://127.0.0.1:8080/';

/** Loads `text` as the state file, with the warnings it logs. */
async function loadText(text: string, api: string | undefined) {
  const file = await tmp.write('state.json', text);
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
  return { state: await StateStore.load(file, log, api), warnings: warnings.join('') };
}

describe('the state file', () => {
  it('groups environments by record, in a stable order, fingerprints beside their names, and reads back the same', async () => {
    const file = tmp.path('state.json');
    const state = await StateStore.load(file, logger, API);
    const LARGEST = Number.MAX_SAFE_INTEGER;
    const stuck = { desired: '["K8S","a",true,["pci"]]', observed: '["K8S","b",null,null]' };
    state.set('acme', {
      prod: { include_scaling: true, policies: ['baseline', 'pci'], fingerprint: LARGEST },
      dev: { include_scaling: false, policies: [], fingerprint: 1 },
      qa: { include_scaling: false, policies: [] },
      stuck: { include_scaling: true, policies: ['pci'], notConverged: stuck },
    });
    state.set('beta', { x: { include_scaling: true, policies: ['baseline', 'pci'] } });
    await state.save();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      version: STATE_VERSION,
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
            policies: ['baseline', 'pci'],
            environments: ['prod'],
            fingerprints: [LARGEST],
          },
          {
            include_scaling: true,
            policies: ['pci'],
            not_converged: stuck,
            environments: ['stuck'],
          },
        ],
        beta: [{ include_scaling: true, policies: ['baseline', 'pci'], environments: ['x'] }],
      },
    });
    const again = await StateStore.load(file, logger, API);
    for (const org of ['acme', 'beta'])
      expect({ ...again.get(org) }).toEqual({ ...state.get(org) });
    expect(again.get('acme')['qa']).toEqual({ include_scaling: false, policies: [] });
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

  it('looks records up as get() reads them, from groups in any order of names, a name special to objects included', async () => {
    // Names out of order, "b" in two groups (the last one counts), fingerprints beside them.
    // Written as text: in a JS object literal, `__proto__` would set the prototype, not a key.
    const { state } = await loadText(
      `{"version": 3, "orgs": {"acme": [` +
        `{"include_scaling": true, "policies": [], "environments": ["z", "b", "m"], "fingerprints": [15, null, 1]},` +
        `{"include_scaling": false, "policies": ["pci"], "environments": ["c", "__proto__", "b"]}]}}`,
      API,
    );
    const lookup = state.lookup('acme');
    const records = state.get('acme');
    for (const name of ['__proto__', 'b', 'c', 'm', 'z', 'nope', '', 'toString']) {
      expect(lookup(name), name).toEqual(records[name]);
    }
    expect(Object.hasOwn(records, '__proto__')).toBe(true);
    expect(lookup('b')).toEqual({ include_scaling: false, policies: ['pci'] });
    expect(lookup('z')).toEqual({ include_scaling: true, policies: [], fingerprint: 15 });
    expect(lookup('m')?.fingerprint).toBe(1);
    expect(lookup('toString')).toBeUndefined();
    expect(state.lookup('other')('a')).toBeUndefined();
  });

  const group = (extra: object) =>
    JSON.stringify({
      version: 3,
      orgs: { acme: [{ include_scaling: true, policies: [], environments: ['a', 'b'], ...extra }] },
    });
  it.each([
    ['garbage', 'this is not json {{{', 'state file is not valid JSON'],
    ['truncated', group({}).slice(0, -10), 'state file is not valid JSON'],
    [
      'of a future version',
      '{"version": 99, "orgs": {}}',
      'state file has version 99, newer than this envsync understands (3)',
    ],
    ['null', 'null', 'unexpected shape'],
    ['a list', '[]', 'unexpected shape'],
    ['without a version', '{"orgs": {}}', 'unexpected shape'],
    ['a version as text', '{"version": "3", "orgs": {}}', 'unexpected shape'],
    ['orgs as a list', '{"version": 3, "orgs": []}', 'unexpected shape'],
    ['an address that is not text', '{"version": 3, "api": 5, "orgs": {}}', 'unexpected shape'],
    ['an org that is not a list', '{"version": 3, "orgs": {"acme": {}}}', 'unexpected shape'],
    ['a group without its environments', group({ environments: undefined }), 'unexpected shape'],
    ['a name that is not text', group({ environments: ['a', 7] }), 'unexpected shape'],
    ['a value of the wrong kind', group({ include_scaling: 'yes' }), 'unexpected shape'],
    ['a not_converged mark without text', group({ not_converged: {} }), 'unexpected shape'],
    ['one fingerprint too few', group({ fingerprints: [1] }), 'one fingerprint per environment'],
    ['a fingerprint as text', group({ fingerprints: ['1', null] }), 'unexpected shape'],
    ['a negative fingerprint', group({ fingerprints: [-1, null] }), 'unexpected shape'],
    ['a fraction', group({ fingerprints: [1.5, null] }), 'unexpected shape'],
    ['more than 53 bits', group({ fingerprints: [2 ** 53, null] }), 'unexpected shape'],
    ['fingerprints not a list', group({ fingerprints: 1 }), 'unexpected shape'],
    [
      'written for another API address',
      '{"version": 3, "api": "https://other.example/", "orgs": {"acme": []}}',
      'state file was written for another API address',
    ],
  ])('a state file %s starts empty, with a warning saying so', async (_title, text, warning) => {
    const { state, warnings } = await loadText(text, API);
    expect(state.get('acme')).toEqual({});
    expect(warnings).toContain(warning);
    expect(warnings).toContain('starting empty (it will be rewritten)');
  });

  it.each([
    ['written for no address in particular', group({}), API],
    [
      'read without an address to check',
      group({}).replace('{', `{"api":"https://x.example/",`),
      undefined,
    ],
  ])('trusted: %s', async (_title, text, api) => {
    const { state, warnings } = await loadText(text, api);
    expect(warnings).toBe('');
    expect(state.get('acme')).toEqual({
      a: { include_scaling: true, policies: [] },
      b: { include_scaling: true, policies: [] },
    });
  });
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
    // An org the other writer's file no longer holds goes, unless this store changed it.
    await rm(file);
    const third = await StateStore.load(file, logger, API);
    third.set('gamma', {});
    await third.save();
    second.set('delta', {});
    await second.save();
    const orgs = JSON.parse(await readFile(file, 'utf8')) as { orgs: object };
    expect(Object.keys(orgs.orgs)).toEqual(['delta', 'gamma']);
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
    expect(state.writeError).toBe((failure as Error).message);
    // Every caller waiting on that write hears of it, the forced one too.
    await expect(state.save({ always: true })).rejects.toThrow(StateWriteError);
    await rm(tmp.path('blocker'));
    await state.save();
    expect(state.writeError).toBeUndefined();
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
});
