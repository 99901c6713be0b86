import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planMerge, sameFile, type FileIdentity } from '../../src/state/merge.ts';

const file: FileIdentity = { dev: 1, ino: 100, size: 2048, mtimeMs: 1_700_000_000_000 };

describe('sameFile: whether the state file must be read again before a write', () => {
  it.each<[string, FileIdentity | undefined, FileIdentity | undefined, boolean]>([
    ['the file last read or written', file, { ...file }, true],
    ['still no file', undefined, undefined, true],
    ['a file where there was none', file, undefined, false],
    ['no file where there was one', undefined, file, false],
    ['another device', { ...file, dev: 2 }, file, false],
    ['another inode (renamed into place)', { ...file, ino: 101 }, file, false],
    ['another size', { ...file, size: 2049 }, file, false],
    ['written again in place', { ...file, mtimeMs: file.mtimeMs + 1 }, file, false],
  ])('%s: %s', (_title, onDisk, known, same) => {
    expect(sameFile(onDisk, known)).toBe(same);
  });
});

describe("planMerge: whose records each org keeps when another writer's file is taken in", () => {
  it.each<[string, string[], string[], string[], { drop: string[]; take: string[] }]>([
    [
      'nothing changed here: all of theirs',
      ['a', 'b'],
      ['a', 'b'],
      [],
      { drop: [], take: ['a', 'b'] },
    ],
    ['an org they added is taken', ['a'], ['a', 'c'], ['a'], { drop: [], take: ['c'] }],
    ['an org they dropped goes', ['a', 'b'], ['a'], [], { drop: ['b'], take: ['a'] }],
    [
      'an org changed here stays, though they dropped it',
      ['a', 'b'],
      [],
      ['a'],
      { drop: ['b'], take: [] },
    ],
    ['an org changed here stays, though they hold it', ['a'], ['a'], ['a'], { drop: [], take: [] }],
    ['their file is empty, nothing changed here', ['a'], [], [], { drop: ['a'], take: [] }],
    ['nothing held here yet', [], ['x', 'y'], [], { drop: [], take: ['x', 'y'] }],
  ])('%s', (_title, held, theirs, mine, plan) => {
    expect(planMerge(held, theirs, (org) => mine.includes(org))).toEqual(plan);
  });

  it('afterwards: the orgs changed here as they are here, every other org as their file has it', () => {
    const orgs = fc.uniqueArray(fc.constantFrom<string>('a', 'b', 'c', 'd', 'e', 'f'));
    fc.assert(
      fc.property(orgs, orgs, orgs, (held, theirs, changed) => {
        const mine = changed.filter((org) => held.includes(org));
        const { drop, take } = planMerge(held, theirs, (org) => mine.includes(org));
        const after = new Map(held.map((org) => [org, 'here']));
        for (const org of drop) after.delete(org);
        for (const org of take) after.set(org, 'theirs');
        for (const org of mine) expect(after.get(org)).toBe('here');
        for (const org of theirs.filter((o) => !mine.includes(o))) {
          expect(after.get(org)).toBe('theirs');
        }
        expect([...after.keys()].sort()).toEqual([...new Set([...mine, ...theirs])].sort());
      }),
    );
  });
});
