import { describe, expect, it } from 'vitest';
import {
  EMPTY_NOTIFY_MEMORY,
  MAX_EVENT_ITEMS,
  passEvents,
  type NotifyEvent,
  type PassOutcome,
} from '../../src/notify/events.ts';
import type { ChangeReport, OrgReport, ProblemReport } from '../../src/core/report.ts';
import { orgReport } from '../helpers/builders.ts';

const TIME = '2026-11-23T02:00:00.000Z';

const ok = (org: string, changes: ChangeReport[] = []) => orgReport(org, { changes });
const failed = (org: string, error: string) => orgReport(org, { status: 'failed', error });
const invalid = (org: string, errors: ProblemReport[]) =>
  orgReport(org, { status: 'invalid', errors });

function change(
  name: string,
  result: ChangeReport['result'],
  action: ChangeReport['action'] = 'update',
  error?: string,
): ChangeReport {
  const fields = { description: { from: 'old', to: 'new' } };
  const report = { action, cause: 'change', name, fields, result } as const;
  return error === undefined ? report : { ...report, error };
}

/** An update that is drift: the service moved, the manifest did not. */
const drift = (name: string, result: ChangeReport['result'], error?: string): ChangeReport => ({
  ...change(name, result, 'update', error),
  cause: 'drift',
});

/** An org whose changes decide its status, as the engine reports it. */
function withChanges(org: string, changes: ChangeReport[]): OrgReport {
  const bad = changes.some((c) => c.result === 'failed' || c.result === 'not-converged');
  return { ...ok(org, changes), status: bad ? 'failed' : 'ok' };
}

const problem = (line: number, message = 'bad value'): ProblemReport => ({
  file: 'acme.yaml',
  line,
  column: 3,
  path: 'environments[0].type',
  message,
});
const stray = { ...problem(1, 'names no org'), file: 'stray.yaml' };

/** A pass: its reports (owned: their orgs), or its outcome in part. */
type Pass = OrgReport[] | (Partial<PassOutcome> & { reports: OrgReport[] });

/** Runs passes one after the other; returns each pass's events. */
function run(passes: Pass[]): NotifyEvent[][] {
  let memory = EMPTY_NOTIFY_MEMORY;
  return passes.map((given) => {
    const pass = Array.isArray(given) ? { reports: given } : given;
    const result = passEvents(memory, {
      owned: pass.owned ?? pass.reports.map((r) => r.org),
      unattributed: pass.unattributed ?? [],
      revision: 'abc123',
      time: TIME,
      reports: pass.reports,
    });
    memory = result.memory;
    return result.events;
  });
}

/** Each pass's events as `org:type`, space-separated (`-` for no org). */
const types = (passes: Pass[]) =>
  run(passes).map((events) => events.map((e) => `${e.org ?? '-'}:${e.type}`).join(' '));
const HTTP_503 = failed('acme', 'HTTP 503');
const notConverged = (...names: string[]) =>
  withChanges(
    'acme',
    names.map((name) => change(name, 'not-converged')),
  );

