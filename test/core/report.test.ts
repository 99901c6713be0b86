import { describe, expect, it } from 'vitest';
import {
  type ChangeReport,
  exitCode,
  hasPendingChanges,
  mergeOrgRounds,
  type OrgReport,
  summarize,
} from '../../src/core/report.ts';
import { orgErrorMessage, orgStatusAfter } from '../../src/daemon/status.ts';
import { orgReport, runReport, uploadReport } from '../helpers/builders.ts';

const org = (overrides: Partial<OrgReport> = {}) => orgReport('acme', overrides);
const create = (name: string, result: ChangeReport['result']): ChangeReport => ({
  action: 'create',
  cause: 'change',
  name,
  fields: {},
  result,
});
const upload = uploadReport;

describe('policy document uploads in the report', () => {
  it('the summary counts them apart from environments, and only when there are any', () => {
    expect(summarize([org()]).policyDocuments).toBeUndefined();
    const summary = summarize([
      org({
        policyDocuments: [
          upload('a', { action: 'create', result: 'applied' }),
          upload('b', { result: 'failed', error: 'no' }),
          upload('c', { result: 'not-converged' }),
        ],
      }),
    ]);
    expect(summary.policyDocuments).toEqual({ create: 1, update: 2, applied: 1, failed: 1 });
    expect(summary).toMatchObject({ create: 0, update: 0, applied: 0, failed: 0, notConverged: 1 });
  });

  it.each([
    ['no upload', [], false, 0],
    ['an upload planned', [upload('a')], true, 2],
  ])('%s: pending %s, plan --detailed-exitcode %s', (_what, uploads, pending, code) => {
    const orgs = [org({ policyDocuments: uploads, policyDocumentsUnchanged: ['x'] })];
    const report = runReport(true, orgs);
    expect(hasPendingChanges(report)).toBe(pending);
    expect(exitCode(report, { detailed: true })).toBe(code);
  });
});

describe('mergeOrgRounds: what the first round did stays done, the rest is the later round', () => {
  it('keeps what the first round applied and takes the rest from the later round', () => {
    const first = org({
      status: 'failed',
      changes: [create('a', 'applied'), { ...create('b', 'failed'), error: '503' }],
      unchanged: ['z'],
    });
    const merged = mergeOrgRounds(
      first,
      org({ changes: [create('b', 'applied')], unchanged: ['a', 'z'] }),
    );
    expect(merged.status).toBe('ok');
    expect(merged.changes.map((c) => `${c.name} ${c.result}`)).toEqual(['a applied', 'b applied']);
    expect(merged.unchanged).toEqual(['z']);
    expect(summarize([merged])).toMatchObject({ create: 2, applied: 2, failed: 0, unchanged: 1 });
    const failed = org({ status: 'failed', error: 'cannot list the org: 503' });
    expect(mergeOrgRounds(failed, failed)).toMatchObject({ status: 'failed', error: failed.error });
  });

  it('keeps the uploads and archives the first round did, and fails only for what failed last', () => {
    const archive = (name: string, result: ChangeReport['result']) => ({
      name,
      ownedBy: [],
      result,
    });
    const first = org({
      status: 'failed',
      policyDocuments: [upload('a', { result: 'applied' }), upload('b', { result: 'failed' })],
      policyDocumentsUnchanged: [],
      archives: [archive('old', 'applied'), archive('older', 'failed')],
    });
    const second = org({
      policyDocuments: [upload('b', { result: 'applied' })],
      policyDocumentsUnchanged: ['a'],
      archives: [archive('older', 'applied')],
    });
    const merged = mergeOrgRounds(first, second);
    expect(merged.status).toBe('ok');
    expect(merged.policyDocuments?.map((d) => `${d.name} ${d.result}`)).toEqual([
      'a applied',
      'b applied',
    ]);
    expect(merged.policyDocumentsUnchanged).toEqual([]);
    expect(merged.archives?.map((d) => `${d.name} ${d.result}`)).toEqual([
      'old applied',
      'older applied',
    ]);
    const again = mergeOrgRounds(first, {
      ...second,
      policyDocuments: [upload('b', { result: 'failed' })],
    });
    expect(again.status).toBe('failed');
  });
});

it("the daemon's status keeps the uploads that did not go through, and says why the org failed", () => {
  const failed = org({
    status: 'failed',
    policyDocuments: [
      upload('a', { result: 'applied' }),
      upload('<b>', { result: 'failed', error: 'refused <script>' }),
    ],
  });
  expect(orgErrorMessage(failed)).toBe('policy document <b>: failed (refused <script>)');
  const status = orgStatusAfter(failed, undefined, 0, undefined);
  expect(status.pendingPolicyDocuments?.map((d) => d.name)).toEqual(['<b>']);
  expect(orgStatusAfter(org(), status, 1, undefined)).not.toHaveProperty('pendingPolicyDocuments');
  // An invalid org is left alone: what was pending stays.
  const invalid = orgStatusAfter(org({ status: 'invalid' }), status, 1, undefined);
  expect(invalid.pendingPolicyDocuments).toEqual(status.pendingPolicyDocuments);
});
