/**
 * Which notifications a pass makes: a pure function of what the daemon remembers of each org and
 * of the pass's reports (docs/notifications.md). notify/delivery.ts delivers them.
 */
import type { ChangeAction, FieldDiffs } from '../core/model.ts';
import type { ChangeReport, OrgReport, ProblemReport } from '../core/report.ts';

/** At most this many problems or environments are listed in one event; the rest are counted. */
export const MAX_EVENT_ITEMS = 50;

/** An environment named by an event (for `policy-document`, the document). */
export interface EventEnvironment {
  readonly name: string;
  readonly action: ChangeAction | 'archive' | 'policy-document';
  readonly fields: FieldDiffs;
  readonly error?: string | undefined;
}

type Environments = {
  readonly environments: readonly EventEnvironment[];
  readonly omitted: number;
};

/** What each type of event carries besides the org, the revision and the time. */
export type NotifyEventData =
  | ({
      readonly type: 'org.failed';
      readonly reason: string;
      readonly previous: 'ok' | 'failed' | 'invalid' | null;
    } & Environments)
  | {
      readonly type: 'org.invalid' | 'manifests.error';
      readonly problems: readonly ProblemReport[];
      readonly omitted: number;
    }
  | { readonly type: 'org.recovered'; readonly previous: 'failed' | 'invalid' }
  | ({ readonly type: 'drift.healed' | 'drift.detected' | 'change.not-converged' } & Environments);

/** One notification, before it is formatted: `org` null for problems of no org, `summary` raw. */
export interface NotifyEvent {
  readonly type: NotifyEventData['type'];
  readonly org: string | null;
  readonly revision: string | null;
  readonly time: string;
  readonly summary: string;
  readonly data: NotifyEventData;
}

/** An org's last pass, and its failure, changes not converged and drift as keys, not to repeat. */
export interface OrgNotifyState {
  readonly kind: 'ok' | 'failed' | 'invalid';
  readonly reason: string;
  readonly notConverged: string;
  readonly driftFound?: string;
}

export interface NotifyMemory {
  readonly orgs: ReadonlyMap<string, OrgNotifyState>;
  /** The problems that belong to no org, as a key. */
  readonly unattributed: string;
}

export const EMPTY_NOTIFY_MEMORY: NotifyMemory = { orgs: new Map(), unattributed: '' };

/** One pass: the orgs owned now (the others are forgotten), and its reports in order. */
export interface PassOutcome {
  readonly owned: readonly string[];
  readonly reports: readonly OrgReport[];
  readonly unattributed: readonly ProblemReport[];
  readonly revision: string | null;
  readonly time: string;
}

const problemsOf = (problems: readonly ProblemReport[]) => ({
  problems: problems.slice(0, MAX_EVENT_ITEMS),
  omitted: Math.max(0, problems.length - MAX_EVENT_ITEMS),
});

const environmentsOf = (environments: readonly EventEnvironment[]) => ({
  environments: environments.slice(0, MAX_EVENT_ITEMS),
  omitted: Math.max(0, environments.length - MAX_EVENT_ITEMS),
});

const problemsKey = (problems: readonly ProblemReport[]) =>
  JSON.stringify(problems.map((p) => [p.file, p.line, p.column, p.path, p.message]));

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `2 environments set back (prod, web)`: a count, words, and the first five names. */
const named = (items: readonly { readonly name: string }[], word: string, then = '') =>
  `${plural(items.length, word)}${then} (${items
    .slice(0, 5)
    .map((c) => c.name)
    .join(', ')}${items.length > 5 ? ', ...' : ''})`;

const where = (p: ProblemReport) => `${p.file}:${p.line}:${p.column} ${p.message}`;

function environment({ name, action, fields, error }: ChangeReport): EventEnvironment {
  return { name, action, fields, ...(error === undefined ? {} : { error }) };
}

/** Why an org failed, as one line: its own error, or its failed changes (not-converged aside). */
function failureReason(report: OrgReport): string {
  if (report.error !== undefined) return report.error;
  const failed = (name: string, action: string, error?: string) =>
    `${name}: ${action} failed${error === undefined ? '' : ` (${error})`}`;
  const archives = (report.archives ?? []).filter((a) => a.result === 'failed');
  // The guard refuses every archive of the org with one message: said once.
  const guard = archives.find((a) => a.error?.startsWith('not archived: ') === true)?.error;
  return [
    ...report.changes
      .filter((c) => c.result === 'failed')
      .map((c) => failed(c.name, c.action, c.error)),
    ...archives.filter((a) => a.error !== guard).map((a) => failed(a.name, 'archive', a.error)),
    ...(guard === undefined ? [] : [guard]),
  ].join('; ');
}

export type CommitStatus = ReturnType<typeof commitStatus>;

/** An org's commit status after a pass (github:// notify URLs); `held`: why it only planned. */
export function commitStatus(report: OrgReport, held: string | undefined) {
  const status = (state: 'success' | 'failure' | 'pending', description: string) =>
    ({ org: report.org, state, description }) as const;
  const first = report.errors[0];
  if (report.status === 'invalid')
    return status('failure', `invalid manifests${first ? `: ${where(first)}` : ''}`);
  const reason = report.status === 'failed' ? failureReason(report) : '';
  if (reason !== '') return status('failure', reason);
  const why = report.suspended === true ? 'the org is suspended' : held;
  const items = [...report.changes, ...(report.archives ?? []), ...(report.policyDocuments ?? [])];
  const planned = items.filter((item) => item.result === 'planned');
  const untaken = items.filter(
    (i) => i.result === 'not-converged' || (!why && i.result === 'planned'),
  );
  if (untaken.length > 0)
    return status('failure', named(untaken, 'change', ' the service did not take'));
  if (planned.length > 0) return status('pending', `${named(planned, 'change')} not sent: ${why}`);
  return status('success', 'the service holds what this revision declares');
}

