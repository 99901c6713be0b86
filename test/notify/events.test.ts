import { describe, expect, it } from 'vitest';
import {
  EMPTY_NOTIFY_MEMORY,
  MAX_EVENT_ITEMS,
  type NotifyEvent,
  type NotifyMemory,
  passEvents,
  type PassOutcome,
} from '../../src/notify/events.ts';
import type { ChangeReport, OrgReport, ProblemReport } from '../../src/core/report.ts';

const TIME = '2026-11-23T02:00:00.000Z';

function ok(org: string, changes: ChangeReport[] = []): OrgReport {
  return { org, status: 'ok', changes, unchanged: [], unmanaged: [], errors: [] };
}

function failed(org: string, error: string): OrgReport {
  return { org, status: 'failed', changes: [], unchanged: [], unmanaged: [], errors: [], error };
}

function invalid(org: string, errors: ProblemReport[]): OrgReport {
  return { org, status: 'invalid', changes: [], unchanged: [], unmanaged: [], errors };
}

function change(
  name: string,
  result: ChangeReport['result'],
  action: ChangeReport['action'] = 'update',
  error?: string,
): ChangeReport {
  return {
    action,
    cause: 'change',
    name,
    fields: { description: { from: 'old', to: 'new' } },
    result,
    ...(error === undefined ? {} : { error }),
  };
}

/** An update that is drift (core/drift.ts): the service moved, the manifest did not. */
function drift(name: string, result: ChangeReport['result'], error?: string): ChangeReport {
  return { ...change(name, result, 'update', error), cause: 'drift' };
}

function withChanges(org: string, changes: ChangeReport[]): OrgReport {
  const bad = changes.some((c) => c.result === 'failed' || c.result === 'not-converged');
  return { ...ok(org, changes), status: bad ? 'failed' : 'ok' };
}

function problem(line: number, message = 'bad value'): ProblemReport {
  return { file: 'acme.yaml', line, column: 3, path: 'environments[0].type', message };
}

/** Runs passes one after the other; returns each pass's events. */
function run(
  passes: (Partial<PassOutcome> & { reports: OrgReport[] })[],
  start: NotifyMemory = EMPTY_NOTIFY_MEMORY,
): NotifyEvent[][] {
  let memory = start;
  return passes.map((pass) => {
    const orgs = pass.reports.map((r) => r.org);
    const result = passEvents(memory, {
      owned: pass.owned ?? orgs,
      unattributed: pass.unattributed ?? [],
      revision: pass.revision ?? 'abc123',
      time: TIME,
      reports: pass.reports,
    });
    memory = result.memory;
    return result.events;
  });
}

const types = (events: NotifyEvent[]) => events.map((e) => `${e.org ?? '-'}:${e.type}`);

