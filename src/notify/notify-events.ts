/**
 * Which notifications a pass produces: a pure function of what the daemon remembers of each org
 * (how its last reconciled pass ended, and what its manifests were) and this pass's reports.
 * notify/notify.ts delivers them; docs/notifications.md describes them.
 */
import type { ChangeAction, FieldDiffs } from '../core/model.ts';
import type { OrgReport, ProblemReport } from '../core/report.ts';
import {
  bounded,
  environment,
  failedArchives,
  failureReason,
  plural,
  problemsKey,
} from './notify-event-parts.ts';

export const NOTIFY_EVENT_TYPES = [
  'org.failed',
  'org.invalid',
  'org.recovered',
  'drift.healed',
  'drift.detected',
  'change.not-converged',
  'manifests.error',
] as const;

export type NotifyEventType = (typeof NOTIFY_EVENT_TYPES)[number];

export { MAX_EVENT_ITEMS } from './notify-event-parts.ts';

/** An environment named by an event, with the fields concerned. */
export interface EventEnvironment {
  /** The environment's name (for `policy-document`, the policy document's). */
  readonly name: string;
  readonly action: ChangeAction | 'archive' | 'policy-document';
  readonly fields: FieldDiffs;
  readonly error?: string | undefined;
}

/** What each type of event carries besides the org, the revision and the time. */
export type NotifyEventData =
  | {
      readonly type: 'org.failed';
      /** Why the org failed: its own error, or its failed changes. */
      readonly reason: string;
      readonly environments: readonly EventEnvironment[];
      readonly omitted: number;
      /** How the org's previous pass ended (null: none since the daemon started). */
      readonly previous: 'ok' | 'failed' | 'invalid' | null;
    }
  | {
      readonly type: 'org.invalid';
      readonly problems: readonly ProblemReport[];
      readonly omitted: number;
    }
  | { readonly type: 'org.recovered'; readonly previous: 'failed' | 'invalid' }
  | {
      readonly type: 'drift.healed';
      readonly environments: readonly EventEnvironment[];
      readonly omitted: number;
    }
  | {
      readonly type: 'drift.detected';
      readonly environments: readonly EventEnvironment[];
      readonly omitted: number;
    }
  | {
      readonly type: 'change.not-converged';
      readonly environments: readonly EventEnvironment[];
      readonly omitted: number;
    }
  | {
      readonly type: 'manifests.error';
      readonly problems: readonly ProblemReport[];
      readonly omitted: number;
    };

/** One notification, before it is formatted for a receiver. */
export interface NotifyEvent {
  readonly type: NotifyEventType;
  /** The org it is about; null for a problem that belongs to no org. */
  readonly org: string | null;
  /** The manifests revision (git-sync's commit) when known. */
  readonly revision: string | null;
  /** ISO time. */
  readonly time: string;
  /** One line for a person (unescaped: each format escapes it). */
  readonly summary: string;
  readonly data: NotifyEventData;
}

/** What the daemon remembers of an org for notifications: how its last pass ended. */
export interface OrgNotifyState {
  readonly kind: 'ok' | 'failed' | 'invalid';
  /** What the failure was (empty when none): an unchanged reason is not announced again. */
  readonly reason: string;
  /** The changes that did not converge (empty when none). */
  readonly notConverged: string;
  /** The drift found and not set back (observe, a closed window, suspended; empty when none). */
  readonly driftFound?: string;
}

/** What the daemon remembers between passes. */
export interface NotifyMemory {
  readonly orgs: ReadonlyMap<string, OrgNotifyState>;
  /** The problems that belong to no org, as last announced (empty when none). */
  readonly unattributed: string;
}

export const EMPTY_NOTIFY_MEMORY: NotifyMemory = { orgs: new Map(), unattributed: '' };

/** One pass, as the decision needs it. */
export interface PassOutcome {
  /** The orgs this replica reconciles now: the others are forgotten. */
  readonly owned: readonly string[];
  /** The reports of the orgs this pass reconciled, in the order to announce them. */
  readonly reports: readonly OrgReport[];
  /** Problems that belong to no org. */
  readonly unattributed: readonly ProblemReport[];
  readonly revision: string | null;
  /** ISO time of the events. */
  readonly time: string;
}

