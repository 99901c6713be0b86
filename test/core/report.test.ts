import { describe, expect, it } from 'vitest';
import { mergeOrgRounds, type OrgReport, summarize } from '../../src/core/report.ts';

const base: OrgReport = {
  org: 'acme',
  status: 'ok',
  changes: [],
  unchanged: [],
  unmanaged: [],
  errors: [],
};

describe('mergeOrgRounds', () => {
  it('keeps what the first round applied and takes the rest from the later round', () => {
    const first: OrgReport = {
      ...base,
      status: 'failed',
      changes: [
        { action: 'create', cause: 'change', name: 'a', fields: {}, result: 'applied' },
        {
          action: 'create',
          cause: 'change',
          name: 'b',
          fields: {},
          result: 'failed',
          error: '503',
        },
      ],
      unchanged: ['z'],
    };
    const second: OrgReport = {
      ...base,
      changes: [{ action: 'create', cause: 'change', name: 'b', fields: {}, result: 'applied' }],
      unchanged: ['a', 'z'],
    };
    const merged = mergeOrgRounds(first, second);
    expect(merged.status).toBe('ok');
    expect(merged.changes.map((c) => [c.name, c.result])).toEqual([
      ['a', 'applied'],
      ['b', 'applied'],
    ]);
    expect(merged.unchanged).toEqual(['z']);
    expect(summarize([merged])).toMatchObject({ create: 2, applied: 2, failed: 0, unchanged: 1 });
  });

  it('stays failed when the later round still fails', () => {
    const failed: OrgReport = { ...base, status: 'failed', error: 'cannot list the org: 503' };
    expect(mergeOrgRounds(failed, failed)).toMatchObject({
      status: 'failed',
      error: 'cannot list the org: 503',
    });
  });
});
