/**
 * The daemon's health and each org's state in one word, for `/status`, `/healthz` and the status
 * page: pure functions of what the daemon remembers.
 */
import type { DaemonStatus, OrgStatus } from './daemon-status.ts';

/**
 * How the daemon is doing: `failing` when its last pass failed as a whole or every org is invalid
 * or failed; `degraded` when some org is, or some manifest problem belongs to no org; `healthy`
 * otherwise. Suspended orgs, observe mode and closed windows are choices, not trouble.
 */
export type HealthLevel = 'healthy' | 'degraded' | 'failing';

export function healthLevel(
  status: Pick<DaemonStatus, 'lastPass' | 'errors'> & {
    readonly orgs: Readonly<Record<string, Pick<OrgStatus, 'status'>>>;
  },
): { level: HealthLevel; reason: string | null } {
  const orgs = Object.entries(status.orgs);
  const troubled = orgs.filter(([, org]) => org.status === 'invalid' || org.status === 'failed');
  if (status.lastPass?.result === 'error') {
    return {
      level: 'failing',
      reason: `the last pass failed: ${status.lastPass.error ?? 'error'}`,
    };
  }
  if (orgs.length > 0 && troubled.length === orgs.length) {
    return { level: 'failing', reason: `every org (${orgs.length}) is invalid or failed` };
  }
  if (troubled.length > 0) {
    const names = troubled.map(([name]) => name);
    return {
      level: 'degraded',
      reason: `${troubled.length} of ${orgs.length} org(s) invalid or failed: ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', ...' : ''}`,
    };
  }
  if (status.errors.length > 0) {
    return {
      level: 'degraded',
      reason: `${status.errors.length} manifest problem(s) belong to no org`,
    };
  }
  return { level: 'healthy', reason: null };
}

/** What an org's card says: one word that is true of it now. */
export type OrgState =
  | 'synced'
  | 'drifted'
  | 'pending'
  | 'suspended'
  | 'invalid'
  | 'failed'
  | 'not converged'
  | 'waiting for window';

/** An org's state, given the daemon's mode and whether a sync window is open. */
export function orgState(
  org: Pick<
    OrgStatus,
    | 'status'
    | 'suspended'
    | 'pending'
    | 'pendingChanges'
    | 'pendingArchives'
    | 'pendingPolicyDocuments'
  >,
  around: { readonly observe: boolean; readonly windowOpen: boolean },
): OrgState {
  if (org.status === 'invalid') return 'invalid';
  if (org.status === 'failed') {
    // Every change, archive and upload left was sent and did not take.
    const left = [
      ...org.pendingChanges,
      ...(org.pendingArchives ?? []),
      ...(org.pendingPolicyDocuments ?? []),
    ];
    const stuck = left.length > 0 && left.every((item) => item.result === 'not-converged');
    return stuck ? 'not converged' : 'failed';
  }
  if (org.suspended) return 'suspended';
  if (org.pending === 0) return 'synced';
  if (around.observe) {
    return org.pendingChanges.some((c) => c.cause === 'drift') ? 'drifted' : 'pending';
  }
  return around.windowOpen ? 'pending' : 'waiting for window';
}
