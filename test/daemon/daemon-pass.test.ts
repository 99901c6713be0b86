import { describe, expect, it } from 'vitest';
import {
  type DaemonMemory,
  daemonStatus,
  EMPTY_DAEMON_MEMORY,
  nextAttemptAt,
  type PassOrg,
  readinessOfMemory,
  type Surroundings,
} from '../../src/daemon/daemon-memory.ts';
import {
  afterFailedRound,
  afterOrg,
  afterPass,
  beginPass,
  type PassEnd,
} from '../../src/daemon/daemon-pass.ts';
import { orgErrorMessage } from '../../src/daemon/daemon-status.ts';
import {
  type ChangeReport,
  commonFailure,
  type OrgReport,
  type ProblemReport,
  summarize,
} from '../../src/core/report.ts';

const T0 = Date.parse('2026-11-25T10:00:00.000Z');
const around = (now = T0, extra: Partial<Surroundings> = {}): Surroundings => ({
  now,
  intervalMs: 60_000,
  stateWriteError: undefined,
  ...extra,
});

const org = (name: string, manifestsKey = `[${name}]`): PassOrg => ({
  org: name,
  files: [`m/${name}.yaml`],
  manifestsKey,
});

const change = (name: string, result: ChangeReport['result'] = 'applied'): ChangeReport => ({
  action: 'update',
  cause: 'change',
  name,
  fields: { description: { from: 'old', to: 'new' } },
  result,
});

const problem: ProblemReport = {
  file: 'm/x.yaml',
  line: 3,
  column: 5,
  path: 'environments[0].type',
  message: 'is not one of K8S, S3, logical',
};

function report(name: string, status: OrgReport['status'], extra: Partial<OrgReport> = {}) {
  return {
    org: name,
    status,
    changes: [],
    unchanged: [],
    unmanaged: [],
    errors: status === 'invalid' ? [problem] : [],
    ...(status === 'failed' ? { error: 'the API answered 503' } : {}),
    ...extra,
  } satisfies OrgReport;
}

/** A whole pass over `reports`: begin, each org, end. */
function pass(
  memory: DaemonMemory,
  reports: readonly OrgReport[],
  options: { now?: number; reasons?: string[]; errors?: ProblemReport[]; tokenKey?: string } = {},
) {
  const now = options.now ?? T0;
  const owned = reports.map((r) => org(r.org));
  const begun = beginPass(
    memory,
    {
      owned,
      reasons: options.reasons ?? ['interval'],
      changedFiles: undefined,
      tokenKey: () => options.tokenKey ?? 'token-a',
      revision: 'rev-1',
      unattributed: options.errors ?? [],
    },
    around(now),
  );
  let next = begun.memory;
  for (const r of reports) {
    next = afterOrg(next, r, org(r.org), options.tokenKey ?? 'token-a', around(now)).memory;
  }
  const end: PassEnd = {
    startedAt: now - 1_000,
    settleWaitMs: 200,
    reasons: options.reasons ?? ['interval'],
    owned,
    due: begun.due,
    skipped: begun.skipped,
    outcome: {
      kind: 'done',
      report: { orgs: reports, errors: options.errors ?? [], summary: summarize(reports) },
      cutShort: false,
    },
  };
  return afterPass(next, end, around(now));
}

