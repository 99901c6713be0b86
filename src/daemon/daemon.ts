import { createHash } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { clientFromSettings } from '../api/from-settings.ts';
import type { DaemonSettings } from '../config/daemon-settings.ts';
import type { Settings } from '../config/settings.ts';
import type { OrgReport } from '../core/report.ts';
import { shardOf } from '../core/shard.ts';
import { reconcile } from '../engine/reconcile.ts';
import { StateStore } from '../engine/state-store.ts';
import type { ManifestCache, OrgManifest } from '../manifests/load.ts';
import { DaemonMetrics } from './metrics.ts';
import { PassScheduler } from './scheduler.ts';
import { readSnapshot } from './snapshot.ts';
import { orgErrorMessage, type DaemonStatus, type OrgStatus } from './status.ts';
import { ManifestWatcher } from './watcher.ts';

export interface DaemonOptions {
  readonly settings: Settings;
  readonly daemon: DaemonSettings;
  readonly apiUrl: URL;
  /** Read before each pass, so a rotated token file is used without a restart. */
  readonly readToken: () => Promise<string>;
  readonly ca?: string | undefined;
  readonly cwd: string;
  readonly logger: Logger;
  /** Source of randomness for the interval's jitter (tests pass a fixed one). */
  readonly random?: () => number;
}

interface Backoff {
  failures: number;
  nextAttemptAt: number;
  /** The manifests the failure happened with: a change to them is tried at once. */
  fingerprint: string;
}

const BASE_BACKOFF_MS = 5_000;

/** What an org's failure happened with: its manifests and the token (hashed, never kept). */
function fingerprintOrg(org: OrgManifest, token: string): string {
  const tokenHash = createHash('sha256').update(token).digest('hex').slice(0, 16);
  return `${tokenHash}:${JSON.stringify(org.environments.map(({ source: _source, ...env }) => env))}`;
}

/**
 * The long-running reconciler: triggers (files, git-sync swaps, interval, webhook, SIGHUP) feed
 * one single-flight scheduler; each pass reads a consistent snapshot and runs the same engine as
 * `envsync sync`. Failing orgs back off on their own; invalid orgs keep their last state.
 */
export class Daemon {
  readonly metrics = new DaemonMetrics();
  readonly #options: DaemonOptions;
  readonly #logger: Logger;
  readonly #scheduler: PassScheduler;
  readonly #abort = new AbortController();
  readonly #orgs = new Map<string, OrgStatus>();
  readonly #backoff = new Map<string, Backoff>();
  /** The files that served each org at the last pass: a change to one of them touches the org. */
  readonly #seen = new Map<string, ReadonlySet<string>>();
  /** Parsed manifest files, kept between passes: a pass re-reads only what changed. */
  readonly #cache: ManifestCache = new Map();
  #watcher: ManifestWatcher | undefined;
  #state: StateStore | undefined;
  #intervalTimer: NodeJS.Timeout | undefined;
  #backoffTimer: NodeJS.Timeout | undefined;
  #revision: string | undefined;
  #passes = 0;
  #firstPassDone = false;
  #lastPassEnd: number | undefined;
  #lastPass: DaemonStatus['lastPass'] = null;
  #unattributed: DaemonStatus['errors'] = [];
  #stopping = false;