describe('passEvents: which notifications a pass produces', () => {
  it('a healthy org produces nothing, pass after pass', () => {
    expect(run([{ reports: [ok('acme')] }, { reports: [ok('acme')] }])).toEqual([[], []]);
  });

  it('org.failed on the first failure only: the same reason again is not repeated', () => {
    const passes = run([
      { reports: [ok('acme')] },
      { reports: [failed('acme', 'cannot list the org: HTTP 503')] },
      { reports: [failed('acme', 'cannot list the org: HTTP 503')] },
      { reports: [failed('acme', 'cannot list the org: HTTP 503')] },
    ]);
    expect(passes.map(types)).toEqual([[], ['acme:org.failed'], [], []]);
    const [event] = passes[1] ?? [];
    expect(event).toMatchObject({
      org: 'acme',
      revision: 'abc123',
      time: TIME,
      data: { type: 'org.failed', reason: 'cannot list the org: HTTP 503', previous: 'ok' },
    });
  });

  it("an org failing at the daemon's first pass is announced (previous: null)", () => {
    const [events] = run([{ reports: [failed('acme', 'token refused')] }]);
    expect(events?.[0]?.data).toMatchObject({ type: 'org.failed', previous: null });
  });

  it('a new reason is a new org.failed', () => {
    const passes = run([
      { reports: [failed('acme', 'HTTP 503')] },
      { reports: [failed('acme', 'HTTP 401: token refused')] },
      { reports: [failed('acme', 'HTTP 401: token refused')] },
    ]);
    expect(passes.map(types)).toEqual([['acme:org.failed'], ['acme:org.failed'], []]);
  });

  it('failed changes are a reason too, with the environments listed', () => {
    const [events] = run([
      { reports: [withChanges('acme', [change('web', 'failed', 'update', 'HTTP 500')])] },
    ]);
    expect(events?.[0]?.data).toMatchObject({
      type: 'org.failed',
      reason: 'web: update failed (HTTP 500)',
      environments: [{ name: 'web', action: 'update', error: 'HTTP 500' }],
    });
  });

  it('org.recovered after a failure, once; nothing more while it stays healthy', () => {
    const passes = run([
      { reports: [failed('acme', 'HTTP 503')] },
      { reports: [ok('acme')] },
      { reports: [ok('acme')] },
    ]);
    expect(passes.map(types)).toEqual([['acme:org.failed'], ['acme:org.recovered'], []]);
    expect(passes[1]?.[0]?.data).toEqual({ type: 'org.recovered', previous: 'failed' });
  });

  it('org.invalid with every problem, again only when the problems change; recovered after', () => {
    const passes = run([
      { reports: [invalid('acme', [problem(4), problem(9, 'unknown key')])] },
      { reports: [invalid('acme', [problem(4), problem(9, 'unknown key')])] },
      { reports: [invalid('acme', [problem(5)])] },
      { reports: [ok('acme')] },
    ]);
    expect(passes.map(types)).toEqual([
      ['acme:org.invalid'],
      [],
      ['acme:org.invalid'],
      ['acme:org.recovered'],
    ]);
    expect(passes[0]?.[0]?.data).toEqual({
      type: 'org.invalid',
      problems: [problem(4), problem(9, 'unknown key')],
      omitted: 0,
    });
    expect(passes[0]?.[0]?.summary).toContain('acme.yaml:4:3');
    expect(passes[3]?.[0]?.data).toEqual({ type: 'org.recovered', previous: 'invalid' });
  });

  it('invalid then failing is announced as both; failing then invalid too', () => {
    const passes = run([
      { reports: [invalid('acme', [problem(4)])] },
      { reports: [failed('acme', 'HTTP 503')] },
      { reports: [invalid('acme', [problem(4)])] },
    ]);
    expect(passes.map(types)).toEqual([
      ['acme:org.invalid'],
      ['acme:org.failed'],
      ['acme:org.invalid'],
    ]);
  });

  it('drift.healed: drift applied, with the environments set back; other changes are not drift', () => {
    const passes = run([
      { reports: [ok('acme')] },
      {
        reports: [
          ok('acme', [
            drift('web', 'applied'),
            change('db', 'applied', 'create'),
            change('api', 'applied'),
          ]),
        ],
      },
    ]);
    expect(passes.map(types)).toEqual([[], ['acme:drift.healed']]);
    expect(passes[1]?.[0]?.data).toEqual({
      type: 'drift.healed',
      environments: [
        { name: 'web', action: 'update', fields: { description: { from: 'old', to: 'new' } } },
      ],
      omitted: 0,
    });
    expect(passes[1]?.[0]?.summary).toBe('drift healed in org acme: 1 environment set back (web)');
  });

  it('changes applied that are not drift say nothing, a manifest change or a first apply', () => {
    const passes = run([
      { reports: [ok('acme', [change('web', 'applied', 'create')])] },
      { reports: [ok('acme', [change('web', 'applied')])] },
      { reports: [ok('acme', [change('web', 'applied', 'unverified')])] },
    ]);
    expect(passes.map(types)).toEqual([[], [], []]);
  });

  it("drift at an org's first pass is drift too: the state file tells a heal from a first apply", () => {
    expect(run([{ reports: [ok('acme', [drift('web', 'applied')])] }]).map(types)).toEqual([
      ['acme:drift.healed'],
    ]);
  });

  it('drift that failed or did not take is not healed; set back on a retry, it is', () => {
    const passes = run([
      { reports: [ok('acme')] },
      { reports: [withChanges('acme', [drift('web', 'failed', 'HTTP 500')])] },
      { reports: [ok('acme', [drift('web', 'applied')])] },
      { reports: [withChanges('acme', [drift('db', 'not-converged')])] },
    ]);
    expect(passes.map(types)).toEqual([
      [],
      ['acme:org.failed'],
      ['acme:org.recovered', 'acme:drift.healed'],
      ['acme:change.not-converged'],
    ]);
  });

  it('change.not-converged once per set of changes, then recovered', () => {
    const passes = run([
      { reports: [ok('acme')] },
      { reports: [withChanges('acme', [change('web', 'not-converged')])] },
      { reports: [withChanges('acme', [change('web', 'not-converged')])] },
      {
        reports: [
          withChanges('acme', [change('web', 'not-converged'), change('db', 'not-converged')]),
        ],
      },
      { reports: [ok('acme')] },
    ]);
    expect(passes.map(types)).toEqual([
      [],
      ['acme:change.not-converged'],
      [],
      ['acme:change.not-converged'],
      ['acme:org.recovered'],
    ]);
  });

  it('manifests.error when problems that belong to no org appear or change, not repeated', () => {
    const stray = { ...problem(1, 'names no org'), file: 'stray.yaml' };
    const passes = run([
      { reports: [], unattributed: [stray] },
      { reports: [], unattributed: [stray] },
      { reports: [], unattributed: [] },
      { reports: [], unattributed: [stray] },
    ]);
    expect(passes.map(types)).toEqual([['-:manifests.error'], [], [], ['-:manifests.error']]);
    expect(passes[0]?.[0]).toMatchObject({ org: null, data: { problems: [stray] } });
  });

  it('orders events per org: failure or recovery, then drift, then not-converged; orgs in report order', () => {
    const stray = { ...problem(1, 'names no org'), file: 'stray.yaml' };
    const passes = run([
      { reports: [ok('b'), ok('a')] },
      {
        reports: [
          withChanges('b', [
            drift('web', 'applied'),
            change('db', 'not-converged'),
            change('api', 'failed', 'update', 'HTTP 400'),
          ]),
          invalid('a', [problem(2)]),
        ],
        unattributed: [stray],
      },
    ]);
    expect(types(passes[1] ?? [])).toEqual([
      '-:manifests.error',
      'b:org.failed',
      'b:drift.healed',
      'b:change.not-converged',
      'a:org.invalid',
    ]);
  });

  it('orgs no longer owned are forgotten: coming back, they start afresh', () => {
    const passes = run([
      { reports: [failed('acme', 'HTTP 503')] },
      { reports: [], owned: [] },
      { reports: [failed('acme', 'HTTP 503')] },
    ]);
    expect(passes.map(types)).toEqual([['acme:org.failed'], [], ['acme:org.failed']]);
  });

  it('an org this pass did not reconcile keeps its state (no recovery, no repeat)', () => {
    const passes = run([
      { reports: [failed('acme', 'HTTP 503'), ok('other')] },
      { reports: [ok('other')], owned: ['acme', 'other'] },
      { reports: [ok('acme')], owned: ['acme', 'other'] },
    ]);
    expect(passes.map(types)).toEqual([['acme:org.failed'], [], ['acme:org.recovered']]);
  });

  it('lists at most MAX_EVENT_ITEMS problems and counts the rest', () => {
    const many = Array.from({ length: MAX_EVENT_ITEMS + 7 }, (_, i) => problem(i + 1));
    const [events] = run([{ reports: [invalid('acme', many)] }]);
    const data = events?.[0]?.data;
    if (data?.type !== 'org.invalid') throw new Error('expected org.invalid');
    expect(data.omitted).toBe(7);
    expect(data.problems).toHaveLength(MAX_EVENT_ITEMS);
  });
});
