/**
 * Rename and prune in the pure planner: which environment a `renamed_from` renames, what `prune`
 * archives (only what envsync owns), the ownership tag each change sets, the guard's decision,
 * and what the records keep across an apply.
 */
import { describe, expect, it } from 'vitest';
import type { AppliedRecord, DesiredEnvironment } from '../../src/core/model.ts';
import { settleApply } from '../../src/core/outcome.ts';
import {
  archiveGuard,
  DEFAULT_MAX_ARCHIVE,
  ownedBy,
  OWNER_TAG_KEY,
  ownerTagValue,
} from '../../src/core/ownership.ts';
import { planOrg, renameConflicts } from '../../src/core/plan.ts';
import { hasPendingChanges, orgReportFromPlan, summarize } from '../../src/core/report.ts';
import { desired, observedFull, runReport } from '../helpers/builders.ts';

const OWNER = { [OWNER_TAG_KEY]: ownerTagValue('acme') };
const listed = (...names: string[]) => names.map((name) => observedFull(name));

describe('rename', () => {
  const renamed = (more = {}) => desired('web-new', { renamedFrom: 'web', ...more });
  const plan = (want: DesiredEnvironment[], names: string[], records = {}) =>
    planOrg('acme', want, listed(...names), records, 'kosli');

  it('renames when the listing has the old name and not the new one, with the other changes', () => {
    const moved = plan([renamed({ description: 'moved' })], ['web', 'db']);
    expect(moved.changes).toMatchObject([
      {
        action: 'rename',
        name: 'web-new',
        renamedFrom: 'web',
        fields: { description: { from: 'web environment', to: 'moved' } },
        requests: { rename: 'web', put: false, patch: ['description'] },
      },
    ]);
    // The old name is the renamed environment, not an unmanaged one.
    expect(moved.unmanaged).toEqual(['db']);
    // Nothing else differs: a rename alone, no PUT, counted as a rename.
    const alone = plan([renamed({ description: 'web environment' })], ['web']);
    expect(alone.changes).toMatchObject([
      { action: 'rename', fields: {}, requests: { rename: 'web', put: false } },
    ]);
    expect(summarize([orgReportFromPlan(alone, new Map())]).rename).toBe(1);
  });

  it('is a create that names the old name when neither is listed, and nothing once done', () => {
    const [create] = plan([renamed()], []).changes;
    expect(create).toMatchObject({ action: 'create', name: 'web-new', renameNotFound: 'web' });
    expect(create?.requests).toEqual({ put: true });
    expect(plan([renamed()], ['web-new'])).toMatchObject({ changes: [], unchanged: ['web-new'] });
  });

  it('names a conflict when the service has both names', () => {
    const want = [renamed(), desired('db')];
    expect(renameConflicts(want, listed('web', 'web-new'))).toEqual([
      { env: want[0], from: 'web' },
    ]);
    expect(renameConflicts(want, listed('web'))).toEqual([]);
  });

  it('moves the record of the old name to the new one once the rename landed', () => {
    const record: AppliedRecord = { include_scaling: false, fingerprint: 1 };
    const moved = plan([renamed({ description: 'moved' })], ['web'], { web: record });
    const after = new Map([['web-new', observedFull('web-new', { description: 'moved' })]]);
    const outcomes = new Map([['web-new', { result: 'applied' as const }]]);
    const settled = settleApply(moved, { web: record }, outcomes, after);
    expect(Object.keys(settled.records)).toEqual(['web-new']);
    expect(settled.notConverged).toEqual([]);
  });
});