function orgEvents(
  report: OrgReport,
  previous: OrgNotifyState | undefined,
  base: { revision: string | null; time: string },
): { events: NotifyEvent[]; next: OrgNotifyState } {
  const { org } = report;
  const events: NotifyEvent[] = [];
  const event = (summary: string, data: NotifyEventData) =>
    events.push({ type: data.type, org, ...base, summary, data });
  if (report.status === 'invalid') {
    const key = problemsKey(report.errors);
    if (previous?.kind !== 'invalid' || previous.reason !== key) {
      const first = report.errors[0];
      event(
        `org ${org} has invalid manifests (${plural(report.errors.length, 'problem')})` +
          (first === undefined ? '' : `: ${where(first)}`) +
          '; its environments are held',
        { type: 'org.invalid', ...problemsOf(report.errors) },
      );
    }
    return { events, next: { kind: 'invalid', reason: key, notConverged: '' } };
  }
  const failedChanges = report.changes.filter((c) => c.result === 'failed');
  // Changes, archives and uploads that the service answered and did not carry out.
  const notConverged: EventEnvironment[] = [
    ...report.changes.filter((c) => c.result === 'not-converged').map(environment),
    ...(report.archives ?? [])
      .filter((a) => a.result === 'not-converged')
      .map(({ name, error }) => ({ name, action: 'archive' as const, fields: {}, error })),
    ...(report.policyDocuments ?? [])
      .filter((d) => d.result === 'not-converged')
      .map(({ name, error }) => ({ name, action: 'policy-document' as const, fields: {}, error })),
  ];
  const hardFailure =
    report.error !== undefined ||
    failedChanges.length > 0 ||
    (report.archives ?? []).some((a) => a.result === 'failed');
  const reason = hardFailure ? failureReason(report) : '';
  const notConvergedKey = notConverged.map((c) => `${c.name}:${c.action}`).join('\n');
  const wasFailing = previous?.kind === 'failed';
  if (hardFailure && !(wasFailing && previous.reason === reason)) {
    event(`org ${org} failed: ${reason}`, {
      type: 'org.failed',
      reason,
      ...environmentsOf(failedChanges.map(environment)),
      previous: previous?.kind ?? null,
    });
  }
  if (report.status === 'ok' && (previous?.kind === 'failed' || previous?.kind === 'invalid')) {
    event(
      `org ${org} converges again (it ${previous.kind === 'failed' ? 'had failed' : 'had invalid manifests'})`,
      { type: 'org.recovered', previous: previous.kind },
    );
  }
  const healed = report.changes.filter((c) => c.cause === 'drift' && c.result === 'applied');
  if (healed.length > 0) {
    event(`drift healed in org ${org}: ${named(healed, 'environment', ' set back')}`, {
      type: 'drift.healed',
      ...environmentsOf(healed.map(environment)),
    });
  }
  // Drift found and not set back: announced when the set of drifted environments changes.
  const found = report.changes.filter((c) => c.cause === 'drift' && c.result === 'planned');
  const driftFound = found.map((c) => `${c.name}:${Object.keys(c.fields).join(',')}`).join('\n');
  if (found.length > 0 && driftFound !== (previous?.driftFound ?? '')) {
    event(`drift found in org ${org}, not set back: ${named(found, 'environment')}`, {
      type: 'drift.detected',
      ...environmentsOf(found.map(environment)),
    });
  }
  if (notConverged.length > 0 && !(wasFailing && previous.notConverged === notConvergedKey)) {
    event(`org ${org}: ${named(notConverged, 'change', ' the service did not take')}`, {
      type: 'change.not-converged',
      ...environmentsOf(notConverged),
    });
  }
  const kind = report.status === 'ok' ? 'ok' : 'failed';
  return { events, next: { kind, reason, notConverged: notConvergedKey, driftFound } };
}

/** The notifications of one pass, in order, and what to remember for the next. */
export function passEvents(
  memory: NotifyMemory,
  pass: PassOutcome,
): { events: NotifyEvent[]; memory: NotifyMemory } {
  const base = { revision: pass.revision, time: pass.time };
  const events: NotifyEvent[] = [];
  const owned = new Set(pass.owned);
  const orgs = new Map([...memory.orgs].filter(([org]) => owned.has(org)));
  const first = pass.unattributed[0];
  const unattributed = first === undefined ? '' : problemsKey(pass.unattributed);
  if (first !== undefined && unattributed !== memory.unattributed) {
    const count = plural(pass.unattributed.length, 'manifest problem');
    const data = { type: 'manifests.error', ...problemsOf(pass.unattributed) } as const;
    const summary = `${count} belonging to no org: ${where(first)}`;
    events.push({ type: data.type, org: null, ...base, summary, data });
  }
  for (const report of pass.reports) {
    const result = orgEvents(report, orgs.get(report.org), base);
    events.push(...result.events);
    orgs.set(report.org, result.next);
  }
  return { events, memory: { orgs, unattributed } };
}
