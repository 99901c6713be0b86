/**
 * The daemon's pure steps (src/daemon/pass.ts, src/daemon/status.ts), held to tables: which orgs
 * a pass looks at, backoff, readiness and liveness, per-org status, the verdict, its log lines,
 * its counters and its notifications.
 */
import { describe, expect, it } from 'vitest';
import { shardOf } from '../../src/core/shard.ts';
import { commonFailure, summarize } from '../../src/core/report.ts';
import type { ChangeReport, OrgReport, ProblemReport } from '../../src/core/report.ts';
import {
  afterFailedRound,
  afterOrg,
  afterPass,
  beginPass,
  EMPTY_DAEMON_MEMORY,
  liveness,
  nextAttemptAt,
  orgsStatus,
  orgsToLook,
  ownsOrg,
  readiness,
  type DaemonMemory,
  type PassEnd,
  type PassOrg,
  type Step,
  type Surroundings,
} from '../../src/daemon/pass.ts';
import { stopBudget } from '../../src/daemon/shutdown.ts';
import { MAX_PENDING_CHANGES, orgErrorMessage, orgStatusAfter } from '../../src/daemon/status.ts';
import { orgReport } from '../helpers/builders.ts';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const MINUTE = 60_000;
const around = (now = T0, extra: Partial<Surroundings> = {}): Surroundings => ({
  now,
  intervalMs: MINUTE,
  stateWriteError: undefined,
  ...extra,
});

const org = (name: string, manifestsKey = `[${name}]`): PassOrg => ({
  org: name,
  files: [`m/${name}.yaml`],
  manifestsKey,
});

const change = (name: string, extra: Partial<ChangeReport> = {}): ChangeReport => ({
  action: 'update',
  cause: 'change',
  name,
  fields: { description: { from: 'old', to: 'new' } },
  result: 'applied',
  ...extra,
});
const drift = (name: string, result: ChangeReport['result']) =>
  change(name, { cause: 'drift', result });

const problem: ProblemReport = {
  file: 'm/x.yaml',
  line: 3,
  column: 5,
  path: 'environments[0].type',
  message: 'is not one of K8S, S3, logical',
};

/** An org's report: invalid with `problem`, failed with a 503. */
const report = (name: string, status: OrgReport['status'], extra: Partial<OrgReport> = {}) =>
  orgReport(name, {
    status,
    ...(status === 'invalid' ? { errors: [problem] } : {}),
    ...(status === 'failed' ? { error: 'the API answered 503' } : {}),
    ...extra,
  });

const start = (owned: PassOrg[], extra: Partial<Parameters<typeof beginPass>[1]> = {}) => ({
  owned,
  reasons: ['interval'],
  changedFiles: undefined,
  tokenKey: () => 'token-a',
  revision: 'rev-1',
  unattributed: [],
  ...extra,
});

const done = (reports: readonly OrgReport[], errors: ProblemReport[] = [], extra = {}) =>
  ({
    kind: 'done',
    report: { orgs: reports, errors, summary: summarize(reports), ...extra },
    cutShort: false,
  }) as const;

function endOf(reports: readonly OrgReport[], outcome?: PassEnd['outcome']): PassEnd {
  return {
    startedAt: T0 - 1_000,
    settleWaitMs: 200,
    reasons: ['interval'],
    owned: reports.map((r) => org(r.org)),
    skipped: 0,
    outcome: outcome ?? done(reports),
  };
}

/** A whole pass over `reports`: begin, each org, end. */
function pass(memory: DaemonMemory, reports: OrgReport[], now = T0, errors: ProblemReport[] = []) {
  const owned = reports.map((r) => org(r.org));
  let next = beginPass(memory, start(owned, { unattributed: errors }), now).memory;
  for (const r of reports) next = afterOrg(next, r, org(r.org), 'token-a', around(now)).memory;
  return afterPass(next, endOf(reports, done(reports, errors)), now);
}
const after = (reports: OrgReport[], errors: ProblemReport[] = []) =>
  pass(EMPTY_DAEMON_MEMORY, reports, T0, errors);

