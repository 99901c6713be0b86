/**
 * The daemon's decisions, as pure functions: which orgs a pass looks at, when a failing org is
 * tried again, and whether the daemon is ready and healthy. daemon/daemon.ts carries them out.
 */
import { shardOf } from '../core/shard.ts';

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

/**
 * Whether a peer address is this machine's loopback: 127.0.0.0/8, ::1, or an IPv4 loopback
 * mapped into IPv6 (::ffff:127.x.y.z). Only the socket's own address counts (never a header such
 * as X-Forwarded-For, which any caller can write).
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const lower = address.toLowerCase();
  if (lower === '::1' || lower === '0:0:0:0:0:0:0:1') return true;
  const v4 = lower.startsWith('::ffff:') ? lower.slice('::ffff:'.length) : lower;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** What a POST /reconcile gets: run (or join) a pass, or 401 without one. */
export type WebhookVerdict =
  | { readonly kind: 'accept' }
  | { readonly kind: 'refuse'; readonly reason: string };

/**
 * Whether a webhook may start a pass. Without a configured secret every caller may (as before);
 * with one, loopback callers (a git-sync sidecar in the same pod) need none, and anyone else
 * must present it: `credential` says whether they did, and rightly.
 */
export function webhookVerdict(
  secretConfigured: boolean,
  remoteAddress: string | undefined,
  credential: 'none' | 'valid' | 'invalid',
): WebhookVerdict {
  if (!secretConfigured || isLoopbackAddress(remoteAddress)) return { kind: 'accept' };
  if (credential === 'valid') return { kind: 'accept' };
  return {
    kind: 'refuse',
    reason:
      credential === 'none'
        ? 'this address must send the webhook secret (Authorization: Bearer, or X-Hub-Signature-256)'
        : 'the webhook secret does not match',
  };
}

/**
 * When the next webhook pass may start: at once when none ran in the last `minIntervalMs`, else
 * `minIntervalMs` after the last one started (posts in between all join that pass).
 */
export function nextWebhookPassAt(
  lastStartedAt: number | undefined,
  now: number,
  minIntervalMs: number,
): number {
  if (lastStartedAt === undefined) return now;
  return Math.max(now, lastStartedAt + minIntervalMs);
}

/**
 * How long to wait before reading the manifests: 0 once no file event came for `settleMs`, else
 * the time left. Files edited in place are read only when settled; a writer that pauses between
 * its writes shows as more events, so it is waited out too.
 */
export function settleDelay(
  lastEventAt: number | undefined,
  now: number,
  settleMs: number,
): number {
  if (lastEventAt === undefined) return 0;
  return Math.max(0, lastEventAt + settleMs - now);
}

/** What a daemon's readiness looks at besides pass times: how its orgs fared last. */
export interface OrgOutcomes {
  /** Orgs this replica reconciles. */
  readonly total: number;
  /** Of those, how many failed their last attempt (the API refused, was unreachable, ...). */
  readonly failed: number;
  /** Of those, how many have manifests that are invalid. */
  readonly invalid: number;
}

/**
 * Ready once the first pass finished, while passes keep ending (the last one within about three
 * intervals plus a minute), while the last pass could read the manifests, and while at least one
 * org is reconciled without error: when every org is failing or invalid (the API is down, the
 * token refused, every manifest broken), the replica is not ready until one succeeds again.
 */
export function readinessOf(input: {
  readonly firstPassDone: boolean;
  readonly lastPassEnd: number | undefined;
  readonly lastPassError: string | undefined;
  readonly intervalMs: number;
  readonly now: number;
  readonly orgs: OrgOutcomes;
  /** Why the state file could not be written last time, if it could not. */
  readonly stateWriteError?: string | undefined;
}): { ready: boolean; reason?: string } {
  const base = readiness(input.firstPassDone, input.lastPassEnd, input.intervalMs, input.now);
  if (!base.ready) return base;
  if (input.lastPassError !== undefined) {
    return { ready: false, reason: `the last pass failed: ${input.lastPassError}` };
  }
  // The state file serves every org: while it cannot be written, no change is sent anywhere.
  if (input.stateWriteError !== undefined) {
    return { ready: false, reason: `the state file cannot be written: ${input.stateWriteError}` };
  }
  const { total, failed, invalid } = input.orgs;
  if (total > 0 && failed + invalid >= total) {
    return {
      ready: false,
      reason:
        invalid === 0
          ? `every org (${total}) failed its last attempt; see /status`
          : `no org is reconciled: ${failed} failed, ${invalid} with invalid manifests; see /status`,
    };
  }
  return { ready: true };
}

/** The shortest whole stop: time for the state write even with `--shutdown-timeout 0`. */
export const MIN_STOP_MS = 2_000;
/** What a stop keeps, at most, after the pass's requests are aborted: the state, the drain. */
export const STOP_RESERVE_MS = 5_000;

/**
 * How a stop spends `--shutdown-timeout`: the pass in flight may finish within `passMs`, then
 * its requests are aborted and the state written and the notifications drained in what is left;
 * at `hardMs` the process exits whatever it still waits on. `hardMs` is the shutdown timeout
 * (MIN_STOP_MS at the least), so SIGTERM ends the daemon within it; `0` aborts the pass at once.
 */
export function stopBudget(shutdownTimeoutMs: number): { passMs: number; hardMs: number } {
  const hardMs = Math.max(shutdownTimeoutMs, MIN_STOP_MS);
  const reserve = Math.min(STOP_RESERVE_MS, hardMs / 2);
  return { passMs: Math.min(shutdownTimeoutMs, hardMs - reserve), hardMs };
}