describe('beginPass: which orgs a pass reconciles', () => {
  it('forgets the orgs no longer owned, in memory and in the metrics', () => {
    const before = pass(EMPTY_DAEMON_MEMORY, [report('a', 'ok'), report('b', 'ok')]).memory;
    const begun = beginPass(
      before,
      {
        owned: [org('a')],
        reasons: ['interval'],
        changedFiles: undefined,
        tokenKey: () => 'token-a',
        revision: 'rev-1',
        unattributed: [],
      },
      around(),
    );
    expect([...begun.memory.orgs.keys()]).toEqual(['a']);
    expect([...begun.memory.files.keys()]).toEqual(['a']);
    expect(begun.metrics.forget).toEqual(['b']);
    expect(begun.due.map((o) => o.org)).toEqual(['a']);
  });

  it.each([
    ['its backoff has not ended', T0 + 1_000, 'token-a', '[b]', []],
    ['its backoff has ended', T0 + 5_000, 'token-a', '[b]', ['b']],
    ['its manifests changed', T0 + 1_000, 'token-a', '[b, changed]', ['b']],
    ['the token changed', T0 + 1_000, 'token-b', '[b]', ['b']],
  ])('a failing org is due when %s', (_title, now, tokenKey, key, due) => {
    const failed = pass(EMPTY_DAEMON_MEMORY, [report('b', 'failed')]).memory;
    expect(failed.orgs.get('b')?.backoff?.nextAttemptAt).toBe(T0 + 5_000);
    const begun = beginPass(
      failed,
      {
        owned: [org('b', key)],
        reasons: ['interval'],
        changedFiles: undefined,
        tokenKey: () => tokenKey,
        revision: 'rev-1',
        unattributed: [],
      },
      around(now),
    );
    expect(begun.due.map((o) => o.org)).toEqual(due);
    expect(begun.skipped).toBe(1 - due.length);
  });

  it("a failing org is due when its own token changed, not when another org's did", () => {
    const failed = pass(EMPTY_DAEMON_MEMORY, [report('b', 'failed'), report('c', 'failed')]);
    const begun = beginPass(
      failed.memory,
      {
        owned: [org('b'), org('c')],
        reasons: ['interval'],
        changedFiles: undefined,
        // c's file in the token directory was rotated; b's token is the one it failed with.
        tokenKey: (name) => (name === 'c' ? 'token-c2' : 'token-a'),
        revision: 'rev-1',
        unattributed: [],
      },
      around(T0 + 1_000),
    );
    expect(begun.due.map((o) => o.org)).toEqual(['c']);
    expect(begun.skipped).toBe(1);
  });

  it('sets the revision metric at the first pass and when the revision changes, not otherwise', () => {
    const start = (memory: DaemonMemory, revision: string | undefined) =>
      beginPass(
        memory,
        {
          owned: [],
          reasons: ['interval'],
          changedFiles: undefined,
          tokenKey: () => 'k',
          revision,
          unattributed: [],
        },
        around(),
      );
    const first = start(EMPTY_DAEMON_MEMORY, undefined);
    expect(first.metrics.revision).toEqual({ value: undefined });
    const ended = afterPass(first.memory, endOf([], { kind: 'error', message: 'x' }), around());
    expect(start(ended.memory, undefined).metrics.revision).toBeUndefined();
    expect(start(ended.memory, 'rev-2').metrics.revision).toEqual({ value: 'rev-2' });
  });

  it('warns of each problem that belongs to no org, by file, line and column', () => {
    const begun = beginPass(
      EMPTY_DAEMON_MEMORY,
      {
        owned: [],
        reasons: ['start'],
        changedFiles: undefined,
        tokenKey: () => 'k',
        revision: undefined,
        unattributed: [problem],
      },
      around(),
    );
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

describe('afterOrg: what the daemon remembers of an org', () => {
  it.each([
    ['first failure', 1, 5_000],
    ['second in a row', 2, 10_000],
    ['fourth in a row', 4, 40_000],
    ['capped at the interval', 6, 60_000],
  ])('a failed org backs off: %s', (_title, failures, delay) => {
    let memory = EMPTY_DAEMON_MEMORY;
    let step = afterOrg(memory, report('a', 'failed'), org('a'), 'k', around());
    for (let i = 1; i < failures; i++) {
      memory = step.memory;
      step = afterOrg(memory, report('a', 'failed'), org('a'), 'k', around());
    }
    const kept = step.memory.orgs.get('a');
    expect(kept?.backoff).toMatchObject({ failures, nextAttemptAt: T0 + delay });
    expect(kept?.status).toMatchObject({ status: 'failed', failures });
    expect(step.logs).toEqual([
      {
        level: 'warn',
        fields: { org: 'a', failures, retryInMs: delay },
        message: 'org a failed: the API answered 503',
      },
    ]);
    expect(nextAttemptAt(step.memory)).toBe(T0 + delay);
  });

  it('a success ends the backoff and counts the last success', () => {
    const failed = afterOrg(EMPTY_DAEMON_MEMORY, report('a', 'failed'), org('a'), 'k', around());
    const ok = afterOrg(
      failed.memory,
      report('a', 'ok', {
        changes: [
          change('prod'),
          change('dev', 'not-converged'),
          { ...change('web'), cause: 'drift' },
          { ...change('db', 'not-converged'), cause: 'drift' },
        ],
      }),
      org('a'),
      'k',
      around(T0 + 10_000),
    );
    expect(ok.memory.orgs.get('a')?.backoff).toBeUndefined();
    expect(ok.memory.orgs.get('a')?.status).toMatchObject({
      status: 'ok',
      pending: 2,
      lastSuccess: new Date(T0 + 10_000).toISOString(),
    });
    expect(nextAttemptAt(ok.memory)).toBeUndefined();
    expect(ok.logs).toEqual([]);
    expect(ok.metrics.org).toEqual({
      org: 'a',
      manifestErrors: 0,
      changes: [
        { action: 'update', result: 'applied' },
        { action: 'update', result: 'not-converged' },
        { action: 'update', result: 'applied' },
        { action: 'update', result: 'not-converged' },
      ],
      // Drift applied only: a heal that did not take is no heal.
      driftHealed: 1,
      unmanaged: 0,
      pending: 2,
      suspended: false,
      driftPending: 0,
      lastSuccessSeconds: (T0 + 10_000) / 1000,
    });
  });

  it('an invalid org is left alone: an error line, and what was pending stays pending', () => {
    const pendingBefore = afterOrg(
      EMPTY_DAEMON_MEMORY,
      report('a', 'ok', { changes: [change('prod', 'failed')] }),
      org('a'),
      'k',
      around(),
    );
    const invalid = afterOrg(pendingBefore.memory, report('a', 'invalid'), org('a'), 'k', around());
    expect(invalid.memory.orgs.get('a')?.status).toMatchObject({ status: 'invalid', pending: 1 });
    expect(invalid.memory.orgs.get('a')?.backoff).toBeUndefined();
    expect(invalid.logs[0]).toMatchObject({ level: 'error', fields: { org: 'a' } });
    expect(invalid.logs[0]?.message).toBe(
      'org a left alone: invalid manifests (1 problem): m/x.yaml:3:5 environments[0].type: is not one of K8S, S3, logical',
    );
    // Unknown while invalid: the metrics keep the last pending and unmanaged counts.
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
    const round = afterFailedRound(ok.memory, report('a', 'failed'), around());
    expect(round.memory.orgs.get('a')?.status.status).toBe('failed');
    expect(round.memory.orgs.get('a')?.backoff).toBeUndefined();
    // Its only org failing, the daemon is not ready (it was).
    expect(ok.metrics.ready).toBe(false); // no pass has ended yet
    expect(round.metrics.ready).toBe(false);
  });
});

function endOf(reports: readonly OrgReport[], outcome?: PassEnd['outcome']): PassEnd {
  return {
    startedAt: T0 - 1_000,
    settleWaitMs: 200,
    reasons: ['interval'],
    owned: reports.map((r) => org(r.org)),
    due: reports.map((r) => org(r.org)),
    skipped: 0,
    outcome: outcome ?? {
      kind: 'done',
      report: { orgs: reports, errors: [], summary: summarize(reports) },
      cutShort: false,
    },
  };
}

describe('afterPass: the verdict of a pass and what it counts', () => {
  it.each([
    ['every org reconciled', [report('a', 'ok'), report('b', 'ok')], [], 'success', 'info'],
    ['an org failed', [report('a', 'ok'), report('b', 'failed')], [], 'partial', 'warn'],
    ['an org is invalid', [report('a', 'ok'), report('b', 'invalid')], [], 'partial', 'warn'],
    ['a problem belongs to no org', [report('a', 'ok')], [problem], 'partial', 'warn'],
  ] as const)('%s: %s', (_title, reports, errors, verdict, level) => {
    const ended = pass(EMPTY_DAEMON_MEMORY, reports, { errors: [...errors] });
    expect(ended.verdict).toBe(verdict);
    expect(ended.metrics.pass).toEqual({ result: verdict, durationSeconds: 0.8 });
    const line = ended.logs.at(-1);
    expect(line?.level).toBe(level);
    expect(line?.message).toMatch(new RegExp(`^pass ${verdict}: `));
    expect(ended.memory.lastPass).toMatchObject({ result: verdict, durationMs: 800 });
  });

  it('is partial while an org not reconciled in this pass is still failing', () => {
    const failed = pass(EMPTY_DAEMON_MEMORY, [report('a', 'ok'), report('b', 'failed')]).memory;
    // A targeted pass that reconciles only a: b still backs off, failed.
    const ended = afterPass(failed, endOf([report('a', 'ok')]), around(T0 + 1_000));
    expect(ended.verdict).toBe('partial');
  });

  it('a pass that failed as a whole: an error line, the error kept, and not ready', () => {
    const ended = afterPass(
      EMPTY_DAEMON_MEMORY,
      endOf([], { kind: 'error', message: 'the manifests cannot be read' }),
      around(),
    );
    expect(ended.verdict).toBe('error');
    expect(ended.logs[0]).toEqual({
      level: 'error',
      fields: { err: 'the manifests cannot be read' },
      message: 'pass failed: the manifests cannot be read',
    });
    expect(ended.memory.lastPassError).toBe('the manifests cannot be read');
    expect(ended.memory.firstPassDone).toBe(false);
    expect(ended.metrics.ready).toBe(false);
    expect(ended.events).toEqual([]);
  });

  it('sums the pass up in one line with its counts', () => {
    const ended = pass(EMPTY_DAEMON_MEMORY, [
      report('a', 'ok', { changes: [change('prod')] }),
      report('b', 'failed'),
      report('c', 'invalid'),
    ]);
    expect(ended.logs.at(-1)?.message).toBe(
      'pass partial: 1 applied, 1 org(s) failed, 1 invalid org(s), 0 pending, of 3 org(s)',
    );
    expect(ended.logs.at(-1)?.fields).toMatchObject({
      orgs: 3,
      failed: 1,
      invalid: 1,
      durationMs: 800,
      settleWaitMs: 200,
      trigger: ['interval'],
    });
  });

  it('says how many of the changes applied were drift set back, and notifies it', () => {
    const healed = pass(EMPTY_DAEMON_MEMORY, [
      report('a', 'ok', {
        changes: [{ ...change('prod'), cause: 'drift' }, change('dev')],
      }),
    ]);
    expect(healed.logs.at(-1)?.message).toBe(
      'pass success: 2 applied (1 drift healed), 0 org(s) failed, 0 invalid org(s), 0 pending, of 1 org(s)',
    );
    expect(healed.logs.at(-1)?.fields).toMatchObject({ applied: 2, driftHealed: 1 });
    expect(healed.events.map((e) => e.type)).toEqual(['drift.healed']);
    const plain = pass(EMPTY_DAEMON_MEMORY, [report('a', 'ok', { changes: [change('dev')] })]);
    expect(plain.logs.at(-1)?.fields).toMatchObject({ applied: 1, driftHealed: 0 });
    expect(plain.events).toEqual([]);
  });

  it('notifies transitions only, and says nothing of a pass cut short by a stop', () => {
    const first = pass(EMPTY_DAEMON_MEMORY, [report('a', 'ok')]);
    expect(first.events).toEqual([]);
    const failing = pass(first.memory, [report('a', 'failed')], { now: T0 + 60_000 });
    expect(failing.events.map((e) => e.type)).toEqual(['org.failed']);
    const still = pass(failing.memory, [report('a', 'failed')], { now: T0 + 120_000 });
    expect(still.events).toEqual([]);
    const cut = afterPass(
      still.memory,
      {
        ...endOf([report('a', 'ok')]),
        outcome: {
          kind: 'done',
          report: {
            orgs: [report('a', 'ok')],
            errors: [],
            summary: summarize([report('a', 'ok')]),
          },
          cutShort: true,
        },
      },
      around(T0 + 130_000),
    );
    expect(cut.events).toEqual([]);
    expect(cut.memory.notify).toBe(still.memory.notify);
    const recovered = pass(still.memory, [report('a', 'ok')], { now: T0 + 180_000 });
    expect(recovered.events.map((e) => e.type)).toEqual(['org.recovered']);
  });
});

describe('afterPass: every org failed for one cause', () => {
  const cause = { kind: 'unauthorized', code: '401' } as const;
  const refused = (name: string) =>
    report(name, 'failed', {
      error: `cannot list the org: GET /api/v2/environments/${name}: the token was refused (401): no`,
      cause,
    });

  it('says it once, in the pass line and in /status, with what to check', () => {
    const reports = [refused('a'), refused('b'), refused('c')];
    const failure = commonFailure(reports);
    expect(failure).toBeDefined();
    const end = endOf(reports, {
      kind: 'done',
      report: {
        orgs: reports,
        errors: [],
        summary: summarize(reports),
        ...(failure ? { failure } : {}),
      },
      cutShort: false,
    });
    const ended = afterPass(EMPTY_DAEMON_MEMORY, end, around());
    expect(ended.verdict).toBe('partial');
    expect(ended.logs.at(-1)?.message).toBe(
      'pass partial: 0 applied, 0 org(s) failed, 0 invalid org(s), 0 pending, of 3 org(s); ' +
        'all 3 orgs failed the same way: the token was refused (401). ' +
        'Is the token for this API? Check ENVSYNC_TOKEN, --token-file or --token-dir, and --api-url.',
    );
    expect(ended.logs.at(-1)?.fields).toMatchObject({ cause: 'unauthorized' });
    expect(ended.memory.lastPass?.failure).toEqual({
      kind: 'unauthorized',
      code: '401',
      orgs: 3,
      message: 'all 3 orgs failed the same way: the token was refused (401)',
      hint: 'Is the token for this API? Check ENVSYNC_TOKEN, --token-file or --token-dir, and --api-url.',
    });
  });

  it('a pass without one cause has none; the orgs that failed for a cause never about the org are said once', () => {
    const ended = pass(EMPTY_DAEMON_MEMORY, [refused('a'), report('b', 'failed'), refused('c')]);
    expect(ended.memory.lastPass?.failure).toBeUndefined();
    expect(ended.logs.at(-1)?.message).not.toContain('same way');
    expect(ended.logs.slice(0, -1)).toEqual([
      { level: 'warn', fields: {}, message: '2 orgs failed: the token was refused (401) (a, c)' },
    ]);
  });

  it.each([
    ['a cause never about the org (401): at debug, the pass says it', { cause }, 'debug'],
    [
      "a 403 may be the org's own: at warn",
      { cause: { kind: 'forbidden', code: '403' } } as const,
      'warn',
    ],
    ['no cause: at warn', {}, 'warn'],
  ] as const)('the line of an org that failed: %s', (_title, extra, level) => {
    const begun = beginPass(
      EMPTY_DAEMON_MEMORY,
      {
        owned: [org('a')],
        reasons: ['interval'],
        changedFiles: undefined,
        tokenKey: () => 'token-a',
        revision: 'rev-1',
        unattributed: [],
      },
      around(),
    );
    const step = afterOrg(
      begun.memory,
      report('a', 'failed', extra),
      org('a'),
      'token-a',
      around(),
    );
    expect(step.logs.map((l) => l.level)).toEqual([level]);
    expect(step.logs[0]?.message).toMatch(/^org a failed: /);
  });
});

describe('readiness, from the memory', () => {
  it.each([
    ['before the first pass', () => EMPTY_DAEMON_MEMORY, {}, false, /first pass/],
    ['after a pass that reconciled an org', () => okMemory(), {}, true, undefined],
    [
      'when every org failed its last attempt',
      () => pass(EMPTY_DAEMON_MEMORY, [report('a', 'failed')]).memory,
      {},
      false,
      /every org \(1\) failed/,
    ],
    [
      'when one of two orgs is invalid',
      () => pass(EMPTY_DAEMON_MEMORY, [report('a', 'ok'), report('b', 'invalid')]).memory,
      {},
      true,
      undefined,
    ],
    [
      'while the state file cannot be written',
      () => okMemory(),
      { stateWriteError: 'EROFS' },
      false,
      /state file cannot be written: EROFS/,
    ],
    [
      'when no pass ended for over three intervals and a minute',
      () => okMemory(),
      { now: T0 + 3 * 60_000 * 1.1 + 60_001 },
      false,
      /no pass has finished/,
    ],
  ] as const)('%s', (_title, memory, extra, ready, reason) => {
    const verdict = readinessOfMemory(memory(), around(T0, extra));
    expect(verdict.ready).toBe(ready);
    // A ready daemon gives no reason.
    expect(String(verdict.reason)).toMatch(reason ?? /^undefined$/);
  });

  function okMemory() {
    return pass(EMPTY_DAEMON_MEMORY, [report('a', 'ok')]).memory;
  }
});

describe('daemonStatus', () => {
  it('lists the orgs in name order with what the shell knows now', () => {
    const memory = pass(EMPTY_DAEMON_MEMORY, [report('b', 'ok'), report('a', 'failed')]).memory;
    const status = daemonStatus(memory, {
      manifests: 'm',
      ready: true,
      passRunning: false,
      shard: null,
      mode: 'normal',
      window: null,
      stateFile: { path: '/s.json', writeError: null },
      tokenSource: (name) => (name === 'a' ? 'token-dir:a' : null),
    });
    expect(Object.keys(status.orgs)).toEqual(['a', 'b']);
    expect(status.orgs['a']?.tokenSource).toBe('token-dir:a');
    expect(status.orgs['b']?.tokenSource).toBeNull();
    expect(status).toMatchObject({ revision: 'rev-1', passes: 1, manifests: 'm' });
    expect(status.notifications).toBeUndefined();
  });
});

describe('orgErrorMessage', () => {
  it('sums up an invalid org by its likeliest cause: the misspelt key, not the key it leaves missing', () => {
    const at = (line: number, message: string) => ({
      file: 'manifests/acme.yaml',
      line,
      column: 5,
      path: 'environments[0]',
      message,
    });
    const message = orgErrorMessage({
      org: 'acme',
      status: 'invalid',
      changes: [],
      unchanged: [],
      unmanaged: [],
      errors: [
        at(3, 'is missing its required key "type"'),
        at(4, 'unknown key "tpye" (did you mean "type"?)'),
      ],
    });
    expect(message).toBe(
      'invalid manifests (2 problems): manifests/acme.yaml:4:5 environments[0]: unknown key "tpye" (did you mean "type"?)',
    );
  });
});