describe('which orgs a pass looks at', () => {
  const orgs = [
    { org: 'a', files: ['m/a.yaml'] },
    { org: 'b', files: ['m/b.yaml', 'm/shared.yaml'] },
    { org: 'c', files: ['m/c.yaml'] },
  ];
  const seen = new Map([
    ['a', new Set(['m/a.yaml'])],
    ['b', new Set(['m/b.yaml'])],
    ['c', new Set(['m/old-c.yaml'])],
  ]);
  it.each([
    ['a file event: the orgs its file serves', ['file change m/b.yaml'], ['m/shared.yaml'], ['b']],
    ['a file that served an org before', ['file unlink m/old-c.yaml'], ['m/old-c.yaml'], ['c']],
    ['a new revision: what changed', ['revision abc'], ['m/a.yaml'], ['a']],
    ['the interval: every org', ['interval'], ['m/a.yaml'], ['a', 'b', 'c']],
    ['SIGHUP: every org', ['SIGHUP'], [], ['a', 'b', 'c']],
    ['a webhook among file events: every org', ['file add x', 'webhook'], [], ['a', 'b', 'c']],
    ['nobody knows what changed: every org', ['file x'], undefined, ['a', 'b', 'c']],
  ])('%s', (_title, reasons, changed, expected) => {
    const files = changed === undefined ? undefined : new Set(changed);
    expect(orgsToLook(orgs, reasons, files, seen).map((o) => o.org)).toEqual(expected);
    // An org never seen before is looked at whatever changed.
    expect(orgsToLook(orgs, reasons, new Set(), new Map())).toHaveLength(3);
  });

  it('owns the orgs of its shard, among --org when given', () => {
    const shard = { index: shardOf('acme', 3), count: 3 };
    expect(ownsOrg('acme', shard, undefined)).toBe(true);
    expect(ownsOrg('acme', { ...shard, index: (shard.index + 1) % 3 }, undefined)).toBe(false);
    expect(ownsOrg('acme', undefined, ['beta'])).toBe(false);
    expect(ownsOrg('acme', undefined, undefined)).toBe(true);
  });
});

describe('beginPass', () => {
  it('forgets the orgs no longer owned, in memory and in the metrics', () => {
    const before = after([report('a', 'ok'), report('b', 'ok')]).memory;
    const begun = beginPass(before, start([org('a')]), T0);
    expect([...begun.memory.orgs.keys()]).toEqual(['a']);
    expect([...begun.memory.files.keys()]).toEqual(['a']);
    expect(begun.metrics.forget).toEqual(['b']);
    expect(begun.due.map((o) => o.org)).toEqual(['a']);
  });

  it.each([
    ['its backoff has not ended', T0 + 1_000, 'token-a', '[b]', []],
    ['its backoff has ended', T0 + 5_000, 'token-a', '[b]', ['b']],
    ['its manifests changed', T0 + 1_000, 'token-a', '[b, changed]', ['b']],
    ['its token changed', T0 + 1_000, 'token-b', '[b]', ['b']],
  ])('a failing org is due when %s', (_title, now, tokenKey, key, due) => {
    const failed = after([report('b', 'failed')]).memory;
    expect(failed.orgs.get('b')?.backoff?.nextAttemptAt).toBe(T0 + 5_000);
    const begun = beginPass(failed, start([org('b', key)], { tokenKey: () => tokenKey }), now);
    expect(begun.due.map((o) => o.org)).toEqual(due);
    expect(begun.skipped).toBe(1 - due.length);
  });

  it('sets the revision metric at the first pass and when the revision changes, not otherwise', () => {
    const first = beginPass(EMPTY_DAEMON_MEMORY, start([], { revision: undefined }), T0);
    expect(first.metrics.revision).toEqual({ value: undefined });
    const ended = afterPass(first.memory, endOf([], { kind: 'error', message: 'x' }), T0);
    const again = (revision: string | undefined) =>
      beginPass(ended.memory, start([], { revision }), T0).metrics.revision;
    expect(again(undefined)).toBeUndefined();
    expect(again('rev-2')).toEqual({ value: 'rev-2' });
  });

  it('warns of each problem that belongs to no org, by file, line and column', () => {
    const begun = beginPass(EMPTY_DAEMON_MEMORY, start([], { unattributed: [problem] }), T0);
    expect(begun.logs).toEqual([
      {
        level: 'warn',
        fields: { file: 'm/x.yaml', line: 3, column: 5, path: 'environments[0].type' },
        message:
          'm/x.yaml:3:5 environments[0].type: is not one of K8S, S3, logical (belongs to no org)',
      },
    ]);
    expect(begun.memory.unattributed).toEqual([problem]);
  });
});

