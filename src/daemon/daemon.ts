import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { clientFromSettings } from '../api/from-settings.ts';
import type { DaemonSettings } from '../config/daemon-settings.ts';
import type { Settings } from '../config/settings.ts';
import type { Clock } from '../core/clock.ts';
import {
  health,
  intervalDelay,
  nextWebhookPassAt,
  ownsOrg,
  readinessOf,
  settleDelay,
} from '../core/daemon-policy.ts';
import type { Scrub } from '../core/redact.ts';
import type { OrgReport, RunReport } from '../core/report.ts';
import { reconcile } from '../engine/reconcile.ts';
import { systemClock } from '../runtime/system-clock.ts';
import { StateStore } from '../engine/state-store.ts';
import type { ManifestCache, OrgManifest } from '../manifests/load.ts';
import { DaemonMetrics } from './metrics.ts';
import { PassScheduler } from './scheduler.ts';
import { Shutdown } from './shutdown.ts';
import { latestModification, readSnapshot } from './snapshot.ts';
import type { Notifier } from './notify.ts';
import { createNotifier, notifyFingerprint, type NotifyDeps } from './notify-setup.ts';
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
  /** The command's scrubber: no notification carries what it scrubs. */
  readonly scrub?: Scrub;
  /** Told every secret the daemon learns (the notify secret, notify URL credentials). */
  readonly addSecret?: (secret: string) => void;
  /** The notifications' sender and limits (tests replace them). */
  readonly notify?: NotifyDeps;
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
  readonly #shutdown: Shutdown;
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
  #lastPassError: string | undefined;
  #unattributed: DaemonStatus['errors'] = [];
  #stopping = false;
  /** File events so far, and when the last one came: a pass reads only settled files. */
  #fileEvents = 0;
  #lastFileEventAt: number | undefined;
  #lastFileEvent = '';
  /** The real path the last pass read: a pass reading another one reads a new revision. */
  #readRoot: string | undefined;
  /** Webhook passes: when the last started, whether one waits to start, and its timer. */
  #lastWebhookPassAt: number | undefined;
  #webhookQueued = false;
  #webhookTimer: NodeJS.Timeout | undefined;
  #webhookRunAt = 0;
  /** Notifications (none without --notify-url). */
  #notifier: Notifier | undefined;

  constructor(options: DaemonOptions) {
    this.#options = options;
    this.#logger = options.logger;
    this.#clock = options.clock ?? systemClock;
    this.#shutdown = new Shutdown(this.#clock);
    this.#scheduler = new PassScheduler(
      (reasons) => this.#pass(reasons),
      options.daemon.debounceMs,
      this.#clock,
    );
  }

  /** Loads the state, starts watching and runs the first pass (not awaited). */
  async start(): Promise<void> {
    const { settings, cwd } = this.#options;
    // Before the state's lock is taken: a notify secret that cannot be read stops the start.
    this.#notifier = await createNotifier({
      settings: this.#options.daemon,
      cwd,
      clock: this.#clock,
      logger: this.#logger,
      metrics: this.metrics,
      scrub: this.#options.scrub,
      addSecret: this.#options.addSecret,
      deps: this.#options.notify,
    });
    this.#state = await StateStore.load(
      path.resolve(cwd, settings.state),
      this.#logger,
      this.#options.apiUrl.href,
      { lockTimeoutMs: settings.stateLockTimeoutMs },
    );
    this.#watcher = new ManifestWatcher({
      root: settings.manifests,
      cwd,
      logger: this.#logger,
      onFileEvent: (reason) => {
        this.#fileEvents++;
        this.#lastFileEventAt = this.#clock.now();
        this.#lastFileEvent = reason;
        this.#scheduler.debounced(reason);
      },
      onRetarget: (resolution) => {
        this.#logger.info(
          { revision: resolution.revision, path: resolution.realRoot },
          'manifests moved to a new revision',
        );
        // A new revision is complete before its link moves: edits of the old one do not delay it.
        this.#lastFileEventAt = undefined;
        this.#scheduler.now(`revision ${resolution.revision ?? resolution.realRoot}`);
      },
    });
    await this.#watcher.start();
    this.#scheduler.now('start');
  }

  /** Starts a pass now (SIGHUP). */
  trigger(reason: string): void {
    this.#scheduler.now(reason);
  }

  /**
   * A webhook: starts a pass at once when none started from a webhook within
   * `--webhook-min-interval`; otherwise it joins the next webhook pass, which starts when that
   * interval is over. Returns when that pass is due (ms since the epoch) and whether it was
   * already waiting.
   */
  webhook(): { runAt: number; joined: boolean } {
    const now = this.#clock.now();
    if (this.#webhookQueued) return { runAt: now, joined: true };
    if (this.#webhookTimer !== undefined) return { runAt: this.#webhookRunAt, joined: true };
    const at = nextWebhookPassAt(
      this.#lastWebhookPassAt,
      now,
      this.#options.daemon.webhookMinIntervalMs,
    );
    if (at <= now) {
      this.#webhookQueued = true;
      this.#scheduler.now('webhook');
      return { runAt: now, joined: false };
    }
    this.#webhookRunAt = at;
    this.#webhookTimer = setTimeout(() => {
      this.#webhookTimer = undefined;
      this.#webhookQueued = true;
      this.#scheduler.now('webhook');
    }, at - now);
    return { runAt: at, joined: false };
  }

  /**
   * Ready once the first full pass finished, while passes keep ending and can read the
   * manifests, and while at least one org is reconciled without error (core/daemon-policy.ts).
   */
  get ready(): { ready: boolean; reason?: string } {
    return readinessOf({
      firstPassDone: this.#firstPassDone,
      lastPassEnd: this.#lastPassEnd,
      lastPassError: this.#lastPassError,
      intervalMs: this.#options.daemon.intervalMs,
      now: this.#clock.now(),
      orgs: this.#orgs.outcomes(),
      stateWriteError: this.#state?.writeError,
    });
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
      stateFile: { path: this.#state?.file ?? null, writeError: this.#state?.writeError ?? null },
      orgs: this.#orgs.statuses(),
      ...(this.#notifier === undefined ? {} : { notifications: this.#notifier.status() }),
    };
  }

  /** Resolves when no pass runs or is pending (for tests). */
  idle(): Promise<void> {
    return this.#scheduler.idle();
  }

  /**
   * Graceful stop: no new triggers or rounds; every wait (Retry-After, a throttle pause) ends at
   * once, and requests being retried are cancelled (shutdown.ts); a healthy pass in flight may
   * finish within the shutdown timeout (then its requests are aborted); the state is written.
   */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    clearTimeout(this.#intervalTimer);
    clearTimeout(this.#backoffTimer);
    clearTimeout(this.#webhookTimer);
    const stopped = this.#scheduler.stop();
    this.#shutdown.begin();
    await this.#watcher?.close();
    const timeout = sleep(this.#options.daemon.shutdownTimeoutMs, 'timeout', { ref: false });
    if ((await Promise.race([stopped.then(() => 'done'), timeout])) === 'timeout') {
      this.#logger.warn(
        { shutdownTimeoutMs: this.#options.daemon.shutdownTimeoutMs },
        'shutdown timeout: aborting the requests in flight',
      );
      this.#shutdown.abortRequests();
      await stopped;
    }
    await this.#state?.save();
    // Bounded: a receiver that is down or hung holds the stop for the drain time at most.
    await this.#notifier?.close();
  }

  /**
   * Waits until no file event came for `--settle`: a file edited in place is read only once its
   * writer is done, even one that pauses between writes. (A git-sync swap makes no file event:
   * its worktree is complete before the link moves, so it is read at once.) Returns the time it
   * waited, in ms.
   */
  async #settle(): Promise<number> {
    const { settleMs } = this.#options.daemon;
    const began = this.#clock.now();
    let warnAt = began + 30_000;
    for (;;) {
      const now = this.#clock.now();
      const delay = settleDelay(this.#lastFileEventAt, now, settleMs);
      if (delay === 0 || this.#shutdown.stopping.aborted) return now - began;
      if (now >= warnAt) {
        warnAt = now + 30_000;
        this.#logger.warn(
          { settleMs, lastEvent: this.#lastFileEvent },
          `manifests keep changing (last: ${this.#lastFileEvent}); waiting for ${settleMs} ms without a change`,
        );
      }
      await this.#clock.sleep(delay, this.#shutdown.stopping).catch(() => undefined);
    }
  }

  /**
   * Reads the manifests once their files have settled: a file event during the read means wait,
   * and read again. Returns what changed over every read, and the time spent waiting; undefined
   * when the daemon stops meanwhile.
   */
  async #readSettled(): Promise<
    | {
        snapshot: Awaited<ReturnType<typeof readSnapshot>>;
        changedFiles: Set<string> | undefined;
        settleWaitMs: number;
      }
    | undefined
  > {
    const { settings, cwd } = this.#options;
    let settleWaitMs = 0;
    let timesChecked = false;
    // What changed over every read of this pass (each read updates the cache).
    let changedFiles: Set<string> | undefined = new Set();
    for (;;) {
      settleWaitMs += await this.#settle();
      if (this.#shutdown.stopping.aborted) return undefined;
      const events = this.#fileEvents;
      const snapshot = await readSnapshot({
        root: settings.manifests,
        cwd,
        maxFileBytes: settings.maxFileBytes,
        cache: this.#cache,
      });
      const changedNow = snapshot.manifests.changedFiles;
      if (changedNow === undefined) changedFiles = undefined;
      else for (const file of changedNow) changedFiles?.add(file);
      if (events !== this.#fileEvents) continue;
      // A write the watcher has not reported yet: a changed file of the same revision written
      // within the settle time counts as an event (once per pass, so a clock skew cannot hold
      // it). A new revision's files are complete, however new.
      if (!timesChecked && snapshot.realRoot === this.#readRoot) {
        timesChecked = true;
        const written = await latestModification(changedNow ?? [], cwd);
        const now = this.#clock.now();
        if (written !== undefined && now - written < this.#options.daemon.settleMs) {
          this.#lastFileEventAt = Math.max(this.#lastFileEventAt ?? 0, Math.min(written, now));
          continue;
        }
      }
      return { snapshot, changedFiles, settleWaitMs };
    }
  }

  async #pass(reasons: readonly string[]): Promise<void> {
    const started = this.#clock.now();
    const logger = this.#logger;
    if (reasons.includes('webhook')) {
      this.#lastWebhookPassAt = started;
      this.#webhookQueued = false;
    }
    let result: 'success' | 'partial' | 'error' = 'success';
    let passError: string | undefined;
    /** Time spent waiting for files to settle: not part of the pass's own duration. */
    let settleWaitMs = 0;
    let counts = {
      orgs: 0,
      skipped: 0,
      applied: 0,
      failed: 0,
      failedChanges: 0,
      pending: 0,
      invalid: 0,
      unattributed: 0,
    };
    try {
      const { settings } = this.#options;
      const read = await this.#readSettled();
      if (read === undefined) return;
      const { snapshot, changedFiles } = read;
      settleWaitMs = read.settleWaitMs;
      this.#readRoot = snapshot.realRoot;
      if (snapshot.revision !== this.#revision || this.#passes === 0) {
        this.#revision = snapshot.revision;
        this.metrics.setRevision(snapshot.revision);
      }
      this.#unattributed = snapshot.manifests.unattributed.map(
        ({ org: _org, ...problem }) => problem,
      );
      for (const problem of this.#unattributed) {
        logger.warn(
          { file: problem.file, line: problem.line, column: problem.column, path: problem.path },
          `${problem.file}:${problem.line}:${problem.column} ${problem.path ? `${problem.path}: ` : ''}${problem.message} (belongs to no org)`,
        );
      }
      const { shard } = this.#options.daemon;
      const owned = snapshot.manifests.orgs.filter((org) => ownsOrg(org.org, shard, settings.orgs));
      for (const org of this.#orgs.keepOnly(owned)) this.metrics.forgetOrg(org);
      const token = await this.#options.readToken();
      this.#notifier?.addSecret(token);
      const { candidates, due } = this.#orgs.select(
        owned,
        reasons,
        changedFiles,
        token,
        this.#clock.now(),
      );
      counts = { ...counts, orgs: owned.length, skipped: candidates - due.length };
      const client = clientFromSettings(settings, {
        apiUrl: this.#options.apiUrl,
        getToken: () => token,
        logger,
        ca: this.#options.ca,
        signal: this.#shutdown.abort,
        stop: this.#shutdown.stopping,
        events: this.#shutdown.events(this.metrics.clientEvents()),
        clock: this.#clock,
      });
      try {
        const report = await reconcile({
          manifests: { ...snapshot.manifests, orgs: due },
          client,
          state: this.#state as StateStore,
          logger,
          dryRun: false,
          signal: this.#shutdown.stopping,
          onRoundFailed: (org) => this.#noteFailedRound(org),
          onOrgDone: (org) =>
            this.#recordOrg(
              org,
              due.find((o) => o.org === org.org),
              token,
            ),
        });
        // Orgs, not changes: every owned org's latest outcome (those backing off included).
        const outcomes = this.#orgs.outcomes();
        counts.applied = report.summary.applied;
        counts.failedChanges = report.summary.failed + report.summary.notConverged;
        counts.failed = outcomes.failed;
        counts.invalid = outcomes.invalid;
        counts.unattributed = report.errors.length;
        counts.pending = this.#orgs.pending();
        this.#notifyPass(report, due, owned);
        if (
          report.orgs.some((o) => o.status !== 'ok') ||
          report.errors.length > 0 ||
          outcomes.failed + outcomes.invalid > 0
        )
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
    this.#lastPassError = passError;
    this.#lastPassEnd = finished;
    this.#lastPass = {
      startedAt: new Date(started).toISOString(),
      finishedAt: new Date(finished).toISOString(),
      durationMs: finished - started - settleWaitMs,
      settleWaitMs,
      result,
      trigger: [...reasons].slice(0, 20),
      ...(passError === undefined ? {} : { error: passError }),
    };
    this.metrics.passes.inc({ result });
    this.metrics.passDuration.observe((finished - started - settleWaitMs) / 1000);
    this.metrics.ready.set(this.ready.ready ? 1 : 0);
    const line =
      `pass ${result}: ${counts.applied} applied, ${counts.failed} org(s) failed, ` +
      `${counts.invalid} invalid org(s), ${counts.pending} pending, of ${counts.orgs} org(s)` +
      (counts.unattributed > 0 ? `; ${counts.unattributed} problem(s) belong to no org` : '');
    const fields = {
      result,
      durationMs: finished - started - settleWaitMs,
      revision: this.#revision ?? null,
      trigger: reasons.slice(0, 5),
      settleWaitMs,
      ...counts,
    };
    if (result === 'success') logger.info(fields, line);
    else logger.warn(fields, line);
    this.#schedule();
  }

  /** Queues the notifications of a pass (core/notify-events.ts decides which); never waits. */
  #notifyPass(report: RunReport, due: readonly OrgManifest[], owned: readonly OrgManifest[]): void {
    // A pass cut short by a stop reports aborted requests, not what the orgs are.
    if (this.#notifier === undefined || this.#shutdown.stopping.aborted) return;
    this.#notifier.notePass({
      owned: owned.map((org) => org.org),
      reports: report.orgs,
      fingerprints: new Map(due.map((org) => [org.org, notifyFingerprint(org)])),
      // The problems that belong to no org, as the report gives them.
      unattributed: report.errors,
      revision: this.#revision ?? null,
      time: new Date(this.#clock.now()).toISOString(),
    });
  }

  /** An org's round failed and another follows: /status and readiness show it now. */
  #noteFailedRound(report: OrgReport): void {
    this.#orgs.noteFailedRound(report, this.#clock.now());
    this.metrics.ready.set(this.ready.ready ? 1 : 0);
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
    this.metrics.ready.set(this.ready.ready ? 1 : 0);
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