describe('passEvents: which notifications a pass produces', () => {
  it.each<[string, Pass[], string[]]>([
    ['a healthy org: nothing, pass after pass', [[ok('acme')], [ok('acme')]], ['', '']],
    [
      'org.failed on the first failure only, not while the reason stays',
      [[ok('acme')], [HTTP_503], [HTTP_503], [HTTP_503]],
      ['', 'acme:org.failed', '', ''],
    ],
    [
      'a new reason is a new org.failed',
      [[HTTP_503], [failed('acme', 'HTTP 401')], [failed('acme', 'HTTP 401')]],
      ['acme:org.failed', 'acme:org.failed', ''],
    ],
    [
      'org.recovered after a failure, once',
      [[HTTP_503], [ok('acme')], [ok('acme')]],
      ['acme:org.failed', 'acme:org.recovered', ''],
    ],
    [
      'org.invalid again only when the problems change; recovered after',
      [
        [invalid('acme', [problem(4), problem(9)])],
        [invalid('acme', [problem(4), problem(9)])],
        [invalid('acme', [problem(5)])],
        [ok('acme')],
      ],
      ['acme:org.invalid', '', 'acme:org.invalid', 'acme:org.recovered'],
    ],
    [
      'invalid then failing, and failing then invalid, are announced as both',
      [[invalid('acme', [problem(4)])], [HTTP_503], [invalid('acme', [problem(4)])]],
      ['acme:org.invalid', 'acme:org.failed', 'acme:org.invalid'],
    ],
    [
      'changes applied that are not drift say nothing: a first apply, a manifest change',
      [
        [ok('acme', [change('web', 'applied', 'create')])],
        [ok('acme', [change('web', 'applied')])],
        [ok('acme', [change('web', 'applied', 'unverified')])],
      ],
      ['', '', ''],
    ],
    [
      "drift at an org's first pass is drift too (the state file tells it from a first apply)",
      [[ok('acme', [drift('web', 'applied')])]],
      ['acme:drift.healed'],
    ],
    [
      'drift that failed or did not take is not healed; set back on a retry, it is',
      [
        [ok('acme')],
        [withChanges('acme', [drift('web', 'failed', 'HTTP 500')])],
        [ok('acme', [drift('web', 'applied')])],
        [withChanges('acme', [drift('db', 'not-converged')])],
      ],
      ['', 'acme:org.failed', 'acme:org.recovered acme:drift.healed', 'acme:change.not-converged'],
    ],
    [
      'change.not-converged once per set of changes, then recovered',
      [
        [ok('acme')],
        [notConverged('web')],
        [notConverged('web')],
        [notConverged('web', 'db')],
        [ok('acme')],
      ],
      ['', 'acme:change.not-converged', '', 'acme:change.not-converged', 'acme:org.recovered'],
    ],
    [
      'manifests.error when problems of no org appear or change, not repeated',
      [
        { reports: [], unattributed: [stray] },
        { reports: [], unattributed: [stray] },
        { reports: [], unattributed: [] },
        { reports: [], unattributed: [stray] },
      ],
      ['-:manifests.error', '', '', '-:manifests.error'],
    ],
    [
      'per org: failure, drift, not-converged; orgs in report order; manifests.error first',
      [
        [ok('b'), ok('a')],
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
      ],
      ['', '-:manifests.error b:org.failed b:drift.healed b:change.not-converged a:org.invalid'],
    ],
    [
      'orgs no longer owned are forgotten: coming back, they start afresh',
      [[HTTP_503], { reports: [], owned: [] }, [HTTP_503]],
      ['acme:org.failed', '', 'acme:org.failed'],
    ],
    [
      'an org this pass did not reconcile keeps its state',
      [
        [HTTP_503, ok('other')],
        { reports: [ok('other')], owned: ['acme', 'other'] },
        { reports: [ok('acme')], owned: ['acme', 'other'] },
      ],
      ['acme:org.failed', '', 'acme:org.recovered'],
    ],
  ])('%s', (_title, passes, expected) => {
    expect(types(passes)).toEqual(expected);
  });

  it('says what happened: the reason, the environments, the problems, the previous state', () => {
    const failing = withChanges('acme', [change('web', 'failed', 'update', 'HTTP 500')]);
    const [first, recovered, invalidNow, , healed] = run([
      [failing],
      [ok('acme')],
      [invalid('acme', [problem(4), problem(9, 'unknown key')])],
      [ok('acme')],
      [ok('acme', [drift('web', 'applied'), change('api', 'applied')])],
    ]);
    expect(first?.[0]).toMatchObject({
      org: 'acme',
      revision: 'abc123',
      time: TIME,
      summary: 'org acme failed: web: update failed (HTTP 500)',
      data: {
        type: 'org.failed',
        reason: 'web: update failed (HTTP 500)',
        environments: [{ name: 'web', action: 'update', error: 'HTTP 500' }],
        previous: null,
      },
    });
    expect(recovered?.[0]?.data).toEqual({ type: 'org.recovered', previous: 'failed' });
    expect(invalidNow?.[0]?.summary).toContain('acme.yaml:4:3');
    expect(invalidNow?.[0]?.data).toEqual({
      type: 'org.invalid',
      problems: [problem(4), problem(9, 'unknown key')],
      omitted: 0,
    });
    expect(healed?.[0]?.summary).toBe('drift healed in org acme: 1 environment set back (web)');
    expect(healed?.[0]?.data).toEqual({
      type: 'drift.healed',
      environments: [
        { name: 'web', action: 'update', fields: { description: { from: 'old', to: 'new' } } },
      ],
      omitted: 0,
    });
    const [[stale] = []] = run([{ reports: [], unattributed: [stray] }]);
    expect(stale).toMatchObject({ org: null, data: { problems: [stray] } });
    const [, [again] = []] = run([[ok('acme')], [HTTP_503]]);
    expect(again?.data).toMatchObject({ type: 'org.failed', previous: 'ok' });
  });

  it('lists at most MAX_EVENT_ITEMS problems and counts the rest', () => {
    const many = Array.from({ length: MAX_EVENT_ITEMS + 7 }, (_, i) => problem(i + 1));
    const data = run([[invalid('acme', many)]])[0]?.[0]?.data;
    expect(data).toMatchObject({ type: 'org.invalid', omitted: 7 });
    expect(data && 'problems' in data ? data.problems : []).toHaveLength(MAX_EVENT_ITEMS);
  });
});