  constructor(options: DaemonOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#scheduler = new PassScheduler(
      (reasons) => this.#pass(reasons),
      options.daemon.debounceMs,
    );
  }

  /** Loads the state, starts watching and runs the first pass (not awaited). */
  async start(): Promise<void> {
    const { settings, cwd } = this.#options;
    this.#state = await StateStore.load(
      path.resolve(cwd, settings.state),
      this.#logger,
      this.#options.apiUrl.href,
    );
    this.#watcher = new ManifestWatcher({
      root: settings.manifests,
      cwd,
      logger: this.#logger,
      onFileEvent: (reason) => this.#scheduler.debounced(reason),
      onRetarget: (resolution) => {
        this.#logger.info(
          { revision: resolution.revision, path: resolution.realRoot },
          'manifests moved to a new revision',
        );
        this.#scheduler.now(`revision ${resolution.revision ?? resolution.realRoot}`);
      },
    });
    await this.#watcher.start();
    this.#scheduler.now('start');
  }

  /** Starts a pass now (webhook, SIGHUP). */
  trigger(reason: string): void {
    this.#scheduler.now(reason);
  }

  /** True once the first full pass finished and the last one ended recently enough. */
  get ready(): { ready: boolean; reason?: string } {
    if (!this.#firstPassDone)
      return { ready: false, reason: 'the first pass has not finished yet' };
    const { intervalMs } = this.#options.daemon;
    if (
      intervalMs > 0 &&
      this.#lastPassEnd !== undefined &&
      Date.now() - this.#lastPassEnd > 3 * intervalMs * 1.1 + 60_000
    ) {
      return {
        ready: false,
        reason: `no pass has finished for ${Math.round((Date.now() - this.#lastPassEnd) / 1000)} s`,
      };
    }
    return { ready: true };
  }

  /** False when a pass has been running for far too long (the loop is wedged). */
  get healthy(): { healthy: boolean; reason?: string } {
    const started = this.#scheduler.passStartedAt;
    const limit = Math.max(15 * 60_000, 3 * this.#options.daemon.intervalMs);
    if (started !== undefined && Date.now() - started > limit) {
      return {
        healthy: false,
        reason: `a pass has been running for ${Math.round((Date.now() - started) / 1000)} s`,
      };
    }
    return { healthy: true };
  }

  status(): DaemonStatus {
    return {
      revision: this.#revision ?? null,
      manifests: this.#options.settings.manifests,
      ready: this.ready.ready,
      passes: this.#passes,
      lastPass: this.#lastPass,
      passRunning: this.#scheduler.running,
      shard: this.#options.daemon.shard ?? null,
      errors: this.#unattributed,
      orgs: Object.fromEntries(
        [...this.#orgs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      ),
    };
  }

  /** Resolves when no pass runs or is pending (for tests). */
  idle(): Promise<void> {
    return this.#scheduler.idle();
  }

  /**
   * Graceful stop: no new triggers, the pass in flight may finish within the shutdown timeout
   * (then its requests are aborted), the state is written.
   */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    clearTimeout(this.#intervalTimer);
    clearTimeout(this.#backoffTimer);
    await this.#watcher?.close();
    const stopped = this.#scheduler.stop();
    const timeout = sleep(this.#options.daemon.shutdownTimeoutMs, 'timeout', { ref: false });
    if ((await Promise.race([stopped.then(() => 'done'), timeout])) === 'timeout') {
      this.#logger.warn(
        { shutdownTimeoutMs: this.#options.daemon.shutdownTimeoutMs },
        'shutdown timeout: aborting the requests in flight',
      );
      this.#abort.abort(new Error('shutting down'));
      await stopped;
    }
    await this.#state?.save();
  }

  #ownsOrg(org: string): boolean {
    const { shard } = this.#options.daemon;
    const only = this.#options.settings.orgs;
    return (
      (shard === undefined || shardOf(org, shard.count) === shard.index) &&
      (only === undefined || only.includes(org))
    );
  }

  async #pass(reasons: readonly string[]): Promise<void> {
    const started = Date.now();
    const logger = this.#logger;
    let result: 'success' | 'partial' | 'error' = 'success';
    let passError: string | undefined;
    let counts = { orgs: 0, skipped: 0, applied: 0, failed: 0, pending: 0, invalid: 0 };
    try {
      const { settings, cwd } = this.#options;
      const snapshot = await readSnapshot({
        root: settings.manifests,
        cwd,
        maxFileBytes: settings.maxFileBytes,
        cache: this.#cache,
      });
      if (snapshot.revision !== this.#revision || this.#passes === 0) {
        this.#revision = snapshot.revision;
        this.metrics.setRevision(snapshot.revision);
      }
      this.#unattributed = snapshot.manifests.unattributed.map(
        ({ org: _org, ...problem }) => problem,
      );
      const owned = snapshot.manifests.orgs.filter((org) => this.#ownsOrg(org.org));
      const ownedNames = new Set(owned.map((org) => org.org));
      // Orgs no manifest declares any more (or no longer ours): forget them.
      for (const org of this.#orgs.keys()) {
        if (!ownedNames.has(org)) {
          this.#orgs.delete(org);
          this.#backoff.delete(org);
          this.#seen.delete(org);
          this.metrics.forgetOrg(org);
        }
      }
      // A pass that only file events or a new revision started looks at the orgs whose
      // manifests changed; every other trigger (start, interval, webhook, SIGHUP, backoff) looks
      // at all of them, which is what heals drift made in the service by hand.
      const targeted = reasons.every((r) => r.startsWith('file ') || r.startsWith('revision '));
      const changedFiles = snapshot.manifests.changedFiles;
      const touched = (org: OrgManifest) =>
        changedFiles === undefined ||
        !this.#seen.has(org.org) ||
        org.files.some((file) => changedFiles.has(file)) ||
        [...(this.#seen.get(org.org) ?? [])].some((file) => changedFiles.has(file));
      const candidates = targeted ? owned.filter(touched) : owned;
      const token = await this.#options.readToken();
      const now = Date.now();
      // An org backing off is skipped until its time comes, unless its manifests or the token changed.
      const due = candidates.filter((org) => {
        const backoff = this.#backoff.get(org.org);
        return (
          backoff === undefined ||
          backoff.nextAttemptAt <= now ||
          backoff.fingerprint !== fingerprintOrg(org, token)
        );
      });
      counts = { ...counts, orgs: owned.length, skipped: candidates.length - due.length };
      for (const org of owned) this.#seen.set(org.org, new Set(org.files));
      const client = clientFromSettings(settings, {
        apiUrl: this.#options.apiUrl,
        getToken: () => token,
        logger,
        ca: this.#options.ca,
        signal: this.#abort.signal,
        events: this.metrics.clientEvents(),
      });
      try {
        const report = await reconcile({
          manifests: { ...snapshot.manifests, orgs: due },
          client,
          state: this.#state as StateStore,
          logger,
          dryRun: false,
          signal: this.#abort.signal,
          onOrgDone: (org) =>
            this.#recordOrg(
              org,
              due.find((o) => o.org === org.org),
              token,
            ),
        });
        counts.applied = report.summary.applied;
        counts.failed = report.summary.failed + report.summary.notConverged;
        counts.invalid = report.summary.invalidOrgs;
        counts.pending = [...this.#orgs.values()].reduce((n, o) => n + o.pending, 0);
        if (report.orgs.some((o) => o.status !== 'ok') || report.errors.length > 0)
          result = 'partial';
      } finally {
        await client.close();
      }
    } catch (error) {
      result = 'error';
      passError = error instanceof Error ? error.message : String(error);
      logger.error({ err: passError }, `pass failed: ${passError}`);
    }
    const finished = Date.now();
    this.#passes++;
    this.#firstPassDone ||= result !== 'error';
    this.#lastPassEnd = finished;
    this.#lastPass = {
      startedAt: new Date(started).toISOString(),
      finishedAt: new Date(finished).toISOString(),
      durationMs: finished - started,
      result,
      trigger: [...reasons].slice(0, 20),
      ...(passError === undefined ? {} : { error: passError }),
    };
    this.metrics.passes.inc({ result });
    this.metrics.passDuration.observe((finished - started) / 1000);
    this.metrics.ready.set(this.ready.ready ? 1 : 0);
    logger.info(
      {
        result,
        durationMs: finished - started,
        revision: this.#revision ?? null,
        trigger: reasons.slice(0, 5),
        ...counts,
      },
      `pass ${result}: ${counts.applied} applied, ${counts.failed} failed, ${counts.pending} pending, ${counts.invalid} invalid org(s) of ${counts.orgs}`,
    );
    this.#schedule();
  }

  #recordOrg(report: OrgReport, manifest: OrgManifest | undefined, token: string): void {
    const now = Date.now();
    const at = new Date(now).toISOString();
    this.metrics.recordOrg(report, now / 1000);
    const previous = this.#orgs.get(report.org);
    const message = orgErrorMessage(report);
    const pending = report.changes.filter((c) => c.result !== 'applied').length;
    const status: OrgStatus = {
      status: report.status,
      lastSuccess: report.status === 'ok' ? at : (previous?.lastSuccess ?? null),
      lastAttempt: at,
      lastError:
        message === undefined
          ? null
          : { message, at, ...(report.errors.length > 0 ? { errors: [...report.errors] } : {}) },
      // An invalid org is left alone: what was pending stays pending.
      pending: report.status === 'invalid' ? (previous?.pending ?? 0) : pending,
      unmanaged: report.status === 'invalid' ? (previous?.unmanaged ?? 0) : report.unmanaged.length,
      failures: 0,
      nextAttemptAt: null,
    };
    if (report.status === 'failed' && manifest !== undefined) {
      // Back off exponentially (capped at the interval), not on every event (issue 4, Behaviour).
      const failures = (this.#backoff.get(report.org)?.failures ?? 0) + 1;
      const cap = this.#options.daemon.intervalMs > 0 ? this.#options.daemon.intervalMs : 300_000;
      const delay = Math.min(cap, BASE_BACKOFF_MS * 2 ** (failures - 1));
      this.#backoff.set(report.org, {
        failures,
        nextAttemptAt: now + delay,
        fingerprint: fingerprintOrg(manifest, token),
      });
      status.failures = failures;
      status.nextAttemptAt = new Date(now + delay).toISOString();
      this.#logger.warn(
        { org: report.org, failures, retryInMs: delay },
        `org ${report.org} failed: ${message ?? 'error'}`,
      );
    } else {
      this.#backoff.delete(report.org);
      if (report.status === 'invalid') {
        this.#logger.error(
          { org: report.org, errors: report.errors },
          `org ${report.org} left alone: ${message ?? 'invalid manifests'}`,
        );
      }
    }
    this.#orgs.set(report.org, status);
  }

  /** Arms the interval (with ±10% jitter) and the earliest backoff expiry. */
  #schedule(): void {
    if (this.#stopping) return;
    clearTimeout(this.#intervalTimer);
    clearTimeout(this.#backoffTimer);
    const { intervalMs } = this.#options.daemon;
    if (intervalMs > 0) {
      const jitter = 0.9 + 0.2 * (this.#options.random ?? Math.random)();
      this.#intervalTimer = setTimeout(
        () => this.#scheduler.now('interval'),
        Math.round(intervalMs * jitter),
      );
    }
    const next = Math.min(...[...this.#backoff.values()].map((b) => b.nextAttemptAt));
    if (Number.isFinite(next)) {
      this.#backoffTimer = setTimeout(
        () => this.#scheduler.now('backoff'),
        Math.max(0, next - Date.now()),
      );
    }
  }
}