describe('prune', () => {
  const have = [
    ...listed('app'),
    observedFull('by-tag', { tags: { ...OWNER } }),
    ...listed('by-state'),
    observedFull('foreign-tag', { tags: { [OWNER_TAG_KEY]: ownerTagValue('other') } }),
    ...listed('hand-made'),
  ];
  const records: Record<string, AppliedRecord> = { 'by-state': { fingerprint: 7 } };
  const prune = (want: DesiredEnvironment[], observed = have) =>
    planOrg('acme', want, observed, records, 'kosli', { prune: true });

  it('archives only what envsync owns, counted as pending; without prune, nothing is archived', () => {
    const plan = prune([desired('app')]);
    expect(plan.archives).toEqual([
      { name: 'by-state', ownedBy: ['state'] },
      { name: 'by-tag', ownedBy: ['tag'] },
    ]);
    expect(plan.unmanaged).toEqual(['foreign-tag', 'hand-made']);
    const run = runReport(true, [orgReportFromPlan(plan, new Map())]);
    expect(run.summary).toMatchObject({ archive: 2, unmanaged: 2 });
    expect(hasPendingChanges(run)).toBe(true);
    const off = planOrg('acme', [desired('app')], have, records, 'kosli');
    expect(off.archives).toBeUndefined();
    expect(off.unmanaged).toEqual(['by-state', 'by-tag', 'foreign-tag', 'hand-made']);
  });

  it('sets the ownership tag with every change it sends, and not on what is unchanged', () => {
    const want = [desired('app'), desired('new'), desired('moved', { description: 'x' })];
    const plan = prune(want, listed('app', 'moved'));
    expect(plan.unchanged).toEqual(['app']);
    expect(plan.changes.map((c) => [c.name, c.requests.tags])).toEqual([
      ['moved', { set: OWNER, remove: [] }],
      ['new', { set: OWNER, remove: [] }],
    ]);
  });

  it('keeps the ownership tag out of a declared tags map, and never removes it', () => {
    const want = [desired('app', { tags: { team: 'web' } })];
    const plan = prune(want, [observedFull('app', { tags: { ...OWNER, team: 'web', old: 'x' } })]);
    expect(plan.changes).toMatchObject([
      {
        action: 'update',
        fields: { tags: { from: { old: 'x', team: 'web' }, to: { team: 'web' } } },
        requests: { put: false, tags: { set: {}, remove: ['old'] } },
      },
    ]);
    // Once only the ownership tag is beyond the declared map, nothing is left to do.
    const done = prune(want, [observedFull('app', { tags: { ...OWNER, team: 'web' } })]);
    expect(done.changes).toEqual([]);
  });

  it('keeps the records of undeclared environments until they are archived', () => {
    const plan = prune([desired('app')]);
    const settle = (name: string, more = {}) => {
      const archived = new Map([[name, { result: 'applied' as const, ownedBy: [] }]]);
      const settled = settleApply(plan, { ...records, ...more }, new Map(), undefined, archived);
      return Object.keys(settled.records);
    };
    // by-state is not archived yet: its record stays; gone is not listed.
    expect(settle('by-tag', { gone: { fingerprint: 1 } })).toEqual(['by-state']);
    expect(settle('by-state')).toEqual([]);
  });
});

describe('ownership and the guard', () => {
  const foreign = { [OWNER_TAG_KEY]: 'envsync/other' };
  it.each([
    [OWNER, { fingerprint: 1 }, ['state', 'tag']],
    [OWNER, undefined, ['tag']],
    [foreign, undefined, []],
    [foreign, {}, ['state']],
    [foreign, { fingerprint: 1, seen: true }, []],
    [{}, undefined, []],
    [{ team: 'web' }, undefined, []],
  ] as const)('tags %j with record %j are owned by %j', (tags, record, expected) => {
    expect(ownedBy('acme', observedFull('x', { tags }), record)).toEqual(expected);
  });

  it('lets up to --max-archive through, refuses more with the count and the flag', () => {
    expect(DEFAULT_MAX_ARCHIVE).toBe(5);
    expect(archiveGuard('acme', 5, 5)).toBeUndefined();
    expect(archiveGuard('acme', 6, 5)).toMatch(
      /^org acme would archive 6 environments in one pass, more than --max-archive 5: none is sent/,
    );
    expect(archiveGuard('acme', 0, 0)).toBeUndefined();
    expect(archiveGuard('acme', 1, 0)).toContain('--max-archive 0');
    // A reviewed saved plan has no limit.
    expect(archiveGuard('acme', 600, undefined)).toBeUndefined();
    // A file that names no org may declare any of them: none, even reviewed, and even one.
    expect(archiveGuard('acme', 1, 5, 1)).toMatch(
      /^1 manifest file problem\(s\) keep some files from saying which org they declare, and one of them may declare what org acme would archive: none is archived until every file reads/,
    );
    expect(archiveGuard('acme', 1, undefined, 2)).toContain('none is archived');
    expect(archiveGuard('acme', 0, 5, 3)).toBeUndefined();
  });
});