describe('afterOrg and afterFailedRound', () => {
  it.each([
    // failures in a row, the interval, the wait
    [1, MINUTE, 5_000],
    [2, MINUTE, 10_000],
    [4, MINUTE, 40_000],
    [6, MINUTE, MINUTE],
    [10, 5 * MINUTE, 5 * MINUTE],
    [10, 0, 5 * MINUTE],
  ])('failure %i with the interval at %i ms backs off %i ms', (failures, intervalMs, delay) => {
    let step: Step = { memory: EMPTY_DAEMON_MEMORY, logs: [], metrics: {} };
    for (let i = 0; i < failures; i++)
      step = afterOrg(
        step.memory,
        report('a', 'failed'),
        org('a'),
        'k',
        around(T0, { intervalMs }),
      );
    const { backoff, status } = step.memory.orgs.get('a') ?? {};
    expect(backoff).toMatchObject({ failures, nextAttemptAt: T0 + delay });
    expect(status).toMatchObject({ status: 'failed', failures });
    expect(step.logs).toEqual([
      {
        level: 'warn',
        fields: { org: 'a', failures, retryInMs: delay },
        message: 'org a failed: the API answered 503',
      },
    ]);
    expect(nextAttemptAt(step.memory)).toBe(T0 + delay);
  });

  it('a success ends the backoff and counts what the metrics learn', () => {
    const failed = afterOrg(EMPTY_DAEMON_MEMORY, report('a', 'failed'), org('a'), 'k', around());
    const changes = [
      change('prod'),
      change('dev', { result: 'not-converged' }),
      drift('web', 'applied'),
      drift('db', 'not-converged'),
      drift('ci', 'planned'),
    ];
    const later = around(T0 + 10_000);
    const ok = afterOrg(failed.memory, report('a', 'ok', { changes }), org('a'), 'k', later);
    expect(ok.memory.orgs.get('a')?.backoff).toBeUndefined();
    expect(ok.memory.orgs.get('a')?.status).toMatchObject({
      status: 'ok',
      pending: 3,
      lastSuccess: new Date(T0 + 10_000).toISOString(),
    });
    expect(nextAttemptAt(ok.memory)).toBeUndefined();
    expect(ok.logs).toEqual([]);
    expect(ok.metrics.org).toEqual({
      org: 'a',
      manifestErrors: 0,
      changes: changes
        .filter((c) => c.result !== 'planned')
        .map(({ action, result }) => ({ action, result })),
      // Drift applied only: a heal that did not take is no heal.
      driftHealed: 1,
      unmanaged: 0,
      pending: 3,
      suspended: false,
      driftPending: 1,
      lastSuccessSeconds: (T0 + 10_000) / 1000,
    });
  });

  it('an invalid org is left alone: an error line, what was pending stays, the metrics keep theirs', () => {
    const pending = report('a', 'ok', { changes: [change('prod', { result: 'failed' })] });
    const before = afterOrg(EMPTY_DAEMON_MEMORY, pending, org('a'), 'k', around());
    const invalid = afterOrg(before.memory, report('a', 'invalid'), org('a'), 'k', around());
    expect(invalid.memory.orgs.get('a')?.status).toMatchObject({ status: 'invalid', pending: 1 });
    expect(invalid.memory.orgs.get('a')?.backoff).toBeUndefined();
    expect(invalid.logs).toEqual([
      {
        level: 'error',
        fields: { org: 'a', errors: [problem] },
        message:
          'org a left alone: invalid manifests (1 problem): m/x.yaml:3:5 environments[0].type: is not one of K8S, S3, logical',
      },
    ]);
    expect(invalid.metrics.org).toEqual({
      org: 'a',
      manifestErrors: 1,
      changes: [],
      driftHealed: 0,
    });
  });

  it('an org the pass did not start with gets no backoff', () => {
    const step = afterOrg(EMPTY_DAEMON_MEMORY, report('a', 'failed'), undefined, 'k', around());
    expect(step.memory.orgs.get('a')?.backoff).toBeUndefined();
    expect(step.logs).toEqual([]);
  });

  it('a failed round shows the org failed at once, its backoff left to the end of the org', () => {
    const ok = afterOrg(EMPTY_DAEMON_MEMORY, report('a', 'ok'), org('a'), 'k', around());
    const round = afterFailedRound(ok.memory, report('a', 'failed'), T0);
    expect(round.memory.orgs.get('a')?.status.status).toBe('failed');
    expect(round.memory.orgs.get('a')?.backoff).toBeUndefined();
  });

  it.each([
    ['a cause never about the org (401): at debug, the pass says it', 'unauthorized', 'debug'],
    ["a 403 may be the org's own: at warn", 'forbidden', 'warn'],
    ['no cause: at warn', undefined, 'warn'],
  ] as const)('the line of an org that failed: %s', (_title, kind, level) => {
    const cause =
      kind === undefined ? {} : { cause: { kind, code: kind === 'forbidden' ? '403' : '401' } };
    const failed = report('a', 'failed', cause);
    const step = afterOrg(EMPTY_DAEMON_MEMORY, failed, org('a'), 'token-a', around());
    expect(step.logs.map((l) => [l.level, l.message.startsWith('org a failed: ')])).toEqual([
      [level, true],
    ]);
  });
});

