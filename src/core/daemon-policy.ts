/**
 * The daemon's decisions, as pure functions: which orgs a pass looks at, when a failing org is
 * tried again, and whether the daemon is ready and healthy. daemon/daemon.ts carries them out.
 */
import { shardOf } from './shard.ts';

/** How long an org waits after its first failure; it doubles with each failure in a row. */
export const BASE_BACKOFF_MS = 5_000;
/** The backoff cap when the periodic resync is off. */
export const BACKOFF_CAP_WITHOUT_INTERVAL_MS = 300_000;

/** Whether this replica reconciles `org`: its shard's, and among `--org` when given. */
export function ownsOrg(
  org: string,
  shard: { readonly index: number; readonly count: number } | undefined,
  only: readonly string[] | undefined,
): boolean {
  return (
    (shard === undefined || shardOf(org, shard.count) === shard.index) &&
    (only === undefined || only.includes(org))
  );
}

/**
 * A pass started only by file events or a new revision looks at the orgs whose manifests changed;
 * any other trigger (start, interval, webhook, SIGHUP, backoff) looks at every org, which is what
 * heals drift made in the service by hand.
 */
export function isTargetedPass(reasons: readonly string[]): boolean {
  return reasons.every((r) => r.startsWith('file ') || r.startsWith('revision '));
}

/** An org as the selection sees it: its name and the files that serve it. */
export interface OrgFiles {
  readonly org: string;
  readonly files: readonly string[];
}

/**
 * The orgs a pass looks at: all of them, or for a targeted pass those touched by a changed file
 * (one that serves them now or served them at the last pass), or never seen before. Without a
 * list of changed files (`changed` undefined), anything may have changed.
 */
export function orgsToLook<T extends OrgFiles>(
  orgs: readonly T[],
  reasons: readonly string[],
  changed: ReadonlySet<string> | undefined,
  seenBefore: ReadonlyMap<string, ReadonlySet<string>>,
): T[] {
  if (!isTargetedPass(reasons) || changed === undefined) return [...orgs];
  return orgs.filter((org) => {
    const before = seenBefore.get(org.org);
    return (
      before === undefined ||
      org.files.some((file) => changed.has(file)) ||
      [...before].some((file) => changed.has(file))
    );
  });
}

/** An org backing off after failures. */
export interface Backoff {
  readonly failures: number;
  readonly nextAttemptAt: number;
  /** What the failure happened with (its manifests and the token): a change to it is tried at once. */
  readonly fingerprint: string;
}

/** Whether an org is due: not backing off, its time has come, or what it failed with changed. */
export function isDue(backoff: Backoff | undefined, now: number, fingerprint: string): boolean {
  return (
    backoff === undefined || backoff.nextAttemptAt <= now || backoff.fingerprint !== fingerprint
  );
}

/**
 * The backoff after one more failure: 5 s, 10 s, 20 s, ... doubling, capped at the interval (or
 * at 5 minutes when the interval is off), never on every event.
 */
export function nextBackoff(
  previous: Backoff | undefined,
  now: number,
  intervalMs: number,
  fingerprint: string,
): Backoff {
  const failures = (previous?.failures ?? 0) + 1;
  const cap = intervalMs > 0 ? intervalMs : BACKOFF_CAP_WITHOUT_INTERVAL_MS;
  const delay = Math.min(cap, BASE_BACKOFF_MS * 2 ** (failures - 1));
  return { failures, nextAttemptAt: now + delay, fingerprint };
}

/** The delay to the next periodic pass: the interval, ±10% (`random` in [0, 1)). */
export function intervalDelay(intervalMs: number, random: number): number {
  return Math.round(intervalMs * (0.9 + 0.2 * random));
}

/**
 * Ready once the first pass finished, and while the last one ended within about three intervals
 * (plus a minute): a daemon that stopped passing is taken out of rotation.
 */
export function readiness(
  firstPassDone: boolean,
  lastPassEnd: number | undefined,
  intervalMs: number,
  now: number,
): { ready: boolean; reason?: string } {
  if (!firstPassDone) return { ready: false, reason: 'the first pass has not finished yet' };
  if (
    intervalMs > 0 &&
    lastPassEnd !== undefined &&
    now - lastPassEnd > 3 * intervalMs * 1.1 + 60_000
  ) {
    return {
      ready: false,
      reason: `no pass has finished for ${Math.round((now - lastPassEnd) / 1000)} s`,
    };
  }
  return { ready: true };
}

/** Unhealthy when a pass has been running for far too long (the loop is wedged). */
export function health(
  passStartedAt: number | undefined,
  intervalMs: number,
  now: number,
): { healthy: boolean; reason?: string } {
  const limit = Math.max(15 * 60_000, 3 * intervalMs);
  if (passStartedAt !== undefined && now - passStartedAt > limit) {
    return {
      healthy: false,
      reason: `a pass has been running for ${Math.round((now - passStartedAt) / 1000)} s`,
    };
  }
  return { healthy: true };
}
