/**
 * One org's card on the status page: its state as a badge of its colour, how its environments
 * stand, where its token came from, its last error with every problem at file:line:col, then what is pending, drifted or
 * waiting to be archived. Every name and message is escaped.
 */
import type { EnvironmentRow, OrgState, OrgStatus } from './daemon-status.ts';
import { driftTable, pendingTable } from './status-page-changes.ts';
import { ago, badge, count, esc, problemList, statusClass, when } from './status-page-format.ts';
import {
  archivesTable,
  documentsTable,
  environmentsTable,
  unmanagedList,
} from './status-page-parts.ts';

export type OrgCard = OrgStatus & { readonly state: OrgState; readonly tokenSource: string | null };

/** What each state means, said under the card's name. */
const STATE_WORDS: Readonly<Record<OrgState, string>> = {
  synced: 'The service holds what the manifests declare.',
  pending: 'Changes are planned; the next pass sends them.',
  drifted: 'The service was changed by hand; observe mode does not set it back.',
  'waiting for window': 'Changes are planned; they are sent when a sync window opens.',
  suspended: 'suspend: true in its manifests: planned, nothing is sent.',
  invalid: 'Its manifests are invalid: the org is left alone until they are fixed.',
  failed: 'The last pass failed for this org.',
  'not converged': 'Changes were sent, but the service did not take them.',
};

const ROW_STATES: readonly EnvironmentRow['state'][] = [
  'synced',
  'pending',
  'drifted',
  'failed',
  'not converged',
];

/** How many environments are in each state, each with a dot of its colour; empty when none. */
function counts(org: OrgStatus): string {
  const states = ROW_STATES.flatMap((state) => {
    const n = org.environments.filter((row) => row.state === state).length;
    return n === 0
      ? []
      : [`<span class="dot ${statusClass(state)}">${esc(String(n))} ${esc(state)}</span>`];
  });
  const plain = (text: string) => `<span>${text}</span>`;
  const all = [
    ...(org.environments.length === 0
      ? []
      : [plain(count(org.environments.length, 'environment'))]),
    ...states,
    ...(org.pending === 0 ? [] : [plain(count(org.pending, 'pending change'))]),
    ...(org.unmanaged === 0 ? [] : [plain(`${esc(String(org.unmanaged))} unmanaged`)]),
  ];
  return all.length === 0 ? '' : `<p class="counts">${all.join('')}</p>`;
}

function lastError(org: OrgStatus, now: number): string {
  if (org.lastError === null) return '';
  const problems = org.lastError.errors ?? [];
  return (
    `<div class="error"><p><strong>Error</strong> <span class="dim">${when(org.lastError.at, now)}</span></p>` +
    `<p class="message">${esc(org.lastError.message)}</p>` +
    (problems.length > 0 ? problemList(problems) : '') +
    '</div>'
  );
}

/** Whether the card holds tables wide enough to take the whole row. */
function isWide(org: OrgStatus): boolean {
  return (
    org.pending > 0 ||
    org.recentDrift.length > 0 ||
    (org.lastError?.errors?.length ?? 0) > 0 ||
    (org.pendingArchives?.length ?? 0) > 0 ||
    (org.pendingPolicyDocuments?.length ?? 0) > 0
  );
}

/** What the state means in observe mode, where nothing is sent, when it differs. */
const OBSERVE_WORDS: Partial<Record<OrgState, string>> = {
  pending: 'Changes are planned; observe mode sends nothing.',
};

/** Where the org's token came from (never the token): `token-dir:acme`, `token-file`, ... */
function tokenWords(org: OrgCard): string {
  return org.tokenSource === null ? 'no token' : `token: <code>${esc(org.tokenSource)}</code>`;
}

/** The card; `index` numbers the heading's id (names go into no id). */
export function orgCard(
  name: string,
  org: OrgCard,
  index: number,
  around: { readonly now: number; readonly observe: boolean },
): string {
  const { now } = around;
  const words = (around.observe ? OBSERVE_WORDS[org.state] : undefined) ?? STATE_WORDS[org.state];
  const id = `org-${index}`;
  const backoff = [
    org.failures > 0 ? `Failed passes in a row: ${esc(String(org.failures))}` : '',
    org.nextAttemptAt === null ? '' : `Next attempt ${when(org.nextAttemptAt, now)}`,
  ].filter((part) => part !== '');
  return (
    `<section class="card ${statusClass(org.state)}${isWide(org) ? ' wide' : ''}" aria-labelledby="${id}">` +
    `<div class="card-head"><h3 id="${id}"><code>${esc(name)}</code></h3>${badge(org.state)}</div>` +
    `<p class="dim">${esc(words)}</p>` +
    counts(org) +
    `<p class="dim">Last success ${ago(org.lastSuccess, now)} · last attempt ${ago(org.lastAttempt, now)} · ${tokenWords(org)}</p>` +
    (backoff.length > 0 ? `<p>${backoff.join(' · ')}</p>` : '') +
    lastError(org, now) +
    environmentsTable(name, org) +
    unmanagedList(name, org) +
    pendingTable(org) +
    documentsTable(org) +
    archivesTable(org) +
    driftTable(org, now) +
    '</section>'
  );
}