describe('afterPass', () => {
  it.each([
    ['every org reconciled', [report('a', 'ok'), report('b', 'ok')], [], 'success', 'info'],
    ['an org failed', [report('a', 'ok'), report('b', 'failed')], [], 'partial', 'warn'],
    ['an org is invalid', [report('a', 'ok'), report('b', 'invalid')], [], 'partial', 'warn'],
    ['a problem belongs to no org', [report('a', 'ok')], [problem], 'partial', 'warn'],
    ['every org failed', [report('a', 'invalid'), report('b', 'failed')], [], 'failed', 'warn'],
  ] as const)('%s: %s', (_title, reports, errors, verdict, level) => {
    const ended = after([...reports], [...errors]);
    expect(ended.verdict).toBe(verdict);
    expect(ended.metrics.pass).toEqual({ result: verdict, durationSeconds: 0.8 });
    expect(ended.logs.at(-1)?.level).toBe(level);
    expect(ended.logs.at(-1)?.message).toMatch(new RegExp(`^pass ${verdict}: `));
    expect(ended.memory.lastPass).toMatchObject({
      result: verdict,
      durationMs: 800,
      settleWaitMs: 200,
    });
  });

  it('is partial while an org not reconciled in this pass is still failing', () => {
    const failed = after([report('a', 'ok'), report('b', 'failed')]).memory;
    // A targeted pass that reconciles only a: b still backs off, failed.
    expect(afterPass(failed, endOf([report('a', 'ok')]), T0 + 1_000).verdict).toBe('partial');
  });

  it('a pass that failed as a whole: an error line, the error kept, not ready, no notification', () => {
    const end = endOf([], { kind: 'error', message: 'the manifests cannot be read' });
    const ended = afterPass(EMPTY_DAEMON_MEMORY, end, T0);
    expect(ended.verdict).toBe('error');
    expect(ended.logs[0]).toEqual({
      level: 'error',
      fields: { err: 'the manifests cannot be read' },
      message: 'pass failed: the manifests cannot be read',
    });
    expect(ended.memory.lastPass?.error).toBe('the manifests cannot be read');
    expect(ended.memory.firstPassDone).toBe(false);
    expect(ended.events).toEqual([]);
  });

  it('sums the pass up in one line with its counts, drift healed among them', () => {
    const ended = after([
      report('a', 'ok', { changes: [drift('prod', 'applied'), change('dev')] }),
      report('b', 'failed'),
      report('c', 'invalid'),
    ]);
    expect(ended.logs.at(-1)?.message).toBe(
      'pass partial: 2 applied (1 drift healed), 1 org(s) failed, 1 invalid org(s), 0 pending, of 3 org(s)',
    );
    expect(ended.logs.at(-1)?.fields).toMatchObject({
      orgs: 3,
      applied: 2,
      driftHealed: 1,
      failed: 1,
      invalid: 1,
      durationMs: 800,
      settleWaitMs: 200,
      trigger: ['interval'],
    });
    const plain = after([report('a', 'ok', { changes: [change('dev')] })]);
    expect(plain.logs.at(-1)?.message).toBe(
      'pass success: 1 applied, 0 org(s) failed, 0 invalid org(s), 0 pending, of 1 org(s)',
    );
  });

  it('notifies transitions only, and says nothing of a pass cut short by a stop', () => {
    const first = after([report('a', 'ok')]);
    expect(first.events).toEqual([]);
    const failing = pass(first.memory, [report('a', 'failed')], T0 + MINUTE);
    expect(failing.events.map((e) => e.type)).toEqual(['org.failed']);
    const still = pass(failing.memory, [report('a', 'failed')], T0 + 2 * MINUTE);
    expect(still.events).toEqual([]);
    const oks = [report('a', 'ok')];
    const cut = afterPass(still.memory, endOf(oks, { ...done(oks), cutShort: true }), T0);
    expect(cut.events).toEqual([]);
    expect(cut.memory.notify).toBe(still.memory.notify);
    const recovered = pass(still.memory, oks, T0 + 4 * MINUTE);
    expect(recovered.events.map((e) => e.type)).toEqual(['org.recovered']);
  });

  it('every org failed for one cause: said once, in the pass line and in /status, with what to check', () => {
    const refused = (name: string) =>
      report(name, 'failed', {
        error: `cannot list the org: GET /api/v2/environments/${name}: the token was refused (401): no`,
        cause: { kind: 'unauthorized', code: '401' },
      });
    const reports = [refused('a'), refused('b'), refused('c')];
    const failure = commonFailure(reports);
    const ended = afterPass(
      EMPTY_DAEMON_MEMORY,
      endOf(reports, done(reports, [], { failure })),
      T0,
    );
    const hint =
      'Is the token for this API? Check ENVSYNC_TOKEN, --token-file or --token-dir, and --api-url.';
    const message = 'all 3 orgs failed the same way: the token was refused (401)';
    expect(ended.logs.at(-1)?.message).toBe(
      `pass partial: 0 applied, 0 org(s) failed, 0 invalid org(s), 0 pending, of 3 org(s); ${message}. ${hint}`,
    );
    expect(ended.logs.at(-1)?.fields).toMatchObject({ cause: 'unauthorized' });
    expect(ended.memory.lastPass?.failure).toEqual({
      kind: 'unauthorized',
      code: '401',
      orgs: 3,
      message,
      hint,
    });
    // Without one cause there is none; the orgs that failed for a cause never about the org are
    // said once, in a line of their own.
    const some = after([refused('a'), report('b', 'failed'), refused('c')]);
    expect(some.memory.lastPass?.failure).toBeUndefined();
    expect(some.logs.slice(0, -1)).toEqual([
      { level: 'warn', fields: {}, message: '2 orgs failed: the token was refused (401) (a, c)' },
    ]);
  });
});

