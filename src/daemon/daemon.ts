import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { clientFromSettings } from '../api/from-settings.ts';
import type { DaemonSettings } from '../config/daemon-settings.ts';
import type { Settings } from '../config/settings.ts';
import type { Clock } from '../core/clock.ts';
import { health, intervalDelay, ownsOrg, readiness } from '../core/daemon-policy.ts';
import type { OrgReport } from '../core/report.ts';
import { reconcile } from '../engine/reconcile.ts';
import { systemClock } from '../system-clock.ts';
import { StateStore } from '../engine/state-store.ts';
import type { ManifestCache, OrgManifest } from '../manifests/load.ts';
import { DaemonMetrics } from './metrics.ts';
import { PassScheduler } from './scheduler.ts';
import { readSnapshot } from './snapshot.ts';
import { OrgBook } from './org-book.ts';
import type { DaemonStatus } from './status.ts';
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
  /** The time, for passes, backoff, readiness and the client (the real clock by default). */
  readonly clock?: Clock;
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
  readonly #clock: Clock;
  readonly #scheduler: PassScheduler;
  readonly #abort = new AbortController();
  /** Aborted when stopping: waits (backoff, Retry-After) end at once, nothing more is sent. */
  readonly #stopSending = new AbortController();
  readonly #orgs = new OrgBook();
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
    this.#clock = options.clock ?? systemClock;
    this.#scheduler = new PassScheduler(
      (reasons) => this.#pass(reasons),
      options.daemon.debounceMs,
      this.#clock,
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
    return readiness(
      this.#firstPassDone,
      this.#lastPassEnd,
      this.#options.daemon.intervalMs,
      this.#clock.now(),
    );
  }

  /** False when a pass has been running for far too long (the loop is wedged). */
  get healthy(): { healthy: boolean; reason?: string } {
    return health(
      this.#scheduler.passStartedAt,
      this.#options.daemon.intervalMs,
      this.#clock.now(),
    );
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
      orgs: this.#orgs.statuses(),
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
    this.#stopSending.abort(new Error('shutting down'));
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

  async #pass(reasons: readonly string[]): Promise<void> {
    const started = this.#clock.now();
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
      const { shard } = this.#options.daemon;
      const owned = snapshot.manifests.orgs.filter((org) => ownsOrg(org.org, shard, settings.orgs));
      for (const org of this.#orgs.keepOnly(owned)) this.metrics.forgetOrg(org);
      const token = await this.#options.readToken();
      const { candidates, due } = this.#orgs.select(
        owned,
        reasons,
        snapshot.manifests.changedFiles,
        token,
        this.#clock.now(),
      );
      counts = { ...counts, orgs: owned.length, skipped: candidates - due.length };
      const client = clientFromSettings(settings, {
        apiUrl: this.#options.apiUrl,
        getToken: () => token,
        logger,
        ca: this.#options.ca,
        signal: this.#abort.signal,
        stop: this.#stopSending.signal,
        events: this.metrics.clientEvents(),
        clock: this.#clock,
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
        counts.pending = this.#orgs.pending();
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
    const finished = this.#clock.now();
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
    const now = this.#clock.now();
    this.metrics.recordOrg(report, now / 1000);
    const { status, backoff } = this.#orgs.record(
      report,
      manifest,
      token,
      now,
      this.#options.daemon.intervalMs,
    );
    const message = status.lastError?.message;
    if (backoff !== undefined) {
      this.#logger.warn(
        { org: report.org, failures: backoff.failures, retryInMs: backoff.nextAttemptAt - now },
        `org ${report.org} failed: ${message ?? 'error'}`,
      );
    } else if (report.status === 'invalid') {
      this.#logger.error(
        { org: report.org, errors: report.errors },
        `org ${report.org} left alone: ${message ?? 'invalid manifests'}`,
      );
    }
  }

  /** Arms the interval (with ±10% jitter) and the earliest backoff expiry. */
  #schedule(): void {
    if (this.#stopping) return;
    clearTimeout(this.#intervalTimer);
    clearTimeout(this.#backoffTimer);
    const { intervalMs } = this.#options.daemon;
    if (intervalMs > 0) {
      this.#intervalTimer = setTimeout(
        () => this.#scheduler.now('interval'),
        intervalDelay(intervalMs, (this.#options.random ?? Math.random)()),
      );
    }
    const next = this.#orgs.nextAttemptAt();
    if (next !== undefined) {
      this.#backoffTimer = setTimeout(
        () => this.#scheduler.now('backoff'),
        Math.max(0, next - this.#clock.now()),
      );
    }
  }
}