/** The events of one org's pass, in their order, and what to remember of it. */
function orgEvents(
  report: OrgReport,
  previous: OrgNotifyState | undefined,
  base: { revision: string | null; time: string },
): { events: NotifyEvent[]; next: OrgNotifyState } {
  const { org } = report;
  const events: NotifyEvent[] = [];
  const event = (summary: string, data: NotifyEventData): void => {
    events.push({ type: data.type, org, ...base, summary, data });
  };

  if (report.status === 'invalid') {
    const key = problemsKey(report.errors);
    if (previous?.kind !== 'invalid' || previous.reason !== key) {
      const { items, omitted } = bounded(report.errors);
      const first = report.errors[0];
      event(
        `org ${org} has invalid manifests (${plural(report.errors.length, 'problem')})` +
          (first === undefined
            ? ''
            : `: ${first.file}:${first.line}:${first.column} ${first.message}`) +
          '; its environments are held',
        { type: 'org.invalid', problems: items, omitted },
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
    report.error !== undefined || failedChanges.length > 0 || failedArchives(report).length > 0;
  const reason = hardFailure ? failureReason(report) : '';
  const notConvergedKey = notConverged.map((c) => `${c.name}:${c.action}`).join('\n');
  const wasFailing = previous?.kind === 'failed';

  if (hardFailure && !(wasFailing && previous.reason === reason)) {
    const { items, omitted } = bounded(failedChanges.map(environment));
    event(`org ${org} failed: ${reason}`, {
      type: 'org.failed',
      reason,
      environments: items,
      omitted,
      previous: previous?.kind ?? null,
    });
  }
  if (report.status === 'ok' && (previous?.kind === 'failed' || previous?.kind === 'invalid')) {
    event(
      `org ${org} converges again (it ${previous.kind === 'failed' ? 'had failed' : 'had invalid manifests'})`,
      { type: 'org.recovered', previous: previous.kind },
    );
  }
  // Drift set back: someone changed the service by hand while the manifests stayed as envsync
  // last applied them (core/drift.ts), and this pass applied them again.
  const healed = report.changes.filter((c) => c.cause === 'drift' && c.result === 'applied');
  if (healed.length > 0) {
    const { items, omitted } = bounded(healed.map(environment));
    event(
      `drift healed in org ${org}: ${plural(healed.length, 'environment')} set back (${healed
        .slice(0, 5)
        .map((c) => c.name)
        .join(', ')}${healed.length > 5 ? ', ...' : ''})`,
      { type: 'drift.healed', environments: items, omitted },
    );
  }
  // Drift found and not set back: announced when the set of drifted environments changes.
  const found = report.changes.filter((c) => c.cause === 'drift' && c.result === 'planned');
  const driftFound = found.map((c) => `${c.name}:${Object.keys(c.fields).join(',')}`).join('\n');
  if (found.length > 0 && driftFound !== (previous?.driftFound ?? '')) {
    const { items, omitted } = bounded(found.map(environment));
    event(
      `drift found in org ${org}, not set back: ${plural(found.length, 'environment')} (${found
        .slice(0, 5)
        .map((c) => c.name)
        .join(', ')}${found.length > 5 ? ', ...' : ''})`,
      { type: 'drift.detected', environments: items, omitted },
    );
  }
  if (notConverged.length > 0 && !(wasFailing && previous.notConverged === notConvergedKey)) {
    const { items, omitted } = bounded(notConverged);
    event(
      `org ${org}: ${plural(notConverged.length, 'change')} the service did not take (${notConverged
        .slice(0, 5)
        .map((c) => c.name)
        .join(', ')}${notConverged.length > 5 ? ', ...' : ''})`,
      { type: 'change.not-converged', environments: items, omitted },
    );
  }
  return {
    events,
    next: {
      kind: report.status === 'ok' ? 'ok' : 'failed',
      reason,
      notConverged: notConvergedKey,
      driftFound,
    },
  };
}

/**
 * The notifications of one pass, and what to remember for the next. Per org, in this order:
 * `org.invalid`, `org.failed` or `org.recovered`, then `drift.healed`, then
 * `change.not-converged`; the orgs in the order of `reports`; `manifests.error` first.
 *
 * - `org.failed`: the first failure (after a success, at the first pass, or after invalid
 *   manifests), and again only when the reason changes;
 * - `org.invalid`: when the manifests become invalid, and again when the problems change;
 * - `org.recovered`: an org that had failed or was invalid converges;
 * - `drift.healed`: changes applied that were drift (core/drift.ts): the service had been changed
 *   while the manifests stayed as envsync last applied them; at any pass, the first included;
 * - `drift.detected`: drift found and not set back (`--observe`, outside a sync window, or a
 *   suspended org), when the drifted environments or fields change;
 * - `change.not-converged`: changes the service did not take, again only when they change;
 * - `manifests.error`: problems that belong to no org appear or change.
 */
export function passEvents(
  memory: NotifyMemory,
  pass: PassOutcome,
): { events: NotifyEvent[]; memory: NotifyMemory } {
  const base = { revision: pass.revision, time: pass.time };
  const events: NotifyEvent[] = [];
  const owned = new Set(pass.owned);
  const orgs = new Map([...memory.orgs].filter(([org]) => owned.has(org)));

  const unattributed = pass.unattributed.length === 0 ? '' : problemsKey(pass.unattributed);
  if (unattributed !== '' && unattributed !== memory.unattributed) {
    const { items, omitted } = bounded(pass.unattributed);
    const first = pass.unattributed[0] as ProblemReport;
    events.push({
      type: 'manifests.error',
      org: null,
      ...base,
      summary:
        `${plural(pass.unattributed.length, 'manifest problem')} belonging to no org: ` +
        `${first.file}:${first.line}:${first.column} ${first.message}`,
      data: { type: 'manifests.error', problems: items, omitted },
    });
  }

  for (const report of pass.reports) {
    const result = orgEvents(report, orgs.get(report.org), base);
    events.push(...result.events);
    orgs.set(report.org, result.next);
  }
  return { events, memory: { orgs, unattributed } };
}