describe('readiness and liveness', () => {
  const okMemory = () => after([report('a', 'ok')]).memory;
  it.each([
    ['before the first pass', () => EMPTY_DAEMON_MEMORY, {}, /first pass/],
    ['after a pass that reconciled an org', okMemory, {}, undefined],
    [
      'when every org failed its last attempt',
      () => after([report('a', 'failed'), report('b', 'failed')]).memory,
      {},
      /every org \(2\) failed/,
    ],
    [
      'when every org failed or is invalid',
      () => after([report('a', 'failed'), report('b', 'invalid')]).memory,
      {},
      /no org is reconciled: 1 failed, 1 with invalid/,
    ],
    [
      'when one of two orgs is invalid',
      () => after([report('a', 'ok'), report('b', 'invalid')]).memory,
      {},
      undefined,
    ],
    [
      'after a pass that could not run',
      () => afterPass(okMemory(), endOf([], { kind: 'error', message: 'no token' }), T0).memory,
      {},
      /^the last pass failed: no token$/,
    ],
    [
      'while the state file cannot be written',
      okMemory,
      { stateWriteError: 'EROFS' },
      /^the state file cannot be written: EROFS$/,
    ],
    [
      'when no pass ended for over three intervals and a minute',
      okMemory,
      { now: T0 + 3 * MINUTE * 1.1 + MINUTE + 1 },
      /no pass has finished for/,
    ],
    [
      'with the interval off, however long ago',
      okMemory,
      { now: T0 + 1e3 * MINUTE, intervalMs: 0 },
      undefined,
    ],
  ] as const)('%s', (_title, memory, extra, reason) => {
    const verdict = readiness(memory(), around(T0, extra));
    expect(verdict.ready).toBe(reason === undefined);
    expect(String(verdict.reason)).toMatch(reason ?? /^undefined$/);
  });

  it.each([
    ['no pass running', undefined, 0, 99 * MINUTE, true],
    ['a pass running for 10 minutes', 0, 0, 10 * MINUTE, true],
    ['a pass running for 16 minutes', 0, 0, 16 * MINUTE, false],
    ['a pass shorter than three long intervals', 0, 10 * MINUTE, 29 * MINUTE, true],
  ])('%s: live %s', (_title, started, interval, now, live) => {
    expect(liveness(started, interval, now).live).toBe(live);
  });

  it.each([
    // --shutdown-timeout, the pass's share, the whole stop
    [30_000, 25_000, 30_000],
    [6_000, 3_000, 6_000],
    [2_000, 1_000, 2_000],
    [1_000, 1_000, 2_000],
    [0, 0, 2_000],
    [600_000, 595_000, 600_000],
  ])('--shutdown-timeout %i ms gives the pass %i ms, the stop %i ms', (timeout, passMs, hardMs) => {
    expect(stopBudget(timeout)).toEqual({ passMs, hardMs });
  });
});

describe('what /status says of an org', () => {
  const statusOf = (memory: DaemonMemory) =>
    orgsStatus(memory, { observe: false, windowOpen: true }, (name) =>
      name === 'a' ? 'token-dir:a' : null,
    );
  const types = [
    ['api', 'K8S'],
    ['db', 'S3'],
    ['web', 'K8S'],
  ] as const;
  const acme = (extra: Partial<OrgReport>) => report('acme', 'ok', extra);

  it('lists the orgs in name order, with their state and token source', () => {
    const { orgs } = statusOf(after([report('b', 'ok'), report('a', 'failed')]).memory);
    expect(Object.keys(orgs)).toEqual(['a', 'b']);
    expect(orgs['a']).toMatchObject({ tokenSource: 'token-dir:a', state: 'failed' });
    expect(orgs['b']).toMatchObject({ tokenSource: null, state: 'synced' });
  });

  const normal = { observe: false, windowOpen: true };
  const observe = { ...normal, observe: true };
  const closed = { ...normal, windowOpen: false };
  const ok = (changes: ChangeReport[], suspended = false) =>
    report('a', 'ok', suspended ? { changes, suspended } : { changes });
  const [planned, drifted] = [[change('web', { result: 'planned' })], [drift('web', 'planned')]];
  const sendFailed = report('a', 'failed', { changes: [drift('web', 'failed')] });
  it.each([
    ['reconciled', ok([]), normal, 'synced|healthy|synced'],
    ['its listing failed', report('a', 'failed'), normal, 'failed|failing|unknown'],
    ['invalid', report('a', 'invalid'), normal, 'invalid|failing|unknown'],
    ['a change failed', sendFailed, normal, 'failed|degraded|out-of-sync'],
    ['changes planned', ok(planned), observe, 'pending|healthy|out-of-sync'],
    ['changes wait', ok(planned), closed, 'waiting for window|healthy|waiting'],
    ['suspended', ok(planned, true), normal, 'suspended|healthy|suspended'],
    ['drift, observed', ok(drifted), observe, 'drifted|healthy|drifted'],
    ['drift, waiting', ok(drifted), closed, 'drifted|healthy|drifted'],
    ['drift, suspended', ok(drifted, true), normal, 'drifted|healthy|drifted'],
  ] as const)('an org %s: state|health|sync %s', (_title, orgResult, where, expected) => {
    const [state, health, sync] = expected.split('|');
    const status = orgsStatus(after([orgResult]).memory, where, () => null);
    expect(status.orgs['a']).toMatchObject({ state, health, sync });
    expect(status.sync).toBe(sync);
  });

  it.each([
    ['healthy: every org reconciled', [report('a', 'ok')], [], 'healthy', null],
    [
      'degraded: some org failed',
      [report('a', 'ok'), report('b', 'failed')],
      [],
      'degraded',
      '1 of 2 org(s) invalid or failed: b',
    ],
    [
      'degraded: a problem belongs to no org',
      [report('a', 'ok')],
      [problem],
      'degraded',
      '1 manifest problem(s) belong to no org',
    ],
    [
      'failing: every org invalid or failed',
      [report('a', 'invalid'), report('b', 'failed')],
      [],
      'failing',
      'every org (2) is invalid or failed',
    ],
  ] as const)('the health level is %s', (_title, reports, errors, level, reason) => {
    const memory = after([...reports], [...errors]).memory;
    expect(statusOf(memory).health).toEqual({ level, reason });
  });

  it('lists the changes not applied, in order, at most MAX_PENDING_CHANGES, next to their count', () => {
    const changes = Array.from({ length: MAX_PENDING_CHANGES + 7 }, (_, i) =>
      change(`env-${String(i).padStart(3, '0')}`, { result: i === 0 ? 'applied' : 'planned' }),
    );
    const status = orgStatusAfter(acme({ changes }), undefined, T0, undefined);
    expect(status.pending).toBe(MAX_PENDING_CHANGES + 6);
    expect(status.pendingChanges.map((c) => c.name)).toEqual(
      changes.slice(1, MAX_PENDING_CHANGES + 1).map((c) => c.name),
    );
    const applied = orgStatusAfter(acme({ changes: [change('prod')] }), status, T0, undefined);
    expect(applied).toMatchObject({ pending: 0, pendingChanges: [] });
  });

  it('remembers the drifts found, newest first; an invalid org keeps what was pending and found', () => {
    const changes = [drift('prod', 'applied'), change('dev', { result: 'planned' })];
    const first = orgStatusAfter(acme({ changes }), undefined, T0, undefined);
    expect(first.recentDrift).toEqual([
      {
        environment: 'prod',
        field: 'description',
        found: 'old',
        declared: 'new',
        at: new Date(T0).toISOString(),
      },
    ]);
    const invalid = orgStatusAfter(report('acme', 'invalid'), first, T0 + 1000, undefined);
    expect(invalid).toMatchObject({
      status: 'invalid',
      pending: 1,
      pendingChanges: first.pendingChanges,
      recentDrift: first.recentDrift,
    });
    const quiet = orgStatusAfter(acme({ changes: [change('web')] }), invalid, T0 + 2000, undefined);
    expect(quiet.recentDrift).toEqual(first.recentDrift);
  });

  it.each([
    [
      'each declared environment has the state of its change, or synced',
      acme({
        status: 'failed',
        changes: [change('api', { result: 'failed' }), drift('db', 'planned')],
        unchanged: ['web'],
      }),
      ['failed', 'drifted', 'synced'],
    ],
    [
      'not converged, and pending when not drift',
      acme({
        changes: [change('api', { result: 'not-converged' }), change('db', { result: 'planned' })],
      }),
      ['not converged', 'pending', 'synced'],
    ],
    [
      'unknown, not synced, for environments never compared because the org failed as a whole',
      report('acme', 'failed', { error: 'cannot list the org: 403' }),
      ['unknown', 'unknown', 'unknown'],
    ],
  ])('%s', (_title, orgResult, states) => {
    const status = orgStatusAfter(orgResult, undefined, T0, undefined, types);
    expect(status.environments).toEqual(
      types.map(([name, type], i) => ({ name, type, state: states[i] })),
    );
  });

  it('sums up an invalid org by its likeliest cause: the misspelt key, not the key it leaves missing', () => {
    const at = (line: number, message: string) => ({
      ...problem,
      file: 'manifests/acme.yaml',
      line,
      path: 'environments[0]',
      message,
    });
    const errors = [
      at(3, 'is missing its required key "type"'),
      at(4, 'unknown key "tpye" (did you mean "type"?)'),
    ];
    expect(orgErrorMessage(report('acme', 'invalid', { errors }))).toBe(
      'invalid manifests (2 problems): manifests/acme.yaml:4:5 environments[0]: unknown key "tpye" (did you mean "type"?)',
    );
  });
});
